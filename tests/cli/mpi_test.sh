#!/bin/sh
# mpi_test.sh — `attend train` under mpirun (issue 16; docs/SCALING.md). One
# case per property, tiny models, a few steps each:
#
#   sh tests/cli/mpi_test.sh CASE ATTEND WORK_DIR
#
#   same      -np 1, 2, 4 with the same --grad-shards 4: the same model bytes
#             as one plain process with --grad-shards 4 (also with --dropout
#             and --label-smoothing, -np 2); only rank 0 prints;
#             -np 3 with 6 shards likewise
#   resume    -np 2 for 6 steps with a checkpoint, resumed with -np 1 and with
#             -np 4 to 12 steps: the bytes of an uninterrupted -np 2 run
#   kill      kill -9 of rank 1 mid-run: the job exits non-zero within the
#             timeout and the last checkpoint resumes
#   signal    SIGTERM to every rank: all stop after one step, rank 0's
#             checkpoint, exit 143, resumed bit for bit; to rank 1 alone:
#             rank 0 decides, the run goes on (issue 28)
#   data      the training file readable on rank 0 only (each rank in its own
#             directory, the same relative path): the job fails with rank 1's
#             message; other data under the same name is refused naming rank 1
#   plain     (no mpirun, every configuration) --grad-shards in one process:
#             deterministic, not the 1-shard bytes, usage errors, --help;
#             resuming with another --grad-shards is refused (the fingerprint)
#   g2p       `attend g2p train` -np 2 (2 epochs of the sample dictionary, a
#             tiny model): the bytes of one process with --grad-shards 2
#   options   rank 1 started with another --seed (from its environment): refused
#             at start-up naming rank 1 and --seed; --batch not divisible by the
#             shards or the shards by the ranks is a usage error (2)
#
# mpirun runs as root in CI: OMPI_ALLOW_RUN_AS_ROOT* are set; 4 ranks on 2
# cores need --oversubscribe.
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
DICT=$(abs "$(dirname "$0")/../../data/g2p/cmudict-sample.dict")
A=$(abs "$A")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# containers often forbid the cross-memory attach of OpenMPI's shared-memory
# transport ("Read -1, expected ..."): copy through the shared segment instead
export OMPI_MCA_btl_vader_single_copy_mechanism=none
# no timeout(1) limit may be hit: a hang is a failure, not a pass
MPI="timeout 60 mpirun --oversubscribe"
# an explicit (constant) schedule: the one derived from --steps would differ
# between a run and its resumption to more steps
TINY="--emb 8 --hidden 12 --dec-hidden 16 --attn 8 --batch 8 --log-every 1000 --warmup 0 --decay 0"
TASK="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 60 --dev-count 10 $TINY"

# lines OUT: how many lines a run printed
lines() { wc -l <"$1" | tr -d ' '; }

