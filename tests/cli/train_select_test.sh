#!/bin/sh
# train_select_test.sh — `attend train --select loss|token|seq --patience N`
# (issue 14 part 5), end to end:
#
#   sh tests/cli/train_select_test.sh CASE ATTEND WORK_DIR
#
#   patience  a constructed stop: the cosine decay reaches lr 0 at step 100,
#             so every later evaluation equals step 100's and none is better;
#             with evaluations every 50 steps and --patience 3 the run stops
#             after step 250's, the best is step 100, --out is that model
#             (`attend eval` gives the printed loss) and the checkpoint is the
#             last state (step 250)
#   select    on 60 training pairs the model overfits: for each of --select
#             loss, token, seq the printed best is the best of the evaluations
#             printed, `attend eval` of --out reproduces it to the printed
#             digits, and (loss) it is not the last model's
#   resume    a run resumed from its checkpoint to more steps takes the best
#             so far from the checkpoint's early-stopping state ("best so far",
#             its step) and keeps --out when no later evaluation beats it (the
#             file is unchanged)
#   usage     --patience / --select with --train but no --dev, a bad --select,
#             --patience with --eval-every 0; --help lists both
#   mpi       (-DATTEND_MPI=ON) under mpirun -np 2 every rank evaluates and all
#             stop together: the run ends (no rank left waiting), prints what
#             one process with --grad-shards 2 prints and writes the same --out
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
NET="--symbols 8 --min-len 2 --max-len 8 --dev-count 200 --emb 16 --hidden 32 --dec-hidden 64
     --decoder luong --score general --batch 32"
EVAL="--task reverse --symbols 8 --min-len 2 --max-len 8 --count 200 --data-seed 2 --batch 32 --format tsv"

# evalval FILE NAME: the value of NAME in `attend eval --format tsv` output
evalval() { awk -F '\t' -v n="$2" '$1 == n { print $2 }' "$1"; }

case $CASE in
patience)
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $NET --count 2000 --steps 400 --warmup 0 --decay 100 --eval-every 50 \
        --patience 3 --out best.safetensors --checkpoint last.ckpt
    has out "^best: step 100, dev loss [0-9.]+: saved to best.safetensors$"
    has out "^early stop: no better dev loss for 3 evaluations \(--patience 3\); the best: step 100$"
    has out "^trained: steps 1-250 in "
    has out "^checkpoint: step 250 saved to last.ckpt$"
    [ "$(grep -c '^eval step' out)" -eq 5 ] || fail "expected evaluations at steps 50-250"
    [ "$(grep -c '^checkpoint: step 250' out)" -eq 1 ] || fail "the last checkpoint written twice"
    ok "patience 3 stops after the third evaluation without improvement (step 250); the best is step 100"
    best=$(sed -n 's/^saved: best.safetensors (the best model: step 100, dev loss \([0-9.]*\))$/\1/p' out)
    [ -n "$best" ] || fail "no final line naming the best model"
    # shellcheck disable=SC2086
    run 0 "$A" eval best.safetensors $EVAL
    [ "$(evalval out loss)" = "$best" ] || fail "eval of --out gives loss $(evalval out loss), the best printed $best"
    # shellcheck disable=SC2086
    run 0 "$A" eval last.ckpt $EVAL
    [ "$(evalval out loss)" = "$best" ] || fail "lr 0 after step 100: the last state should equal the best"
    ok "--out is the best model (attend eval: loss $best), the checkpoint the last state"
    ;;

