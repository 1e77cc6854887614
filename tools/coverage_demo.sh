#!/usr/bin/env bash
# coverage_demo.sh — does coverage cut repeated and skipped outputs? (issue 13;
# docs/RESULTS.md, "Coverage"). A copy task with few symbols and long strings
# (4 symbols, 15-35 long: long runs of one symbol, where soft attention loses
# its place and repeats or skips), four runs with the same data, seed and
# steps:
#   none       plain additive attention
#   cov        --coverage (the running sum of past weights into the score)
#   cov+loss   --coverage --coverage-loss 1 (See et al. 2017)
#   loss       --coverage-loss 1 alone
# each decoded greedily and with beam 5, and beam 5 with --coverage-penalty 1
# (Wu et al. 2016), on held-out sources of the training lengths and longer. Every output is aligned to its
# reference (the source: a copy) by edit distance; one optimal edit script
# counts insertions (tokens output beyond the reference: repeats), deletions
# (reference tokens never output: skips) and substitutions.
#
#   bash tools/coverage_demo.sh [BUILD_DIR] [WORK_DIR]      (build, /tmp/coverage_demo)
#   STEPS=3000, SEED=5 (initialisation and shuffling) by default; ATTEND_THREADS=1 and OPENBLAS_NUM_THREADS=1 are set.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
W=${2:-/tmp/coverage_demo}
A=$(realpath "$B/attend")
STEPS=${STEPS:-3000}
SEED=${SEED:-5}
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1
mkdir -p "$W"
cd "$W"
DATA="--task copy --symbols 4 --min-len 15 --max-len 35 --count 20000 --dev-count 200 --data-seed 11"
MODEL="--emb 16 --hidden 32 --dec-hidden 64 --attn 32 --batch 32 --seed $SEED --steps $STEPS --eval-every 0"

# held-out sources, 4 symbols (awk's srand: fixed): 500 of the training lengths
# 15-35 (in.txt) and 300 longer than any seen in training, 36-60 (long.txt),
# where soft attention has to extrapolate its position
gen() {
    awk -v seed="$1" -v n="$2" -v lo="$3" -v hi="$4" 'BEGIN { srand(seed); for (i = 0; i < n; i++) {
        len = lo + int(rand() * (hi - lo + 1)); s = ""
        for (j = 0; j < len; j++) s = s substr("abcd", 1 + int(rand() * 4), 1); print s } }'
}
gen 7 500 15 35 >in.txt
gen 8 300 36 60 >long.txt

# count FILE.tsv: columns 4 (source = reference) and 5 (output) of decode --format tsv
count() {
    awk -F '\t' '
    function edit(r, o,    n, m, i, j, d, c, a, b) {
        n = length(r); m = length(o)
        for (i = 0; i <= n; i++) D[i, 0] = i
        for (j = 0; j <= m; j++) D[0, j] = j
        for (i = 1; i <= n; i++)
            for (j = 1; j <= m; j++) {
                c = D[i-1, j-1] + (substr(r, i, 1) != substr(o, j, 1))
                a = D[i-1, j] + 1; b = D[i, j-1] + 1
                d = c; if (a < d) d = a; if (b < d) d = b
                D[i, j] = d
            }
        # walk back: prefer match/substitution, then deletion, then insertion
        i = n; j = m
        while (i > 0 || j > 0) {
            if (i > 0 && j > 0 && D[i, j] == D[i-1, j-1] + (substr(r, i, 1) != substr(o, j, 1))) {
                if (substr(r, i, 1) != substr(o, j, 1)) sub_++
                i--; j--
            } else if (i > 0 && D[i, j] == D[i-1, j] + 1) { del++; i-- }
            else { ins++; j-- }
        }
    }
    { ref += length($4); out += length($5); exact += ($4 == $5); lines++
      longer += length($5) > length($4); shorter += length($5) < length($4); edit($4, $5) }
    END { printf "%5.1f %6.1f %6.1f %6.1f %5d %5d\n", 100 * exact / lines, 1000 * ins / ref, 1000 * del / ref,
          1000 * sub_ / ref, longer, shorter }' "$1"
}

printf '%-5s %-9s %-13s %5s %6s %6s %6s %5s %5s\n' set run decoding exact% ins/1k del/1k sub/1k long short
for run in none cov cov+loss loss; do
    case $run in
    none) opts="" ;;
    cov) opts="--coverage" ;;
    cov+loss) opts="--coverage --coverage-loss 1" ;;
    loss) opts="--coverage-loss 1" ;;
    esac
    m=$run.safetensors
    if [ ! -s "$m" ]; then
        # shellcheck disable=SC2086
        nice -n 10 "$A" train $DATA $MODEL $opts --out "$m" >"$run.train.log" 2>&1
    fi
    for set in in long; do
        nice -n 10 "$A" decode "$m" $set.txt --format tsv >"$run.$set.greedy.tsv" 2>>decode.log
        nice -n 10 "$A" decode "$m" $set.txt --format tsv --beam 5 >"$run.$set.beam.tsv" 2>>decode.log
        nice -n 10 "$A" decode "$m" $set.txt --format tsv --beam 5 --coverage-penalty 1 >"$run.$set.beamcp.tsv" 2>>decode.log
        printf '%-5s %-9s %-13s %s\n' $set "$run" greedy "$(count "$run.$set.greedy.tsv")"
        printf '%-5s %-9s %-13s %s\n' $set "$run" "beam 5" "$(count "$run.$set.beam.tsv")"
        printf '%-5s %-9s %-13s %s\n' $set "$run" "beam 5, cp 1" "$(count "$run.$set.beamcp.tsv")"
    done
done
