#!/bin/sh
# coverage_test.sh — coverage (issue 13: Tu et al. 2016, See et al. 2017, Wu et
# al. 2016's penalty) through the commands:
#
#   sh tests/cli/coverage_test.sh CASE ATTEND WORK_DIR
#
#   train    `attend train --coverage --coverage-loss X` writes a model whose
#            config has "coverage":1 and a tensor attention.w_cov; decode
#            (greedy, beam, --coverage-penalty), align (--svg, beam with the
#            penalty) and intervene read it from the file; the penalty changes
#            the n-best scores; a checkpoint records the coverage loss and a
#            resume with another one is refused
#   usage    what does not combine is a usage error naming both: --coverage
#            with --decoder none / --score dot / --task sort, --coverage-loss
#            with --decoder none, --coverage-penalty without --beam (decode,
#            align, g2p), sweep's dot+coverage and unknown suffixes
#   sweep    `attend sweep --decoders additive,additive+coverage` trains both,
#            names the entry additive+coverage in the table and CSV, and the CSV
#            reads back (--plot) to the same rows
#   g2p      `attend g2p --beam 4 --coverage-penalty 1` pronounces with the
#            shipped model; `g2p eval` takes the option
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
ROOT=$(abs "$(dirname "$0")/../..")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
SMALL="--task copy --symbols 6 --min-len 3 --max-len 8 --count 400 --dev-count 20 --emb 8 --hidden 8
       --dec-hidden 16 --attn 8 --batch 16 --seed 2"

case $CASE in
train)
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --steps 40 --coverage --coverage-loss 0.5 --out cov.safetensors \
        --checkpoint cov.ckpt --eval-every 0
    has out "additive attention 8 with coverage"
    has out "coverage loss 0.5"
    grep -aqF '\"coverage\":1' cov.safetensors || fail "the config has no \"coverage\":1"
    grep -aq '"attention.w_cov"' cov.safetensors || fail "no tensor attention.w_cov"
    ok "train --coverage --coverage-loss: the model file has the flag and attention.w_cov"
    printf 'abcdef\nfedcba\n' >in.txt
    run 0 "$A" decode cov.safetensors in.txt
    [ "$(wc -l <out)" -eq 2 ] || fail "greedy: expected 2 lines"
    run 0 "$A" decode cov.safetensors in.txt --beam 4 --nbest 3 --format tsv
    cp out beam0.tsv
    run 0 "$A" decode cov.safetensors in.txt --beam 4 --nbest 3 --format tsv --coverage-penalty 2
    cp out beam2.tsv
    cmp -s beam0.tsv beam2.tsv && fail "--coverage-penalty 2 left the n-best scores unchanged"
    ok "decode: greedy, beam, beam with --coverage-penalty (scores change)"
    # an ensemble of two copies of one model: the same distributions and mean attention as the model alone
    cp cov.safetensors cov2.safetensors
    run 0 "$A" decode cov.safetensors cov2.safetensors in.txt --beam 4 --nbest 3 --format tsv --coverage-penalty 2
    cmp -s out beam2.tsv || fail "an ensemble of two copies with --coverage-penalty 2 differs from the model alone"
    ok "decode: an ensemble with --coverage-penalty (two copies: the model's own n-best and scores)"
    run 0 "$A" align cov.safetensors abcdef --svg cov.svg
    grep -q '</svg>' cov.svg || fail "SVG not closed"
    run 0 "$A" align cov.safetensors abcdef --beam 3 --nbest 2 --coverage-penalty 1
    has out "beam 3, 2 of 2 hypotheses"
    ok "align: greedy with --svg, beam with --coverage-penalty"
    run 0 "$A" intervene cov.safetensors abcdef
    has out "remove-state"
    has out "delete-token"
    ok "intervene on a coverage model"
    # shellcheck disable=SC2086
    run 1 "$A" train $SMALL --steps 60 --warmup 4 --decay 36 --coverage --coverage-loss 0.25 --out cov2.safetensors \
        --resume cov.ckpt --eval-every 0
    has err "coverage_loss"
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --steps 60 --warmup 4 --decay 36 --coverage --coverage-loss 0.5 --out cov2.safetensors \
        --resume cov.ckpt --eval-every 0
    ok "a checkpoint records --coverage-loss: resuming with another is refused, with the same works"
    ;;
