#!/bin/sh
# g2p_transformer.sh — G2P with a Transformer at the shipped recipe's training
# budget (issue 27, item 5; docs/G2P.md, "A Transformer at the same budget").
#
#   sh tools/g2p_transformer.sh [--smoke] [WORK_DIR]     (ATTEND=path/to/attend; default build/attend)
#
# The shipped default model (A, docs/G2P.md "The shipped models") is a bi-GRU
# 2x192 encoder and a Bahdanau GRU decoder of 384: 2 257 771 parameters,
# trained with Adam at lr 1e-3, warm-up 500 steps, cosine decay to 1e-4 over
# 15 epochs of 64 pronunciations (28 365 steps), clip 1, no dropout, seed 2,
# the best epoch by dev WER kept. This script trains a Transformer encoder and
# a Transformer decoder with exactly that budget and schedule (the same
# epochs, batch, learning rates, warm-up, decay, clip, seed, selection):
# width 192, 4 heads, feed-forward 768, 2 encoder + 2 decoder layers, pre-norm,
# sinusoidal positions: 2 101 291 parameters (93% of A's). Only the
# architecture differs, so the comparison asks the issue's question (does
# g2p-seq2seq's finding, its Transformer ahead of its LSTM on CMUdict, hold
# here?) and nothing else.
#
# Resumable: the checkpoint WORK_DIR/tf.ckpt is written every 500 steps (and
# on SIGINT/SIGTERM, and at the end); running the script again resumes from it
# bit for bit (g2p train --resume), so a killed run loses at most 500 steps.
# Deterministic: the same binary and seed give the same files. When the model
# is trained (its log has the 'trained:' line), the script measures it against
# the shipped model: dev/test PER and WER (greedy and beam 5), file sizes
# (float32, and fp16/int8 made by attend quantize), and g2p bench (batch 1,
# greedy, one thread) on the same words, writing WORK_DIR/report.txt.
#
# --smoke: the same steps in seconds (ctest g2p_transformer_smoke): a tiny
# model of the same kinds on data/g2p/cmudict-sample.dict, 4 epochs, a
# checkpoint every 5 steps (the test stops it with SIGTERM and runs the script
# again: the model must be the one an uninterrupted run writes).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
A=${ATTEND:-$here/build/attend}
smoke=0
if [ "${1:-}" = "--smoke" ]; then smoke=1; shift; fi
W=${1:-g2p-tf}
mkdir -p "$W"
W=$(cd "$W" && pwd)
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
if [ "$smoke" = 1 ]; then
    D=$here/data/g2p/cmudict-sample.dict
    SHAPE="--emb 16 --heads 2 --hidden 32 --dec-hidden 32 --layers 1 --dec-layers 2"
    BUDGET="--epochs 4 --batch 32 --lr 0.003 --warmup 10 --min-lr 0.0001 --clip 1 --seed 2"
    EVERY=5 BENCH=20
else
    D=$here/data/g2p/cmudict-en-us.dict
    [ -f "$D" ] || sh "$here/tools/get_cmudict.sh"
    SHAPE="--emb 192 --heads 4 --hidden 768 --dec-hidden 768 --layers 2 --dec-layers 2"
    BUDGET="--epochs 15 --batch 64 --lr 0.001 --warmup 500 --min-lr 0.0001 --clip 1 --seed 2"
    EVERY=500 BENCH=2000
fi
if ! { [ -f "$W/tf.log" ] && grep -q '^trained:' "$W/tf.log"; }; then
    resume=
    if [ -f "$W/tf.ckpt" ]; then resume="--resume $W/tf.ckpt"; else rm -f "$W/tf.log" "$W/tf.err"; fi
    # appended: a resumed run's lines follow the earlier ones'. In the
    # background with its pid in WORK_DIR/tf.pid, so that SIGTERM or SIGINT to
    # this script reaches it (it writes its checkpoint and stops).
    # shellcheck disable=SC2086
    "$A" --threads 1 g2p train --dict "$D" --encoder transformer --decoder transformer $SHAPE $BUDGET \
        --patience 0 --max-minutes 0 --out "$W/tf.safetensors" --checkpoint "$W/tf.ckpt" \
        --checkpoint-every $EVERY --log-every $EVERY $resume --overwrite >>"$W/tf.log" 2>>"$W/tf.err" &
    child=$!
    echo "$child" >"$W/tf.pid"
    trap 'kill -TERM "$child" 2>/dev/null' TERM INT
    rc=0
    wait "$child" || rc=$?
    if [ "$rc" -gt 128 ] && kill -0 "$child" 2>/dev/null; then # the wait was cut by a signal: the child's own status
        rc=0
        wait "$child" || rc=$?
    fi
    trap - TERM INT
    rm -f "$W/tf.pid"
    if [ "$rc" -ne 0 ]; then
        echo "g2p_transformer.sh: g2p train stopped (exit $rc; $W/tf.log): run the script again to resume" >&2
        exit "$rc"
    fi
fi

# the measurements: this model and the shipped one on the same dictionary and words
M=$here/models/g2p-cmudict.safetensors
"$A" quantize "$W/tf.safetensors" --to f16 --out "$W/tf-f16.safetensors" >/dev/null
"$A" quantize "$W/tf-f16.safetensors" --to int8 --out "$W/tf-int8.safetensors" >/dev/null
{
    grep '^model:\|^training:\|^trained:\|^epoch' "$W/tf.log"
    for f in "$W/tf.safetensors" "$W/tf-f16.safetensors" "$W/tf-int8.safetensors" "$M"; do
        echo "size: $(wc -c <"$f") B $f"
    done
    for m in "$W/tf.safetensors" "$W/tf-f16.safetensors" "$W/tf-int8.safetensors" "$M"; do
        echo "eval: $m"
        "$A" --threads 1 g2p eval --model "$m" --dict "$D" --beam 5
    done
    for m in "$W/tf.safetensors" "$M"; do
        echo "bench: $m"
        "$A" --threads 1 g2p bench --model "$m" --dict "$D" --words $BENCH 2>&1
    done
} >"$W/report.txt" 2>&1
cat "$W/report.txt"
