#!/bin/sh
# copy_test.sh — the copy mechanism (pointer-generator, --copy) end to end:
#
#   sh tests/cli/copy_test.sh CASE ATTEND ROOT WORK_DIR
#
#   usage   --copy with --decoder none, or with a pointer task, is a usage error
#           (exit 2) naming both options; --help lists --copy
#   names   a small copy model trained on data/names/train.tsv emits names it
#           never saw (data/names/test.tsv): decode, decode --beam, eval (its
#           targets read with copied ids), align (the output row names the
#           copied token), and the model file carries copy.* and "copy":1
#   sweep   sweep --decoders additive+copy: rows named as written, read back by
#           --plot; none+copy and unknown suffixes refused
set -u
CASE=$1
A=$2
ROOT=$3
WORK=$4
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
ROOT=$(abs "$ROOT")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
NAMES=$ROOT/data/names

case $CASE in
usage)
    run 2 "$A" train --task copy --copy --decoder none --steps 1
    has err "--copy with --decoder none"
    has err "bahdanau or luong"
    ok "--copy --decoder none refused naming both"
    run 2 "$A" train --task sort --copy --steps 1
    has err "--copy with --decoder pointer"
    ok "--copy with a pointer task refused"
    run 0 "$A" train --help
    has out "--copy "
    ok "--help lists --copy"
    ;;
names)
    run 0 "$A" train --train "$NAMES/train.tsv" --dev "$NAMES/test.tsv" --tokenizer space --copy --steps 300 \
        --batch 32 --emb 16 --hidden 32 --dec-hidden 64 --attn 32 --eval-every 0 --out m.safetensors
    has out "copy \\(pointer-generator\\)"
    has out "vocabularies of [0-9]+ source and 5 target symbols"
    ok "trained (names are copies, not target symbols)"
    head -n 20 "$NAMES/test.tsv" | cut -f1 >src.txt
    head -n 20 "$NAMES/test.tsv" | cut -f2 >want.txt
    run 0 "$A" decode m.safetensors src.txt
    cp out got.txt
    right=$(paste -d '\t' want.txt got.txt | awk -F '\t' '$1 == $2' | wc -l)
    at_least "$right" 18
    ok "decode: $right of 20 outputs with unseen names right"
    first=$(head -n 1 want.txt)
    has out "^$first\$"
    run 0 "$A" decode m.safetensors src.txt --beam 3
    right=$(paste -d '\t' want.txt out | awk -F '\t' '$1 == $2' | wc -l)
    at_least "$right" 18
    ok "decode --beam 3: $right of 20 right"
    run 0 "$A" eval m.safetensors --tsv "$NAMES/test.tsv"
    seq=$(awk '$1 == "greedy_seq_acc" { print $2 }' out)
    at_least "$seq" 0.9
    ok "eval on unseen names: greedy-seq $seq"
    name=$(echo "$first" | awk '{ print $2 }')
    run 0 "$A" align m.safetensors "$(head -n 1 src.txt)"
    has out "^output: $first\$"
    has out "^$name +\\|"
    ok "align: the copied '$name' labels its row"
    run 0 "$A" align m.safetensors "$(head -n 1 src.txt)" --beam 3
    has out "output: $first"
    ok "align --beam"
    grep -aqF '\"copy\":1' m.safetensors || fail "model config lacks \"copy\":1"
    grep -aq 'copy.w_c' m.safetensors || fail "model lacks copy.w_c"
    ok "model file: copy.* tensors and \"copy\":1"
    ;;
sweep)
    run 0 "$A" sweep --task copy --lengths 4 --decoders additive,additive+copy --steps 60 --train-pairs 300 \
        --dev-pairs 50 --emb 16 --hidden 16 --dec-hidden 32 --attn 16 --csv s.csv --svg s.svg
    has out "bahdanau-additive\+copy"
    has s.csv "^bahdanau-additive,bahdanau,additive,4,"
    has s.csv "^bahdanau-additive\+copy,bahdanau,additive,4,"
    ok "sweep --decoders additive+copy: a row named as written"
    run 0 "$A" sweep --plot s.csv --csv m.csv --svg m.svg
    cmp -s s.csv m.csv || fail "sweep --plot did not reproduce the CSV (the +copy row)"
    has m.svg "additive\+copy"
    ok "sweep --plot reads the +copy rows back"
    run 2 "$A" sweep --task copy --decoders none+copy
    has err "\+copy with decoder none"
    run 2 "$A" sweep --task copy --decoders additive+cop
    has err "unknown decoder 'additive\+cop'"
    ok "sweep: none+copy and an unknown suffix refused"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