case $CASE in
same)
    run 0 "$A" train $TASK --steps 10 --grad-shards 4 --out plain.st
    ok "one plain process, 4 shards"
    for np in 1 2 4; do
        run 0 $MPI -np $np "$A" train $TASK --steps 10 --grad-shards 4 --out np$np.st
        cmp -s plain.st np$np.st || fail "-np $np: the model differs from one process's"
        has out "^data-parallel: $np ranks, 4 gradient shards"
        [ "$(grep -c '^saved: ' out)" -eq 1 ] || fail "-np $np: 'saved:' printed $(grep -c '^saved: ' out) times"
        [ "$(grep -c '^data: ' out)" -eq 1 ] || fail "-np $np: ranks other than 0 printed"
        [ "$(grep -c '^step ' err)" -eq 1 ] || fail "-np $np: $(grep -c '^step ' err) progress lines (rank 0 alone logs)"
        [ "$(lines err)" -eq 1 ] || fail "-np $np: stderr has more than rank 0's progress line"
        ok "-np $np: the same bytes, rank 0 alone printed"
    done
    # dropout masks follow a row's place in the whole batch, not its rank (issue 14)
    R="--dropout 0.2 --label-smoothing 0.1"
    run 0 "$A" train $TASK --steps 10 --grad-shards 4 $R --out rplain.st
    run 0 $MPI -np 2 "$A" train $TASK --steps 10 --grad-shards 4 $R --out rnp2.st
    cmp -s rplain.st rnp2.st || fail "--dropout, --label-smoothing, -np 2: the model differs from one process's"
    ok "with --dropout and --label-smoothing: -np 2 gives one process's bytes"
    # 3 ranks of 6 shards: rank blocks that are not tree nodes (several nodes
    # per rank, chunks of uneven length)
    run 0 "$A" train $TASK --batch 12 --steps 6 --grad-shards 6 --out six.st
    run 0 $MPI -np 3 "$A" train $TASK --batch 12 --steps 6 --grad-shards 6 --out six3.st
    cmp -s six.st six3.st || fail "-np 3, 6 shards: the model differs from one process's"
    ok "-np 3 with 6 shards: the same bytes as one process"
    # the shards change the sum's grouping only: one shard is another model
    run 0 "$A" train $TASK --steps 10 --out one.st
    cmp -s one.st plain.st && fail "1 and 4 shards gave identical bytes: was the batch sharded at all?"
    ok "1 shard differs from 4 in the last bits (grouping)"
    ;;
resume)
    run 0 $MPI -np 2 "$A" train $TASK --grad-shards 4 --steps 12 --out whole.st
    ok "-np 2 uninterrupted to 12 steps"
    run 0 $MPI -np 2 "$A" train $TASK --grad-shards 4 --steps 6 --checkpoint half.ck
    has out "^checkpoint: step 6 saved to half.ck"
    for np in 1 4; do
        run 0 $MPI -np $np "$A" train $TASK --grad-shards 4 --steps 12 --resume half.ck --out r$np.st
        has out "^resumed: half.ck at step 6"
        cmp -s whole.st r$np.st || fail "resumed with -np $np: differs from the uninterrupted run"
        ok "resumed with -np $np: the same bytes"
    done
    run 0 "$A" train $TASK --grad-shards 4 --steps 12 --resume half.ck --out plain.st
    cmp -s whole.st plain.st || fail "resumed by a plain process: differs"
    ok "resumed by a plain process (--grad-shards 4): the same bytes"
    ;;
kill)
    # each rank writes its pid before becoming attend; rank 1 is killed once
    # the first checkpoint exists
    $MPI -np 2 sh -c 'echo $$ >pid.$OMPI_COMM_WORLD_RANK; exec "$0" "$@"' "$A" train $TASK --steps 1000000 \
        --checkpoint run.ck --checkpoint-every 20 >out 2>err &
    job=$!
    i=0
    while [ ! -s run.ck ] || [ ! -s pid.1 ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill $job; fail "no checkpoint after 30 s"; }
        sleep 0.1
    done
    kill -9 "$(cat pid.1)"
    t0=$(date +%s)
    wait $job
    rc=$?
    t1=$(date +%s)
    [ $rc -ne 0 ] || fail "the job exited 0 after a rank was killed"
    [ $rc -ne 124 ] || fail "the job hung until timeout(1) killed it"
    [ $((t1 - t0)) -le 30 ] || fail "the job took $((t1 - t0)) s to end"
    ok "kill -9 of rank 1: exit $rc after $((t1 - t0)) s"
    ls run.ck.tmp.* 2>/dev/null && fail "a temporary checkpoint is left"
    step=$(sed -n 's/^checkpoint: step \([0-9]*\) saved.*/\1/p' out | tail -n 1)
    [ -n "$step" ] || fail "no checkpoint line"
    run 0 "$A" train $TASK --grad-shards 2 --steps $((step + 2)) --resume run.ck --out after.st
    has out "^resumed: run.ck at step $step"
    ok "the last checkpoint (step $step) resumes"
    ;;
