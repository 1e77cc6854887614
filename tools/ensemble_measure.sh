#!/usr/bin/env bash
# ensemble_measure.sh — ensembles against their members (issue 14 part 6;
# numbers in docs/RESULTS.md, "Ensembles and rescoring"). Not a test.
#
#   bash tools/ensemble_measure.sh [WORK_DIR]      (ATTEND=path/to/attend, STEPS=N)
#
# Trains three reversal models that differ only in --seed (same data, same
# steps) and a copy model (the right-to-left model of the reversal task: it
# reads a reversal backwards), then decodes 1000 pairs (lengths 5-25 over 20
# symbols, made here with awk's own generator, not the task's: a source may
# repeat a training source only by chance, among 20^5 or more sequences of its
# length) with each model alone and with ensembles of two and three (`attend
# decode A B ...`), greedy and --beam 4, and the 4-best of beam 4 re-ranked
# with the copy model (--rescore-reverse, weight 0.5), and prints the sequence
# accuracy (output == reversed source) of each, with the greedy decoding's
# seconds (noisy on a loaded machine). Models already in WORK_DIR are reused.
# One thread, nice 10.
set -euo pipefail
A=${ATTEND:-./build/attend}
W=${1:-/tmp/attend-ensemble}
STEPS=${STEPS:-300}
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
mkdir -p "$W"
OPTS="--task reverse --symbols 20 --min-len 5 --max-len 25 --count 20000 --dev-count 200 --steps $STEPS --eval-every 0"
for s in 1 2 3; do
    if [ ! -f "$W/r$s.safetensors" ]; then
        # shellcheck disable=SC2086
        nice -n 10 "$A" train $OPTS --seed "$s" --out "$W/r$s.safetensors" >"$W/train$s.log" 2>&1
    fi
done
if [ ! -f "$W/c1.safetensors" ]; then
    # shellcheck disable=SC2086
    nice -n 10 "$A" train ${OPTS/reverse/copy} --seed 1 --out "$W/c1.safetensors" >"$W/trainc1.log" 2>&1
fi
awk 'BEGIN { srand(20261201); a = "abcdefghijklmnopqrst"
    for (i = 0; i < 1000; i++) { n = 5 + int(rand() * 21); s = ""
        for (j = 0; j < n; j++) s = s substr(a, 1 + int(rand() * 20), 1)
        r = ""; for (j = n; j >= 1; j--) r = r substr(s, j, 1)
        print s "\t" r } }' >"$W/dev.tsv"
acc() { # acc OUTPUT: percent of lines equal to the reversed source
    paste "$W/dev.tsv" "$1" | awk -F '\t' '{ n++; if ($2 == $3) c++ } END { printf "%.1f", 100 * c / n }'
}
printf '%-12s %8s %8s %14s %10s\n' "models" "greedy" "beam 4" "beam 4 + R2L" "seconds"
for set in "r1" "r2" "r3" "r1 r2" "r1 r3" "r2 r3" "r1 r2 r3"; do
    files=""
    for m in $set; do files="$files $W/$m.safetensors"; done
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086
    nice -n 10 "$A" decode $files "$W/dev.tsv" >"$W/greedy.out"
    t1=$(date +%s.%N)
    # shellcheck disable=SC2086
    nice -n 10 "$A" decode $files --beam 4 "$W/dev.tsv" >"$W/beam.out"
    # shellcheck disable=SC2086
    nice -n 10 "$A" decode $files --nbest 4 --format tsv --rescore "$W/c1.safetensors" --rescore-reverse \
        --rescore-weight 0.5 "$W/dev.tsv" | awk -F '\t' '$2 == 1 { print $5 }' >"$W/rescored.out"
    printf '%-12s %8s %8s %14s %10.1f\n' "${set// /+}" "$(acc "$W/greedy.out")" "$(acc "$W/beam.out")" \
        "$(acc "$W/rescored.out")" "$(echo "$t1 - $t0" | bc)"
done
