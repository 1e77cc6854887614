#!/bin/sh
# g2p_recipe.sh — makes every shipped G2P model and measures them (issue 14
# part 7; docs/G2P.md, "The shipped models", has the numbers this printed).
#
#   sh tools/g2p_recipe.sh [WORK_DIR]          (ATTEND=path/to/attend; default build/attend)
#
# 1. fetches CMUdict without stress (Debian) and with stress (npm) if missing;
# 2. trains the two models of the ensemble side by side, one core each (about
#    85 minutes on 2 quiet cores): a bi-GRU 2x192 encoder, a 384-wide Bahdanau
#    GRU decoder, additive attention 192, Adam lr 1e-3 with a cosine decay over
#    15 epochs; A without dropout (seed 2), B with --dropout 0.1 (seed 3). Each
#    keeps its best epoch by dev WER (--out); A, the better on dev, is the
#    default model;
# 3. trains the stress model: A's recipe (seed 2) with --keep-stress (issue 29;
#    about 1.5 hours on one quiet core, 2 hours and more on a shared one);
# 4. stores them as the repository ships them: A as fp16 (the default model,
#    models/g2p-cmudict.safetensors) and int8 made from that fp16 file, B as
#    int8 (the ensemble's second member), the stress model as fp16;
# 5. prints dev/test PER and WER of each, greedy and beam 5, and of the ensemble.
# Training is deterministic for a seed: the same binary gives the same files.
# WORK_DIR (default g2p-runs) keeps the float models, logs and checkpoints; a
# model already there is not retrained.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
A=${ATTEND:-$here/build/attend}
W=${1:-g2p-runs}
D=$here/data/g2p/cmudict-en-us.dict
DS=$here/data/g2p/cmudict-stress.dict
M=$here/models
mkdir -p "$W"
[ -f "$D" ] || sh "$here/tools/get_cmudict.sh"
[ -f "$DS" ] || sh "$here/tools/get_cmudict.sh" --stress
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
SHAPE="--hidden 192 --layers 2 --dec-hidden 384 --attn 192 --lr 0.001"

train() { # NAME DICT OPTIONS...: trains WORK_DIR/NAME.safetensors unless it is there
    name=$1 dict=$2
    shift 2
    [ -f "$W/$name.safetensors" ] && return 0
    # shellcheck disable=SC2086
    "$A" g2p train --dict "$dict" --patience 0 --max-minutes 0 "$@" --out "$W/$name.safetensors" --checkpoint "$W/$name.ckpt" --overwrite \
        --checkpoint-every 500 --log-every 500 >"$W/$name.log" 2>"$W/$name.err"
    grep '^trained:' "$W/$name.log"
}
# shellcheck disable=SC2086
train a "$D" $SHAPE --epochs 15 --seed 2 &
pa=$!
# shellcheck disable=SC2086
train b "$D" $SHAPE --epochs 15 --dropout 0.1 --seed 3 &
pb=$!
wait $pa
wait $pb
# shellcheck disable=SC2086
train stress "$DS" $SHAPE --epochs 15 --seed 2 --keep-stress

"$A" quantize "$W/a.safetensors" --to f16 --out "$M/g2p-cmudict.safetensors"
"$A" quantize "$M/g2p-cmudict.safetensors" --to int8 --out "$M/g2p-cmudict-int8.safetensors"
"$A" quantize "$W/b.safetensors" --to f16 --out "$W/b-f16.safetensors"
"$A" quantize "$W/b-f16.safetensors" --to int8 --out "$M/g2p-cmudict-b-int8.safetensors"
"$A" quantize "$W/stress.safetensors" --to f16 --out "$M/g2p-cmudict-stress.safetensors"

for m in "$W/a.safetensors" "$M/g2p-cmudict.safetensors" "$M/g2p-cmudict-int8.safetensors" "$W/b.safetensors" \
    "$M/g2p-cmudict-b-int8.safetensors" "$M/g2p-cmudict.safetensors,$M/g2p-cmudict-b-int8.safetensors" \
    "$M/g2p-cmudict-int8.safetensors,$M/g2p-cmudict-b-int8.safetensors"; do
    "$A" g2p eval --model "$m" --dict "$D" --beam 5
done
"$A" g2p eval --model "$M/g2p-cmudict-stress.safetensors" --dict "$DS" --beam 5