signal)
    # issue 28: SIGTERM to every rank (as a batch system sends it): rank 0
    # decides, every rank stops after the same step, rank 0 writes the
    # checkpoint and says how to resume; all exit 143; resumed, the model is
    # the uninterrupted run's. SIGTERM to rank 1 alone does not stop the run.
    run 0 $MPI -np 2 "$A" train $TASK --steps 1500 --out whole.st
    $MPI -np 2 sh -c 'echo $$ >pid.$OMPI_COMM_WORLD_RANK; exec "$0" "$@"' "$A" train $TASK --steps 1500 \
        --checkpoint ck.st --checkpoint-every 20 --out part.st >out 2>err &
    job=$!
    i=0
    while [ ! -s ck.st ] || [ ! -s pid.0 ] || [ ! -s pid.1 ]; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill $job; fail "no checkpoint after 30 s"; }
        sleep 0.1
    done
    kill -TERM "$(cat pid.0)" "$(cat pid.1)"
    wait $job
    rc=$?
    [ $rc -eq 143 ] || fail "SIGTERM to both ranks: exit status $rc, expected 143"
    has out "^interrupted \(SIGTERM\) at step [0-9]+: checkpoint ck.st holds step [0-9]+; to go on, run the same command with --resume ck.st$"
    [ "$(grep -c '^interrupted' out)" -eq 1 ] || fail "more than rank 0 spoke"
    step=$(sed -n 's/^interrupted (SIGTERM) at step \([0-9]*\):.*/\1/p' out)
    run 0 $MPI -np 2 "$A" train $TASK --steps 1500 --checkpoint ck.st --checkpoint-every 20 --resume ck.st --out part.st
    has out "^resumed: ck.st at step $step$"
    cmp -s whole.st part.st || fail "interrupted at step $step and resumed: the model differs from one -np 2 run's"
    ok "SIGTERM to every rank: all stop after step $step, rank 0's checkpoint, exit 143; resumed, the uninterrupted run's model"
    rm -f pid.0 pid.1 part.st out err # a stale "training:" line must not be taken for this run's
    $MPI -np 2 sh -c 'echo $$ >pid.$OMPI_COMM_WORLD_RANK; exec "$0" "$@"' "$A" train $TASK --steps 1500 \
        --out part.st >out 2>err &
    job=$!
    i=0
    while [ ! -s pid.1 ] || ! grep -q "^training: " out; do
        i=$((i + 1))
        [ $i -lt 300 ] || { kill $job; fail "the run did not start within 30 s"; }
        sleep 0.1
    done
    kill -TERM "$(cat pid.1)"
    wait $job
    rc=$?
    [ $rc -eq 0 ] || fail "SIGTERM to rank 1 alone: exit status $rc, expected 0 (rank 0 decides)"
    cmp -s whole.st part.st || fail "SIGTERM to rank 1 alone changed the model"
    ok "SIGTERM to rank 1 alone: rank 0 decides, the run goes on to its end"
    ;;
data)
    mkdir r0 r1
    awk 'BEGIN { for (i = 0; i < 40; i++) { w = substr("abcdefgh", 1 + i % 5, 2 + i % 4); r = "";
           for (j = length(w); j >= 1; j--) r = r substr(w, j, 1); print w "\t" r } }' >r0/w.tsv
    WHERE='cd r$OMPI_COMM_WORLD_RANK && exec "$0" "$@"'
    run 1 $MPI -np 2 sh -c "$WHERE" "$A" train --train w.tsv $TINY --steps 3
    has err "^\[rank 1\] attend train: .*w\.tsv"
    # (mpirun's own banner about the abort is not checked: under load its
    # help system can fail with "Out of resource")
    ok "rank 1 cannot read w.tsv: the job fails with its message"
    sed 's/a/b/' r0/w.tsv >r1/w.tsv
    run 1 $MPI -np 2 sh -c "$WHERE" "$A" train --train w.tsv $TINY --steps 3
    has err "rank 1 read other training data than rank 0"
    ok "other data under the same name: refused naming rank 1"
    ;;
