#!/usr/bin/env bash
# guide_demo.sh — guided alignment on the reversal task (docs/RESULTS.md,
# "Guided alignment"): for each seed, one run without and one per LAMBDAS
# value with --guided-alignment, the same data, model, schedule and step
# budget, evaluated on the 500 dev pairs every EVERY steps. Per run it prints
# the first evaluated step whose greedy full-sequence accuracy reaches 99%
# ("-" if none does), the final accuracy and attention entropy, and how
# often the attention's argmax is the mirrored position: over the greedy
# outputs of 200 fixed strings (lengths 5-12 over a..j) that are their exact
# reversal, the share of output steps t whose largest weight is on source
# position L-1-t ("diag"). The built-in reverse task carries that
# anti-diagonal alignment itself (target token j comes from position L-1-j).
#
# Usage: bash tools/guide_demo.sh [ATTEND_BINARY] [OUT_DIR]
#   env: SEEDS ("1 2 3"), LAMBDAS ("1"), STEPS (300), EVERY (10),
#        REUSE=1 (summarise the runs whose logs and models are already in OUT_DIR,
#        train only the missing ones)
# Runs one training at a time on one thread (ATTEND_THREADS=1,
# OPENBLAS_NUM_THREADS=1) at nice 10; logs and models stay in OUT_DIR.
# Needs /usr/bin/python3 (standard library only) to read the JSON alignments.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-./build/attend}
out=${2:-build/guide-demo}
seeds=${SEEDS:-1 2 3}
lambdas=${LAMBDAS:-1}
steps=${STEPS:-300}
every=${EVERY:-10}
mkdir -p "$out"
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1

# 200 fixed test strings: a linear congruential generator over a..j, lengths 5..12
awk 'BEGIN { r = 11; for (i = 0; i < 200; i++) { r = (r * 1103515245 + 12345) % 2147483648
     n = 5 + int(r / 65536) % 8; s = ""; for (j = 0; j < n; j++) { r = (r * 1103515245 + 12345) % 2147483648
     s = s substr("abcdefghij", 1 + int(r / 65536) % 10, 1) } print s } }' >"$out/strings.txt"

# first_step LOG: the first "eval step N" with greedy-seq >= 0.99 (the final
# "dev" line counts as step STEPS), else "-"
first_step() {
    awk -v last="$steps" '
        /^eval step [0-9]+:/ { s = $3; sub(":", "", s)
                               for (i = 1; i < NF; i++) if ($i == "greedy-seq" && $(i + 1) >= 0.99 && !f) f = s }
        /^dev:/ { for (i = 1; i < NF; i++) if ($i == "greedy-seq" && $(i + 1) >= 0.99 && !f) f = last }
        END { print f ? f : "-" }' "$1"
}
# dev_field LOG NAME: NAME's value on the final "dev" line
dev_field() { awk -v k="$2" '/^dev:/ { for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1"; }
# diag MODEL: the anti-diagonal share of the argmaxes (see above)
diag() {
    "$bin" decode "$1" "$out/strings.txt" --align --format jsonl | /usr/bin/python3 -c '
import json, sys
hit = steps = exact = 0
for line in sys.stdin:
    o = json.loads(line)
    src, h = o["source"], o["hypotheses"][0]
    if h["output"] != src[::-1]:
        continue
    exact += 1
    L = len(src)
    for t, row in enumerate(h["alignment"][:L]):
        steps += 1
        hit += max(range(L), key=lambda s: row[s]) == L - 1 - t
print("%.4f (%d/%d)" % (hit / steps if steps else 0, exact, 200))'
}

printf '%-5s %-7s %-13s %-10s %-9s %-20s %s\n' seed lambda "steps to 99%" "final acc" entropy "diag (exact)" \
    "train s"
for seed in $seeds; do
    for g in 0 $lambdas; do
        base="$out/reverse-seed$seed-ga$g"
        if [ "${REUSE:-0}" != 1 ] || [ ! -s "$base.log" ]; then
            args=(train --task reverse --symbols 10 --min-len 5 --max-len 12 --steps "$steps" --warmup 50
                  --decay $((steps - 50)) --min-lr 1e-4 --eval-every "$every" --seed "$seed" --out "$base.safetensors")
            [ "$g" = 0 ] || args+=(--guided-alignment "$g")
            nice -n 10 "$bin" "${args[@]}" >"$base.log" 2>&1
        fi
        secs=$(awk '/^trained:/ { print $5 }' "$base.log")
        printf '%-5s %-7s %-13s %-10s %-9s %-20s %s\n' "$seed" "$g" "$(first_step "$base.log")" \
            "$(dev_field "$base.log" greedy-seq)" "$(dev_field "$base.log" entropy)" "$(diag "$base.safetensors")" \
            "$secs"
    done
done
