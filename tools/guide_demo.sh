#!/usr/bin/env bash
# guide_demo.sh — guided alignment on the reversal task (docs/RESULTS.md,
# "Guided alignment"): for each seed, one run without and one with
# --guided-alignment LAMBDA, the same data, model, schedule and step budget,
# evaluated on the 500 dev pairs every EVERY steps; prints the first evaluated
# step whose greedy full-sequence accuracy reaches 99% ("-" if none does) and
# the final accuracy. The built-in reverse task carries its anti-diagonal
# alignment (target token j comes from source position L-1-j).
#
# Usage: bash tools/guide_demo.sh [ATTEND_BINARY] [OUT_DIR]
#   env: SEEDS ("1 2 3"), LAMBDA (1), STEPS (600), EVERY (10)
# Runs one training at a time on one thread (ATTEND_THREADS=1,
# OPENBLAS_NUM_THREADS=1) at nice 10; the logs stay in OUT_DIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./build/attend}
out=${2:-build/guide-demo}
seeds=${SEEDS:-1 2 3}
lambda=${LAMBDA:-1}
steps=${STEPS:-600}
every=${EVERY:-10}
mkdir -p "$out"
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1

# first_step LOG: the first "eval step N" line with greedy-seq >= 0.99, else the
# final "dev" line's when it does, else "-"
first_step() {
    awk '/^eval step [0-9]+:/ { s = $3; sub(":", "", s);
                                 for (i = 1; i < NF; i++) if ($i == "greedy-seq" && $(i + 1) >= 0.99 && !f) f = s }
         /^dev:/ { for (i = 1; i < NF; i++) if ($i == "greedy-seq" && $(i + 1) >= 0.99 && !f) f = "'"$steps"'" }
         END { print f ? f : "-" }' "$1"
}
final_acc() { awk '/^dev:/ { for (i = 1; i < NF; i++) if ($i == "greedy-seq") print $(i + 1) }' "$1"; }

printf '%-6s %-8s %-18s %-14s %s\n' seed lambda "steps to 99%" "final seq acc" "train seconds"
for seed in $seeds; do
    for g in 0 "$lambda"; do
        log="$out/reverse-seed$seed-ga$g.log"
        args=(train --task reverse --symbols 10 --min-len 5 --max-len 12 --steps "$steps" --warmup 50
              --decay $((steps - 50)) --min-lr 1e-4 --eval-every "$every" --seed "$seed"
              --out "$out/reverse-seed$seed-ga$g.safetensors")
        [ "$g" = 0 ] || args+=(--guided-alignment "$g")
        nice -n 10 "$bin" "${args[@]}" >"$log" 2>&1
        secs=$(awk '/^trained:/ { print $5 }' "$log")
        printf '%-6s %-8s %-18s %-14s %s\n' "$seed" "$g" "$(first_step "$log")" "$(final_acc "$log")" "$secs"
    done
done