options)
    run 2 $MPI -np 2 sh -c 'exec "$0" "$@" --seed $((1 + OMPI_COMM_WORLD_RANK))' "$A" train $TASK --steps 3
    has err "rank 1 was started with other options than rank 0: they differ at --seed '1'"
    [ "$(grep -c 'other options' err)" -eq 1 ] || fail "the refusal printed more than once"
    ok "rank 1's --seed differs: refused at start-up, once, naming rank 1 and --seed"
    run 2 $MPI -np 4 "$A" train $TASK --batch 6 --steps 3
    has err "--batch 6 is not divisible by 4 gradient shards"
    ok "--batch 6 over 4 ranks: usage error"
    run 2 $MPI -np 4 "$A" train $TASK --grad-shards 2 --steps 3
    has err "4 ranks do not divide --grad-shards 2"
    ok "--grad-shards 2 over 4 ranks: usage error"
    run 2 "$A" train $TASK --grad-shards 3 --steps 3
    has err "--batch 8 is not divisible by 3 gradient shards"
    ok "--grad-shards 3, --batch 8 in one process: usage error"
    ;;
plain)
    # no mpirun: any build takes --grad-shards (registered in every configuration)
    run 0 "$A" train $TASK --steps 6 --grad-shards 4 --out a.st
    run 0 "$A" train $TASK --steps 6 --grad-shards 4 --out b.st
    cmp -s a.st b.st || fail "--grad-shards 4 twice: other bytes"
    run 0 "$A" train $TASK --steps 6 --out one.st
    cmp -s a.st one.st && fail "--grad-shards 4 and 1 gave identical bytes: was the batch sharded at all?"
    ok "--grad-shards 4 in one process: deterministic, and not the 1-shard step"
    run 2 "$A" train $TASK --grad-shards 3 --steps 3
    has err "--batch 8 is not divisible by 3 gradient shards"
    run 2 "$A" train $TASK --grad-shards 16 --steps 3
    has err "--grad-shards 16 is more than --batch 8 rows"
    ok "--grad-shards 3 and 16 with --batch 8: usage errors"
    run 0 "$A" train --help
    has out "^  --grad-shards K"
    ok "--help lists --grad-shards"
    run 0 "$A" train $TASK --steps 6 --grad-shards 4 --checkpoint k4.ck --out k4.st
    run 1 "$A" train $TASK --steps 12 --grad-shards 2 --resume k4.ck --out k2.st
    has err "^attend train: k4.ck: checkpoint's grad_shards is 4, in this run 2 \(the gradients are summed in other groups\); resuming needs the same data and options$"
    run 0 "$A" train $TASK --steps 12 --grad-shards 4 --resume k4.ck --out k4b.st
    ok "resuming with another --grad-shards: refused naming both counts; the same count resumes"
    ;;
g2p)
    G="g2p train --dict $DICT --epochs 2 --emb 8 --hidden 8 --dec-hidden 16 --attn 8 --batch 16 --eval-words 60"
    G="$G --warmup 10 --log-every 100000 --checkpoint-every 0"
    run 0 "$A" $G --grad-shards 2 --out plain.st
    ok "g2p train, one plain process, 2 shards"
    run 0 $MPI -np 2 "$A" $G --out np2.st --checkpoint np2.ck
    cmp -s plain.st np2.st || fail "g2p train -np 2: the model differs from one process's"
    [ "$(grep -c '^epoch 2 step' out)" -eq 1 ] || fail "g2p train -np 2: ranks other than 0 printed"
    [ -s np2.ck ] || fail "g2p train -np 2: no checkpoint"
    ok "g2p train -np 2: the same bytes, rank 0 alone printed and wrote"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
