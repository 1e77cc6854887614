#!/bin/sh
# monotonic_test.sh — monotonic attention (issue 13, part 3) through the
# commands:
#
#   sh tests/cli/monotonic_test.sh CASE ATTEND WORK_DIR
#
#   usage   --monotonic with --decoder pointer (and none, and --task sort) is a
#           usage error naming both; `train --help` and `g2p train --help` list it
#   run     `attend train --monotonic` on the copy task: its model line says so;
#           greedy and beam (n-best) alignments from `decode --align` are hard
#           (each row one 1 or all 0) and never move left; `align --svg`,
#           `eval` and `intervene` run on it
#   sweep   `attend sweep --decoders additive,additive+monotonic`: a row per
#           model, the CSV names "+monotonic" and --plot reads it back
#   g2p     `attend g2p train --monotonic` on the dictionary sample: the model
#           line says so and `g2p --align` gives hard, never-left alignments
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
SRC=$(abs "$(dirname "$0")/../..")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
SMALL="--task copy --symbols 6 --min-len 2 --max-len 6 --count 2000 --dev-count 50 --emb 16 --hidden 16 --dec-hidden 32 --attn 16"

# hard_left FILE: the tsv alignments of `decode --align --align-format tsv`
# (a header line starting with a TAB, then TOKEN<TAB>weights rows) are hard
# and never move left; prints the number of rows checked and of moves right
hard_left() {
    awk -F '\t' '
        /^\t/ { prev = -1; next }
        NF >= 2 && $2 ~ /^[0-9]+\.[0-9]+$/ {
            at = NF - 1; ones = 0
            for (i = 2; i <= NF; i++) {
                if ($i == "1.0000") { ones++; if (at == NF - 1) at = i - 2 }
                else if ($i != "0.0000") { print "not hard: " $0; bad = 1; exit 1 }
            }
            if (ones > 1) { print "two ones: " $0; bad = 1; exit 1 }
            if (at < prev) { print "moved left: " $0; bad = 1; exit 1 }
            if (prev >= 0 && at > prev) moves++
            prev = at; rows++
        }
        END { if (!bad) print rows + 0, moves + 0 }' "$1"
}

case $CASE in
usage)
    run 2 "$A" train --task copy --decoder pointer --monotonic
    has err "--monotonic with --decoder pointer"
    run 2 "$A" train --task copy --decoder none --monotonic
    has err "--monotonic with --decoder none"
    run 2 "$A" train --task sort --monotonic
    has err "--monotonic with --task sort"
    ok "--monotonic with a pointer decoder, none or --task sort: usage errors naming both"
    run 0 "$A" train --help
    has out "--monotonic +monotonic attention"
    run 0 "$A" g2p train --help
    has out "--monotonic +monotonic attention"
    ok "--help lists --monotonic (train, g2p train)"
    ;;
run)
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --steps 300 --monotonic --out mono.safetensors
    has out "additive attention 16, monotonic"
    ok "train --monotonic: $(grep '^dev:' out | cut -c1-80)"
    awk 'BEGIN { r = 11; for (i = 0; i < 60; i++) { s = ""; r = (r * 1103515245 + 12345) % 2147483648
         n = 2 + int(r / 65536) % 5; for (j = 0; j < n; j++) { r = (r * 1103515245 + 12345) % 2147483648
         s = s substr("abcdef", 1 + int(r / 65536) % 6, 1) } print s } }' >in.txt
    run 0 "$A" decode mono.safetensors in.txt --align --align-format tsv
    hard_left out >checked || fail "greedy: $(cat checked)"
    set -- $(cat checked)
    at_least "$2" 20
    ok "greedy: $1 alignment rows hard and never left ($2 moves right)"
    run 0 "$A" decode mono.safetensors in.txt --beam 3 --nbest 3 --align --align-format tsv
    hard_left out >checked || fail "beam: $(cat checked)"
    set -- $(cat checked)
    at_least "$2" 20
    ok "beam n-best: $1 alignment rows hard and never left ($2 moves right)"
    run 0 "$A" align mono.safetensors abcdef --svg mono.svg
    has mono.svg "<svg"
    run 0 "$A" eval mono.safetensors --task copy --symbols 6 --max-len 6 --count 100
    has out "greedy"
    run 0 "$A" intervene mono.safetensors abcd
    has out "remove-state"
    ok "align --svg, eval and intervene run on a monotonic model"
    ;;
sweep)
    run 0 "$A" sweep --lengths 4 --decoders additive,additive+monotonic --steps 40 --symbols 6 --csv s.csv \
        --svg s.svg
    has s.csv "^bahdanau-additive\+monotonic,bahdanau,additive,4,"
    has s.csv "^bahdanau-additive,bahdanau,additive,4,"
    run 0 "$A" sweep --plot s.csv --csv s2.csv --svg s2.svg
    cmp -s s.csv s2.csv || fail "the CSV read back differs"
    run 2 "$A" sweep --decoders none+monotonic
    has err "\+monotonic with decoder none"
    run 2 "$A" sweep --decoders additive+nosuch
    has err "unknown suffix '\+nosuch'"
    ok "sweep: additive+monotonic rows, CSV round trip, bad suffixes refused"
    ;;
g2p)
    run 0 "$A" g2p train --dict "$SRC/data/g2p/cmudict-sample.dict" --monotonic --epochs 6 --emb 16 --hidden 32 \
        --dec-hidden 32 --attn 16 --batch 32 --warmup 10 --lr 0.01 --out g2p.safetensors
    has out "additive attention 16, monotonic"
    run 0 "$A" g2p --model g2p.safetensors --align --format jsonl hello world attention monotonic
    has out '"alignment"'
    # the jsonl alignments as tsv rows for hard_left
    awk '{ s = $0; while ((i = index(s, "\"alignment\":[[")) > 0) { s = substr(s, i + 14); j = index(s, "]]")
           body = substr(s, 1, j - 1); s = substr(s, j + 2); print "\t"; n = split(body, rows, "\\],\\[")
           for (r = 1; r <= n; r++) { gsub(",", "\t", rows[r]); print "x\t" rows[r] } } }' out >al.tsv
    hard_left al.tsv >checked || fail "g2p: $(cat checked)"
    set -- $(cat checked)
    at_least "$1" 8
    ok "g2p train --monotonic; g2p --align: $1 rows hard and never left"
    ;;
*)
    echo "monotonic_test.sh: unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
