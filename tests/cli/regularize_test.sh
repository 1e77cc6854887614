#!/bin/sh
# regularize_test.sh — --dropout and --label-smoothing of `attend train` and
# `attend g2p train` (issue 14, parts 1 and 2), end to end:
#
#   sh tests/cli/regularize_test.sh CASE ATTEND SOURCE_DIR WORK_DIR
#
#   usage    values outside [0, 1) (1, -0.1, 1.5, nan) are usage errors (exit
#            2) naming the option, in both commands; both --help list them
#   resume   `train --dropout 0.2 --label-smoothing 0.1` checkpointed at step 6
#            and resumed to 12 gives the bytes of an uninterrupted run;
#            resuming with another --dropout or --label-smoothing, or none, is
#            refused naming it (--resume-anyway resumes all the same); the
#            summary line names the options; the dev loss is plain (`attend
#            eval` of the saved model gives it); the same command twice gives
#            the same bytes
#   g2p      `g2p train --dropout 0.1 --label-smoothing 0.1` (2 epochs of the
#            sample dictionary, a tiny model) trains, says so, and its model
#            differs from the run without them
set -u
CASE=$1
A=$2
SRC=$3
WORK=$4
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
SRC=$(abs "$SRC")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
TINY="--emb 8 --hidden 12 --dec-hidden 16 --attn 8 --batch 8 --log-every 1000 --warmup 0 --decay 0 --layers 2"
TASK="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 60 --dev-count 10 $TINY"
DICT=$SRC/data/g2p/cmudict-sample.dict
G="g2p train --dict $DICT --epochs 2 --emb 8 --hidden 8 --dec-hidden 16 --attn 8 --batch 16 --eval-words 60"
G="$G --warmup 10 --log-every 100000 --checkpoint-every 0"

case $CASE in
usage)
    for opt in --dropout --label-smoothing; do
        for v in 1 -0.1 1.5 nan; do
            run 2 "$A" train $TASK --steps 2 $opt $v
            has err "^attend train: $opt: expected a number in \[0, 1\), got '$v'$"
            run 2 "$A" $G $opt $v
            has err "^attend g2p train: $opt: expected a number in \[0, 1\), got '$v'$"
        done
    done
    ok "--dropout and --label-smoothing outside [0, 1): usage errors naming the option, in both commands"
    for cmd in train "g2p train"; do
        run 0 "$A" $cmd --help
        has out "^  --dropout P "
        has out "^  --label-smoothing E "
    done
    ok "both --help list --dropout and --label-smoothing"
    ;;
resume)
    R="--dropout 0.2 --label-smoothing 0.1"
    run 0 "$A" train $TASK $R --steps 12 --out whole.st
    has out "^training: .*, dropout 0.2, label smoothing 0.1$"
    dev=$(grep '^dev: ' out)
    ok "trained 12 steps with dropout and label smoothing"
    run 0 "$A" train $TASK $R --steps 6 --checkpoint half.ck
    run 0 "$A" train $TASK $R --steps 12 --resume half.ck --out resumed.st
    cmp -s whole.st resumed.st || fail "resumed at step 6: the model differs from the uninterrupted run's"
    [ "$(grep '^dev: ' out)" = "$dev" ] || fail "resumed: dev line '$(grep '^dev: ' out)', uninterrupted '$dev'"
    ok "checkpoint at 6, resumed to 12: the bytes of the uninterrupted run"
    run 1 "$A" train $TASK --dropout 0.3 --label-smoothing 0.1 --steps 12 --resume half.ck --out x.st
    has err "checkpoint's dropout is 0.2, in this run 0.3; resuming needs the same data and options$"
    run 1 "$A" train $TASK --label-smoothing 0.1 --steps 12 --resume half.ck --out x.st
    has err "checkpoint's dropout is 0.2, in this run 0; resuming"
    run 1 "$A" train $TASK --dropout 0.2 --steps 12 --resume half.ck --out x.st
    has err "checkpoint's label_smoothing is 0.1, in this run 0; resuming"
    ok "resuming with another --dropout or --label-smoothing: refused naming it"
    run 0 "$A" train $TASK --dropout 0.3 --label-smoothing 0.1 --steps 12 --resume half.ck --resume-anyway --out x.st
    has err "warning: .*dropout is 0.2, in this run 0.3"
    ok "--resume-anyway resumes all the same, with a warning"
    run 0 "$A" train $TASK --steps 12 --out plain.st
    cmp -s whole.st plain.st && fail "dropout and smoothing changed nothing"
    ok "the model differs from the one trained without them"
    # the run's dev loss is plain cross-entropy without dropout: `attend eval` of
    # the saved model on the same dev pairs gives it
    run 0 "$A" eval whole.st --task reverse --symbols 6 --min-len 2 --max-len 6 --count 10 --batch 8 --format tsv
    got=$(awk -F '\t' '$1 == "loss" { printf "%.4f", $2 }' out)
    want=$(echo "$dev" | awk '{ for (i = 1; i < NF; i++) if ($i == "loss") print $(i + 1) }')
    [ -n "$want" ] && [ "$got" = "$want" ] || fail "attend eval: loss $got, the run's dev line $want"
    ok "the run's dev loss is the plain loss of the saved model ($want)"
    run 0 "$A" train $TASK $R --steps 12 --out again.st
    cmp -s whole.st again.st || fail "the same command twice: different models"
    ok "the same command twice: the same bytes"
    ;;
g2p)
    run 0 "$A" $G --out plain.st
    run 0 "$A" $G --dropout 0.1 --label-smoothing 0.1 --out reg.st
    has out "^training: adam .*, dropout 0.1, label smoothing 0.1$"
    [ -s reg.st ] || fail "no model written"
    cmp -s plain.st reg.st && fail "g2p train: dropout and smoothing changed nothing"
    ok "g2p train with --dropout and --label-smoothing: trains, says so, another model"
    ;;
*)
    echo "regularize_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
