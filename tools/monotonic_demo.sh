#!/bin/sh
# monotonic_demo.sh — monotonic attention (Raffel et al. 2017) next to soft
# attention at equal budgets (docs/RESULTS.md, "Monotonic attention"):
#   copy  the built-in copy task: the same `attend train` twice, with and
#         without --monotonic (same steps, data and seed), then `attend eval`
#         on 1 000 fresh pairs and the share of greedy alignments that never
#         move left (tools/monotonic_share.py) on 500 random sources
#   g2p   `attend g2p train` twice on CMUdict (tools/get_cmudict.sh), side by
#         side, a short budget of one epoch (1 891 steps of 64: warm-up 200,
#         cosine decay over the rest), then `attend g2p eval` on the dev part
#         (greedy) and the never-left share on its words
#
#   sh tools/monotonic_demo.sh [copy|g2p|all] [OUTDIR]    (all, /tmp/attend-monotonic)
#
# Runs with one thread (ATTEND_THREADS=1, OPENBLAS_NUM_THREADS=1) under nice 10;
# expects build/attend (cmake --build build). Prints the numbers; models and
# logs stay in OUTDIR.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
what=${1:-all}
out=${2:-/tmp/attend-monotonic}
attend=$here/build/attend
py=/usr/bin/python3
share=$here/tools/monotonic_share.py
mkdir -p "$out"
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1
run() { nice -n 10 "$@"; }

if [ "$what" = copy ] || [ "$what" = all ]; then
    common="--task copy --max-len 12 --steps 1500 --seed 1"
    # 500 random sources of 1-12 symbols for the alignment counts
    $py - "$out/copy-sources.txt" <<'PY'
import random, sys
rng = random.Random(2)
with open(sys.argv[1], "w") as f:
    for _ in range(500):
        n = rng.randint(1, 12)
        f.write("".join(rng.choice("abcdefghij") for _ in range(n)) + "\n")
PY
    for kind in soft monotonic; do
        flag=; [ $kind = monotonic ] && flag=--monotonic
        run "$attend" train $common $flag --out "$out/copy-$kind.safetensors" --log-every 500 \
            >"$out/copy-$kind.log" 2>&1
        echo "copy/$kind: $(grep '^trained:' "$out/copy-$kind.log")"
        run "$attend" eval "$out/copy-$kind.safetensors" --task copy --count 1000 --data-seed 7 \
            | sed "s|^|copy/$kind eval: |"
        run "$attend" decode "$out/copy-$kind.safetensors" "$out/copy-sources.txt" --align --format jsonl \
            | $py "$share" --diagonal | sed "s|^|copy/$kind alignments: |"
    done
fi

if [ "$what" = g2p ] || [ "$what" = all ]; then
    dict=$here/data/g2p/cmudict-en-us.dict
    [ -f "$dict" ] || sh "$here/tools/get_cmudict.sh"
    "$attend" g2p data --dict "$dict" --out "$out/split" >/dev/null
    cut -d' ' -f1 "$out/split/dev.dict" | sed 's/(.*//' | sort -u >"$out/dev-words.txt"
    # the two trainings side by side (one thread each), then the evaluations
    for kind in soft monotonic; do
        flag=; [ $kind = monotonic ] && flag=--monotonic
        run "$attend" g2p train --dict "$dict" $flag --epochs 1 --warmup 200 --patience 0 --max-minutes 30 --overwrite \
            --out "$out/g2p-$kind.safetensors" --log-every 200 >"$out/g2p-$kind.log" 2>&1 &
    done
    wait
    for kind in soft monotonic; do
        grep -E '^(model|epoch|trained|stopped)' "$out/g2p-$kind.log" | sed "s|^|g2p/$kind: |"
        run "$attend" g2p eval --model "$out/g2p-$kind.safetensors" --dict "$dict" --split dev --beam 0 \
            | sed "s|^|g2p/$kind eval: |"
        run "$attend" g2p --model "$out/g2p-$kind.safetensors" --align --format jsonl <"$out/dev-words.txt" \
            2>/dev/null | $py "$share" | sed "s|^|g2p/$kind alignments: |"
    done
fi
