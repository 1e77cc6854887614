#!/bin/sh
# wp_trials.sh — Wiegreffe & Pinter's (2019) tests on a built-in task
# (docs/RESULTS.md, "Attention on trial", W&P's tests): with the same data
# and budget,
#   base       the model whose attention is on trial (seed 1)
#   seeds      the same recipe from seeds 2 and 3 (the seed variance)
#   uniform    --uniform-attention (the uniform baseline)
#   frozen-*   --frozen-attention --reference M: a fresh model trained with the
#              attention of M (the base, the uniform model, an adversary) as
#              given (the diagnostic transfer), and evaluated so (--frozen)
#   adv-L      --adversarial L --reference base: outputs kept, attention pushed
#              away (W&P's adversary), for L in 0.1 1 10
# then `attend compare` of each against the model it refers to, on DEV (a TSV
# of held-out pairs of the task; "-": 60 random strings of a-h, lengths 2-8,
# written to OUTDIR/dev.tsv with their copy or reversal), and `attend trial`
# (Jain & Wallace's importance agreement and adversarial attention) on the base.
#
#   sh tools/wp_trials.sh TASK DEV [OUTDIR] [STEPS]
#   e.g. sh tools/wp_trials.sh reverse tests/cli/reverse_dev.tsv /tmp/attend-wp-reverse 1000
#        sh tools/wp_trials.sh copy - /tmp/attend-wp-copy 1000
#
# Runs with one thread under nice 15; expects build/attend. Prints the
# numbers; models and logs stay in OUTDIR.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
task=${1:?task (reverse or copy)}
dev=${2:?a TSV of held-out pairs of the task}
out=${3:-/tmp/attend-wp-$task}
steps=${4:-1500}
attend=$here/build/attend
mkdir -p "$out"
if [ "$dev" = - ]; then
    dev=$out/dev.tsv
    /usr/bin/python3 - "$task" "$dev" <<'PY'
import random, sys
rng = random.Random(2)
with open(sys.argv[2], "w") as f:
    for _ in range(60):
        s = "".join(rng.choice("abcdefgh") for _ in range(rng.randint(2, 8)))
        f.write("%s\t%s\n" % (s, s if sys.argv[1] == "copy" else s[::-1]))
PY
fi
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1
common="--task $task --symbols 8 --min-len 2 --max-len 8 --count 2000 --dev-count 200
        --emb 16 --hidden 32 --dec-hidden 64 --decoder luong --score general
        --batch 32 --steps $steps"
train() { # NAME SEED [OPTIONS...]
    name=$1 seed=$2
    shift 2
    # shellcheck disable=SC2086
    nice -n 15 "$attend" train $common --seed "$seed" "$@" --out "$out/$name.safetensors" >"$out/$name.log" 2>&1 ||
        { cat "$out/$name.log"; exit 1; }
    echo "$name: $(grep '^dev\|^train (no --dev)\|^eval' "$out/$name.log" | tail -1)"
}
cmp() { nice -n 15 "$attend" compare "$@" --data "$dev"; }

train base 1
train seed2 2
train seed3 3
train uniform 4 --uniform-attention
for l in 0.1 1 10; do train "adv-$l" 5 --adversarial "$l" --reference "$out/base.safetensors"; done
train frozen-base 6 --frozen-attention --reference "$out/base.safetensors"
train frozen-uniform 6 --frozen-attention --reference "$out/uniform.safetensors"
train frozen-adv-10 6 --frozen-attention --reference "$out/adv-10.safetensors"

echo "== against the base: seeds, uniform, adversaries"
cmp "$out/base.safetensors" "$out/seed2.safetensors" "$out/seed3.safetensors" "$out/uniform.safetensors" \
    "$out/adv-0.1.safetensors" "$out/adv-1.safetensors" "$out/adv-10.safetensors"
echo "== diagnostic transfer (each frozen model with its reference's attention)"
cmp "$out/base.safetensors" "$out/frozen-base.safetensors" --frozen
cmp "$out/uniform.safetensors" "$out/frozen-uniform.safetensors" --frozen
cmp "$out/adv-10.safetensors" "$out/frozen-adv-10.safetensors" --frozen
echo "== Jain & Wallace's trials on the base"
nice -n 15 "$attend" trial "$out/base.safetensors" --data "$dev" --epsilon 0.001,0.01,0.05 --report "$out/trial" |
    grep -v '^ *$' | tail -12
