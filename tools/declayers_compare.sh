#!/bin/sh
# declayers_compare.sh — issue 14 parts 3 and 4: one vs two decoder layers,
# without and with scheduled sampling, on the reverse task at equal steps
# (same data, seed, schedule and budget). Prints the final dev line of each.
#   sh tools/declayers_compare.sh [STEPS] [SEED] [MAX_LEN]
# from the repository root, after building ./build (one thread, nice 10).
# docs/RESULTS.md ("Deeper decoders and scheduled sampling") has the numbers.
set -e
STEPS=${1:-600}
SEED=${2:-1}
MAXLEN=${3:-25}
A=./build/attend
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
TMP=${TMPDIR:-/tmp}/declayers_compare.$$
mkdir -p "$TMP"
for cfg in "1 0" "2 0" "1 0.25" "2 0.25"; do
    set -- $cfg
    start=$(date +%s)
    nice -n 10 $A train --task reverse --symbols 20 --min-len 1 --max-len "$MAXLEN" --count 20000 \
        --steps "$STEPS" --batch 32 --seed "$SEED" --eval-every 0 --dec-layers "$1" \
        --sampling-prob "$2" --sampling-ramp $((STEPS / 2)) --out "$TMP/m.safetensors" > "$TMP/out.txt" 2>/dev/null
    params=$(grep -o '[0-9]* parameters' "$TMP/out.txt" | head -1)
    echo "dec_layers $1 sampling_prob $2 ($params, $(( $(date +%s) - start )) s): $(grep '^dev:' "$TMP/out.txt")"
done
rm -rf "$TMP"
