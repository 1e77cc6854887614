#!/bin/sh
# table81_quick.sh — tools/table81.py --quick end to end: every TSV with its
# header and rows, every SVG a plot, the table with its three encoders;
# --from-tsv redraws the plots and the same table from the TSVs.
#
#   sh tests/cli/table81_quick.sh PYTHON3 TABLE81_PY ATTEND WORK_DIR
set -u
CASE=table81_quick
PY=$1
SCRIPT=$2
A=$3
WORK=$4
. "$(dirname "$0")/lib.sh"
D=$(abs "$WORK")
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0
run 0 "$PY" "$SCRIPT" --quick --attend "$A" --out "$D/res"
ok "table81.py --quick ran"
for f in seqops price speedup path positions meta; do
    [ -s "res/$f.tsv" ] || fail "res/$f.tsv is missing or empty"
    n=$(wc -l < "res/$f.tsv")
    [ "$n" -ge 2 ] || fail "res/$f.tsv has no rows"
done
ok "six TSVs with rows"
# seqops: 3 encoders x 2 lengths x 2 thread counts; the recurrent encoder's dependent steps are T
[ "$(wc -l < res/seqops.tsv)" -eq 13 ] || fail "seqops.tsv: $(wc -l < res/seqops.tsv) lines, want 13"
has res/seqops.tsv "^rnn	20	1	20	"
has res/seqops.tsv "^transformer	20	1	1	"
has res/seqops.tsv "^conv	20	2	1	"
ok "seqops.tsv: dependent steps T for rnn, 1 for conv and transformer"
[ "$(wc -l < res/path.tsv)" -eq 7 ] || fail "path.tsv: $(wc -l < res/path.tsv) lines, want 7"
has res/path.tsv "^conv	2	34	[0-9]+	3	3	"
ok "path.tsv: one row per encoder and k, the conv encoder's reach 3"
[ "$(wc -l < res/positions.tsv)" -eq 5 ] || fail "positions.tsv: want 4 rows"
has res/positions.tsv "^reverse	none	"
has res/positions.tsv "^bag	sinusoidal	"
ok "positions.tsv: reverse and bag, with and without positions"
for f in train_time encode_time memory speedup path_accuracy; do
    head -c 200 "res/$f.svg" | grep -q "<svg" || fail "res/$f.svg is not an SVG"
    grep -q "<polyline\|<path" "res/$f.svg" || fail "res/$f.svg has no line"
done
ok "five SVG plots"
has res/table81.md "^\| transformer \| O\(1\) \| O\(1\) \| 1 \|"
has res/table81.md "^\| rnn \| O\(T\) \| O\(T\) \| 20 \|"
ok "table81.md"
# --from-tsv: the plots and the same table again from the TSVs alone (a stopped run's)
cp res/table81.md table81_before.md
rm -f res/*.svg
run 0 "$PY" "$SCRIPT" --from-tsv --out "$D/res"
cmp -s res/table81.md table81_before.md || fail "--from-tsv gave another table81.md"
[ "$(ls res/*.svg | wc -l)" -eq 5 ] || fail "--from-tsv: $(ls res/*.svg | wc -l) SVGs, want 5"
ok "--from-tsv: the same table, the five plots again"
echo "$PASSED passed, 0 failed"
