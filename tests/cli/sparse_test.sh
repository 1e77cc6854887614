#!/bin/sh
# sparse_test.sh — the sparse normalisers through the command line (issue 13):
# `attend train --normalizer`, then every command that reads the model file
# (decode greedy and beam with alignments, align --svg, eval, intervene) reads
# the normaliser from it; usage errors name both options that do not combine;
# `attend sweep --decoders ...+sparsemax` names its rows as written.
#
#   sh tests/cli/sparse_test.sh ATTEND SOURCE_DIR WORK_DIR
set -u
CASE=sparse
A=$1
SRC=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
D=$(abs "$WORK")/sparse
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0

SMALL="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 500 --dev-count 50
       --emb 8 --hidden 16 --dec-hidden 32 --batch 16 --steps 120 --warmup 10 --decay 110"
# shellcheck disable=SC2086
run 0 "$A" train $SMALL --decoder luong --score general --normalizer sparsemax --out sp.safetensors
has out "^model: gru encoder 1x16 bidirectional, luong decoder 32, general attention \(sparsemax\), emb 8: "
has out "^dev: pairs 50 .* entropy [0-9.]+$"
ok "train --normalizer sparsemax"
# shellcheck disable=SC2086
run 0 "$A" train $SMALL --normalizer entmax15 --out em.safetensors
has out "additive attention 64 \(entmax15\)"
ok "train --normalizer entmax15 (bahdanau)"
for m in sp em; do
    printf 'abcd\nfed\n' >in
    run 0 "$A" decode $m.safetensors in --align
    has out "weight per cell"
    run 0 "$A" decode $m.safetensors in --beam 3
    run 0 "$A" align $m.safetensors abcdef --svg $m.svg --format tsv
    [ -s $m.svg ] || fail "no SVG"
    has out "^index	rank	score	step	token	a	b	c	d	e	f$"
    run 0 "$A" eval $m.safetensors --task reverse --symbols 6 --min-len 2 --max-len 6 --count 50
    has out "^attn_entropy +[0-9.]+$"
    run 0 "$A" intervene $m.safetensors abcd
    has out "remove-state"
    has out "drop-top"
done
ok "decode, beam, align, eval and intervene read the normaliser from the file"
run 2 "$A" train --task reverse --decoder none --normalizer sparsemax
has err "--normalizer sparsemax with --decoder none"
run 2 "$A" train --task sort --normalizer entmax15
has err "--normalizer entmax15 with --decoder pointer"
run 2 "$A" train --task reverse --monotonic --normalizer sparsemax
has err "--normalizer sparsemax with --monotonic"
run 2 "$A" train --task reverse --normalizer sparse
has err "--normalizer: expected one of softmax\|sparsemax\|entmax15, got 'sparse'"
run 2 "$A" g2p train --normalizer nope
has err "--normalizer: expected one of softmax\|sparsemax\|entmax15, got 'nope'"
run 2 "$A" sweep --decoders none+sparsemax
has err "'none\+sparsemax': \+sparsemax with decoder none"
ok "usage errors name the options"
run 0 "$A" sweep --task reverse --lengths 3 --decoders dot,dot+sparsemax --steps 20 --batch 16 --hidden 8 --emb 8 \
    --csv sw.csv --svg sw.svg
has out "^ *length +luong-dot +luong-dot\+sparsemax$"
has sw.csv "^luong-dot\+sparsemax,luong,dot,3,"
ok "sweep --decoders dot+sparsemax"
echo "$PASSED passed, 0 failed"