usage)
    # shellcheck disable=SC2086
    run 2 "$A" train $SMALL --steps 1 --coverage --decoder none
    has err "--coverage with --decoder none"
    # shellcheck disable=SC2086
    run 2 "$A" train $SMALL --steps 1 --coverage --score dot
    has err "--coverage with --score dot"
    run 2 "$A" train --task sort --steps 1 --coverage
    has err "--coverage with --decoder pointer"
    # shellcheck disable=SC2086
    run 2 "$A" train $SMALL --steps 1 --coverage-loss 1 --decoder none
    has err "--coverage-loss with --decoder none"
    # shellcheck disable=SC2086
    run 2 "$A" train $SMALL --steps 1 --coverage-loss -1
    ok "train: --coverage / --coverage-loss with what does not combine"
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --steps 2 --out plain.safetensors --eval-every 0
    run 2 "$A" decode plain.safetensors --coverage-penalty 1
    has err "--coverage-penalty needs --beam"
    run 2 "$A" align plain.safetensors abc --coverage-penalty 1
    has err "--coverage-penalty needs --beam"
    run 2 "$A" g2p --coverage-penalty 1 hello
    has err "--coverage-penalty needs --beam"
    ok "--coverage-penalty without --beam"
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --steps 2 --decoder none --out none.safetensors --eval-every 0
    run 1 "$A" align none.safetensors abc --beam 2 --coverage-penalty 1
    has err "coverage_penalty=1 with decoder none"
    ok "a coverage penalty needs attention"
    run 2 "$A" sweep --decoders dot+coverage
    has err "'dot\+coverage': coverage needs attention with the additive score"
    run 2 "$A" sweep --decoders none+coverage
    has err "coverage needs attention"
    run 2 "$A" sweep --decoders additive+covrage
    has err "unknown suffix '\+covrage'"
    ok "sweep: bad suffixes"
    ;;
sweep)
    SW="--task copy --symbols 6 --lengths 4 --decoders additive,additive+coverage --train-pairs 300 --dev-pairs 20
        --emb 8 --hidden 8 --attn 8 --steps 30 --warmup 5 --batch 16 --seed 3"
    # shellcheck disable=SC2086
    run 0 "$A" sweep $SW --csv one.csv --svg one.svg
    has out "bahdanau-additive\+coverage"
    has one.csv "^bahdanau-additive,bahdanau,additive,4,4,20,"
    has one.csv "^bahdanau-additive\+coverage,bahdanau,additive,4,4,20,"
    a=$(grep '^bahdanau-additive,' one.csv | cut -d, -f7-13)
    b=$(grep '^bahdanau-additive+coverage,' one.csv | cut -d, -f7-13)
    [ "$a" != "$b" ] || fail "the coverage entry trained the same model as the plain one"
    grep -q 'bahdanau-additive+coverage' one.svg || fail "SVG legend lacks the coverage entry"
    ok "additive+coverage: its own row, named in the table, CSV and SVG"
    run 0 "$A" sweep --plot one.csv --csv back.csv --svg back.svg
    cut -d, -f1-13 one.csv >x
    cut -d, -f1-13 back.csv >y
    cmp -s x y || fail "the CSV read back (--plot) differs"
    cmp -s one.svg back.svg || fail "the plot read back differs"
    ok "--plot reads +coverage back"
    ;;
g2p)
    run 0 "$A" g2p --beam 4 --coverage-penalty 1 --nbest 2 hello world
    has out "^hello "
    has out "^world "
    run 0 "$A" g2p eval --dict "$ROOT/data/g2p/cmudict-sample.dict" --split dev --max-words 20 --beam 4 \
        --coverage-penalty 0.5
    has out "beam"
    ok "g2p and g2p eval with --coverage-penalty"
    ;;
*)
    fail "unknown case '$CASE'"
    ;;
esac
echo "$PASSED passed, 0 failed"