select)
    for sel in loss token seq; do
        # shellcheck disable=SC2086
        run 0 "$A" train --task reverse $NET --count 60 --steps 300 --warmup 0 --decay 0 --lr 0.01 \
            --eval-every 50 --select $sel --out $sel.safetensors
        cp out train_$sel
        case $sel in
        loss) col=loss; name=loss; label="dev loss"; cmp="<" ;;
        token) col=greedy-token; name=greedy_token_acc; label="dev greedy token accuracy"; cmp=">" ;;
        seq) col=greedy-seq; name=greedy_seq_acc; label="dev greedy sequence accuracy"; cmp=">" ;;
        esac
        best=$(sed -n "s/^saved: $sel.safetensors (the best model: step [0-9]*, $label \([0-9.]*\))\$/\1/p" out)
        [ -n "$best" ] || fail "--select $sel: no final line naming the best model"
        # the best of every evaluation printed (mid-run and the final "dev:")
        awk -v c="$col" -v b="$best" -v cmp="$cmp" '$1 == "eval" || $1 == "dev:" {
                for (i = 1; i < NF; i++) if ($i == c) { v = $(i + 1) + 0
                    if ((cmp == "<" && v < b - 1e-4) || (cmp == ">" && v > b + 1e-4)) { print; bad = 1 } } }
            END { exit bad }' out || fail "--select $sel: an evaluation beats the best printed ($best)"
        # shellcheck disable=SC2086
        run 0 "$A" eval $sel.safetensors $EVAL
        [ "$(evalval out $name)" = "$best" ] || fail "--select $sel: eval of --out gives $(evalval out $name), the best printed $best"
        ok "--select $sel: --out is the best evaluation's model (attend eval: $name $best)"
    done
    last=$(awk '$1 == "dev:" { print $5 }' train_loss)
    best=$(sed -n 's/^saved: loss.safetensors (the best model: step \([0-9]*\), .*/\1/p' train_loss)
    [ "$best" -lt 300 ] || fail "--select loss: the best is the last step (the check would be vacuous)"
    ok "--select loss: the best (step $best) is not the last model (dev loss $last at step 300)"
    ;;

resume)
    OVERFIT="--task reverse $NET --count 60 --warmup 0 --decay 0 --lr 0.01 --eval-every 50 --select loss"
    # shellcheck disable=SC2086
    run 0 "$A" train $OVERFIT --steps 200 --out best.st --checkpoint run.ckpt
    has out "^saved: best.st \(the best model: step 50, dev loss "
    cp best.st before.st
    best=$(sed -n 's/^saved: best.st (the best model: step 50, dev loss \([0-9.]*\))$/\1/p' out)
    # shellcheck disable=SC2086
    run 0 "$A" train $OVERFIT --steps 300 --out best.st --checkpoint run.ckpt --resume run.ckpt
    # the checkpoint carries the early-stopping state: the best so far, its step, the count since
    has out "^best so far: best.st, dev loss $best \(step 50, 3 evaluations without improvement since\)$"
    if grep -q '^best: ' out; then fail "a later (overfitted) evaluation replaced the best so far"; fi
    has out "^saved: best.st \(the best model: step 50, dev loss $best\)$"
    cmp -s best.st before.st || fail "--out changed although nothing beat it"
    ok "resumed: --out's dev loss ($best) is the one to beat, and nothing later beats it: --out unchanged"
    ;;

usage)
    printf 'ab\tba\ncd\tdc\n' >t.tsv
    run 2 "$A" train --train t.tsv --patience 2
    has err "--patience chooses by a dev score: give --dev FILE.tsv"
    run 2 "$A" train --train t.tsv --select seq
    has err "--select chooses by a dev score: give --dev FILE.tsv"
    run 2 "$A" train --task reverse --select bleu
    has err "--select: expected one of loss[|]token[|]seq, got .bleu."
    run 2 "$A" train --task reverse --patience 2 --eval-every 0
    has err "--patience counts evaluations during training"
    run 0 "$A" train --help
    has out "^  --select WHAT "
    has out "^  --patience N "
    ok "usage errors: --patience/--select without --dev, a bad --select, --patience without evaluations"
    ;;
mpi)
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    SMALL="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 200 --dev-count 20 --emb 8 --hidden 12
           --dec-hidden 16 --attn 8 --batch 8 --log-every 1000 --steps 200 --warmup 0 --decay 40 --eval-every 20
           --patience 2 --grad-shards 2"
    # shellcheck disable=SC2086
    run 0 "$A" train $SMALL --out plain.st
    has out "^early stop: "
    grep -E '^(best|early|trained: steps)' out | sed 's/ in .*//; s/: saved to .*//' >plain.lines
    # shellcheck disable=SC2086
    run 0 timeout 60 mpirun --oversubscribe -np 2 "$A" train $SMALL --out mpi.st
    grep -E '^(best|early|trained: steps)' out | sed 's/ in .*//; s/: saved to .*//' >mpi.lines
    cmp -s plain.lines mpi.lines || { diff plain.lines mpi.lines >&2; fail "-np 2 stopped elsewhere than one process"; }
    cmp -s plain.st mpi.st || fail "-np 2 saved another best model"
    ok "-np 2: every rank stops at the same evaluation; the best model is one process's"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
