#!/bin/sh
# crash_test.sh — `attend train` survives kill -9 at any moment, and a full disk
# while writing a checkpoint (issue 7, docs/RELIABILITY.md).
#
#   sh tests/cli/crash_test.sh ATTEND WORK_DIR [KILLS]
#
# 1. Reference: N steps straight, no checkpoints -> full.safetensors.
# 2. The same training with a checkpoint after every step (so most of the wall
#    time is spent writing checkpoints and kills land inside writes), killed
#    with SIGKILL after a random delay (5-95% of a calibration run's time, so
#    the test adapts to the machine and build), KILLS times (6), each time restarted
#    with --resume from the checkpoint (from scratch while there is none).
#    After every kill:
#      (a) the checkpoint, if any, loads (attend decode reads it), and the next
#          run resumes exactly at the last step the killed run announced as
#          saved (or one later: killed between rename and the message);
#      (b) a temporary file left by a kill inside a write ("<ck>.tmp.<pid>")
#          is never read: the resumed step is the announced one, and the next
#          run that gets as far as reading its data has removed the file and
#          said so; none is left at the end. (An empty one, left by a kill
#          during the output check at the start, is removed the same way but
#          does not count as a kill inside a write.)
#    Then the run is finished without a kill and
#      (c) its model file equals full.safetensors byte for byte.
# 3. Full disk: with a file-size limit below the checkpoint's size (ulimit -f,
#    SIGXFSZ ignored, so write() fails with EFBIG as on a full disk), a resumed
#    run fails with exit 1 naming the checkpoint's temporary file and "File too
#    large"; the previous checkpoint is byte-identical and no temporary file is
#    left.
# 4. --select token --patience 3 (issue 28), killed with SIGKILL at random
#    points and resumed: every stopped run stops at the straight run's step
#    with its best model byte for byte; resuming a stopped run does nothing.
# 5. SIGINT / SIGTERM at random points (issue 28): exit 130/143, the
#    checkpoint of the step reached, the next run resumes exactly there, the
#    final model equals the straight run's.
# CRASH_SEED=N fixes the random delays (printed on every run).
set -u
A=$1
WORK=$2
KILLS=${3:-6}
case $A in /*) ;; *) A=$PWD/$A ;; esac
rm -rf "$WORK"
mkdir -p "$WORK" || exit 1
cd "$WORK" || exit 1
SEED=${CRASH_SEED:-$(date +%s)}
echo "crash_test: seed $SEED (CRASH_SEED=$SEED reproduces the delays)"
PASSED=0
fail() {
    echo "FAIL [crash] $*" >&2
    for f in out err; do
        if [ -s "$f" ]; then
            echo "--- $f:" >&2
            tail -n 20 "$f" >&2
        fi
    done
    echo "$PASSED passed, 1 failed"
    exit 1
}
ok() {
    PASSED=$((PASSED + 1))
    echo "ok [crash] $*"
}

N=80
OPTS="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 300 --dev-count 20 --emb 8 --hidden 16
      --dec-hidden 32 --batch 16 --warmup 5 --decay 60 --seed 3 --log-every 1000"
CK=ck.safetensors
echo abc >in

# shellcheck disable=SC2086
"$A" train $OPTS --steps $N --out full.safetensors >out 2>err || fail "reference run"
ok "reference: $N steps straight"

# calibration: how long a checkpointing run from scratch takes on this machine
# and build; the kill delays are drawn from 5%-95% of it, so kills land at every
# phase however fast the build is
t0=$(date +%s.%N)
# shellcheck disable=SC2086
"$A" train $OPTS --steps $N --checkpoint cal.safetensors --checkpoint-every 1 --out cal-final.safetensors >out 2>err ||
    fail "calibration run"
t1=$(date +%s.%N)
span=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
cmp -s full.safetensors cal-final.safetensors || fail "a checkpointing run differs from the reference"
rm -f cal.safetensors cal-final.safetensors
ok "a checkpointing run from scratch takes ${span}s and gives the reference model"

# kill until KILLS runs were killed, at least one inside a checkpoint write
# (at most 40 runs); a run that finishes first ends a cycle: its model must
# equal the reference, and the next cycle starts from scratch
i=0
killed=0
during_write=0
cycles=0
# the step of the last announced checkpoint; 0 before any: a run killed
# between the first checkpoint's rename and its announcement leaves step 1
last_saved=0
stale_left=0
while [ "$killed" -lt "$KILLS" ] || [ "$during_write" -lt 1 ]; do
    i=$((i + 1))
    [ "$i" -le 60 ] || fail "after 60 runs: $killed kills (wanted $KILLS), $during_write inside a checkpoint write (wanted 1)"
    resume=""
    [ -e "$CK" ] && resume="--resume $CK"
    delay=$(awk -v s="$SEED" -v i="$i" -v span="$span" \
        'BEGIN { srand((s % 100000) * 13 + i * 7919); d = span * (0.05 + 0.9 * rand()); printf "%.3f", d < 0.005 ? 0.005 : d }')
    # shellcheck disable=SC2086
    "$A" train $OPTS --steps $N --checkpoint $CK --checkpoint-every 1 $resume --out final.safetensors >out 2>err &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    if [ -n "$resume" ]; then
        got=$(sed -n 's/^resumed: .* at step \([0-9]*\)$/\1/p' out)
        [ -z "$got" ] || [ "$got" -eq "$last_saved" ] || [ "$got" -eq $((last_saved + 1)) ] ||
            fail "run $i resumed at step $got; the last announced checkpoint was step $last_saved"
        # the checkpoint it resumed from is now known to be complete, announced or
        # not (a kill between the rename and the announcement leaves it one ahead)
        [ -z "$got" ] || last_saved=$got
    fi
    if [ "$stale_left" = 1 ]; then
        # the removal is the first thing a run does; a run killed before it
        # even read its data (loaded slowly on a busy machine) defers the check
        if grep -q "^checkpoint: removed $CK.tmp.[0-9]*, left by process [0-9]*, which is gone$" out; then
            stale_left=0
        elif grep -q "^data:" out; then
            fail "run $i did not remove the temporary file the last kill left"
        else
            echo "  run $i: killed before it read its data; the removal is checked on the next run"
        fi
    fi
    saved=$(sed -n 's/^checkpoint: step \([0-9]*\) saved to .*/\1/p' out | tail -n 1)
    [ -n "$saved" ] && last_saved=$saved
    if [ "$rc" -eq 0 ]; then
        cycles=$((cycles + 1))
        cmp -s full.safetensors final.safetensors ||
            fail "cycle $cycles: killed and resumed training differs from training straight through"
        echo "  run $i: finished before the kill at ${delay}s: model == reference (cycle $cycles); starting over"
        rm -f "$CK" final.safetensors
        last_saved=0
        continue
    fi
    [ "$rc" -eq 137 ] || fail "run $i: exit status $rc, expected 137 (SIGKILL)"
    killed=$((killed + 1))
    where="between writes"
    tmp=$(ls "$CK".tmp.* 2>/dev/null | head -n 1)
    if [ -n "$tmp" ]; then
        stale_left=1
        # an empty one is (almost always) the check made before any work, which
        # creates and removes the writer's temporary name: not a write
        if [ -s "$tmp" ]; then
            during_write=$((during_write + 1))
            where="inside a checkpoint write ($tmp left)"
        else
            where="with an empty $tmp left (the output check at the start, or a write just begun)"
        fi
    fi
    if [ -e "$CK" ]; then
        "$A" decode "$CK" in >/dev/null 2>&1 || fail "run $i: the checkpoint does not load after the kill"
    fi
    echo "  run $i: killed after ${delay}s $where; last announced checkpoint: step $last_saved"
done
ok "$killed kills at random points ($during_write inside a checkpoint write): the checkpoint loaded after every one, each resume started at the last announced step, every temporary file left was removed by the next run"

# finish the last cycle without a kill
resume=""
[ -e "$CK" ] && resume="--resume $CK"
# shellcheck disable=SC2086
"$A" train $OPTS --steps $N --checkpoint $CK --checkpoint-every 1 $resume --out final.safetensors >out 2>err ||
    fail "final run"
if ls "$CK".tmp.* >/dev/null 2>&1; then fail "temporary files remain: $(ls "$CK".tmp.*)"; fi
ok "no temporary file was read as a checkpoint, and none is left"
cycles=$((cycles + 1))
cmp -s full.safetensors final.safetensors || fail "killed and resumed training differs from training straight through"
ok "$cycles cycle(s) of kill + resume: each final model equals $N steps straight, byte for byte"

# full disk: a checkpoint write that fails half-way keeps the previous one
cp "$CK" before.safetensors
size=$(wc -c <"$CK")
blocks=$((size / 2048)) # under half the file in 512- or 1024-byte units
# shellcheck disable=SC2086
(trap '' XFSZ; ulimit -f "$blocks"; exec "$A" train $OPTS --steps $((N + 5)) --checkpoint $CK --checkpoint-every 1 \
    --resume $CK --out more.safetensors) >out 2>err
rc=$?
[ "$rc" -eq 1 ] || fail "full disk: exit status $rc, expected 1"
grep -Eq "^attend train: attend_st_write: cannot write '$CK.tmp.[0-9]+': File too large$" err ||
    fail "full disk: no 'cannot write ... File too large' message"
cmp -s before.safetensors "$CK" || fail "full disk: the previous checkpoint changed"
if ls "$CK".tmp.* >/dev/null 2>&1; then fail "full disk: a temporary file remains"; fi
[ ! -e more.safetensors ] || fail "full disk: a model file was written"
"$A" decode "$CK" in >/dev/null 2>&1 || fail "full disk: the previous checkpoint does not load"
ok "a full disk while writing a checkpoint: exit 1 with the reason, the previous checkpoint intact and loadable"

# 4. Early stopping (issue 28): --select token --patience 3 with evaluations
# every 5 steps and a checkpoint after every step, killed with SIGKILL at
# random points and resumed until it stops; each stopped run's best model and
# stop step equal the straight run's, and resuming a stopped run does nothing.
P="$OPTS --eval-every 5 --select token --patience 3 --lr 0.01"
PN=400
# shellcheck disable=SC2086
"$A" train $P --steps $PN --out pfull.safetensors >out 2>err || fail "patience: reference run"
pstop=$(sed -n 's/^trained: steps 1-\([0-9]*\) .*/\1/p' out)
grep -q "^early stop: " out || fail "patience: the reference run did not stop early"
grep '^early stop: ' out >pstop.line
t0=$(date +%s.%N)
# shellcheck disable=SC2086
"$A" train $P --steps $PN --checkpoint pcal.ck --checkpoint-every 1 --out pcal.safetensors >out 2>err ||
    fail "patience: calibration run"
t1=$(date +%s.%N)
pspan=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
cmp -s pfull.safetensors pcal.safetensors || fail "patience: a checkpointing run chose another best model"
rm -f pcal.ck pcal.safetensors
pkills=0
pcycles=0
i=0
while [ "$pkills" -lt 4 ]; do
    i=$((i + 1))
    [ "$i" -le 40 ] || fail "patience: after 40 runs only $pkills kills"
    resume=""
    [ -e p.ck ] && resume="--resume p.ck"
    delay=$(awk -v s="$SEED" -v i="$i" -v span="$pspan" \
        'BEGIN { srand((s % 100000) * 17 + i * 104729); d = span * (0.05 + 0.9 * rand()); printf "%.3f", d < 0.005 ? 0.005 : d }')
    # shellcheck disable=SC2086
    "$A" train $P --steps $PN --checkpoint p.ck --checkpoint-every 1 $resume --out p.safetensors >out 2>err &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    if [ "$rc" -eq 0 ]; then
        pcycles=$((pcycles + 1))
        grep '^early stop: ' out | grep -v "nothing to do" >got.line
        if grep -q "nothing to do" out; then
            echo "  patience run $i: resumed a stopped run: nothing to do"
        else
            cmp -s pstop.line got.line || fail "patience cycle $pcycles: stopped otherwise: $(cat got.line)"
        fi
        cmp -s pfull.safetensors p.safetensors ||
            fail "patience cycle $pcycles: the best model differs from the straight run's"
        cp p.safetensors p.before
        # shellcheck disable=SC2086
        "$A" train $P --steps $PN --checkpoint p.ck --checkpoint-every 1 --resume p.ck --out p.safetensors >out 2>err ||
            fail "patience: resuming the stopped run failed"
        grep -q "^early stop: this run stopped at step $pstop .*nothing to do$" out ||
            fail "patience: resuming the stopped run did not say it stopped at step $pstop"
        cmp -s p.safetensors p.before || fail "patience: resuming the stopped run replaced --out"
        echo "  patience run $i: finished before the kill at ${delay}s: stop and best model == straight run (cycle $pcycles)"
        rm -f p.ck p.safetensors
        continue
    fi
    [ "$rc" -eq 137 ] || fail "patience run $i: exit status $rc, expected 137"
    pkills=$((pkills + 1))
    echo "  patience run $i: killed after ${delay}s"
done
resume=""
[ -e p.ck ] && resume="--resume p.ck"
# shellcheck disable=SC2086
"$A" train $P --steps $PN --checkpoint p.ck --checkpoint-every 1 $resume --out p.safetensors >out 2>err ||
    fail "patience: final run"
pcycles=$((pcycles + 1))
cmp -s pfull.safetensors p.safetensors || fail "patience: killed and resumed, the best model differs from the straight run's"
if ! grep -q "nothing to do" out; then
    grep '^early stop: ' out >got.line
    cmp -s pstop.line got.line || fail "patience: the resumed run stopped otherwise: $(cat got.line)"
fi
ok "--patience: $pkills kills at random points, $pcycles cycle(s): each stopped at step $pstop with the straight run's best model, byte for byte; a stopped run resumed does nothing"

# 5. SIGINT and SIGTERM (issue 28) at random points: exit 130/143 with a
# checkpoint of the step reached, announced; the next run resumes exactly
# there; the final model equals the straight run's. (A script's background
# job starts with SIGINT ignored, which attend keeps: env restores the default.)
sigs=0
i=0
rm -f "$CK" final.safetensors
while [ "$sigs" -lt 4 ]; do
    i=$((i + 1))
    [ "$i" -le 40 ] || fail "signals: after 40 runs only $sigs interrupted"
    sig=INT
    code=130
    if [ $((i % 2)) -eq 0 ]; then sig=TERM; code=143; fi
    resume=""
    [ -e "$CK" ] && resume="--resume $CK"
    delay=$(awk -v s="$SEED" -v i="$i" -v span="$span" \
        'BEGIN { srand((s % 100000) * 19 + i * 7867); d = span * (0.05 + 0.9 * rand()); printf "%.3f", d < 0.005 ? 0.005 : d }')
    # shellcheck disable=SC2086
    env --default-signal=INT "$A" train $OPTS --steps $N --checkpoint $CK --checkpoint-every 1 $resume --out final.safetensors >out 2>err &
    pid=$!
    sleep "$delay"
    kill -$sig "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rc=$?
    if [ -n "$resume" ]; then
        got=$(sed -n 's/^resumed: .* at step \([0-9]*\)$/\1/p' out)
        [ -z "$got" ] || [ "$got" -eq "$stopped_at" ] || fail "signals run $i resumed at step $got, the interrupted run saved step $stopped_at"
    fi
    if [ "$rc" -eq 0 ]; then
        cmp -s full.safetensors final.safetensors || fail "signals: interrupted and resumed training differs from training straight through"
        echo "  signals run $i: finished before SIG$sig at ${delay}s: model == reference; starting over"
        rm -f "$CK" final.safetensors
        continue
    fi
    [ "$rc" -eq "$code" ] || fail "signals run $i: SIG$sig gave exit status $rc, expected $code"
    if ! grep -q "^data:" out; then
        # before attend's handler existed (env or the loader still starting, on a busy machine): the
        # default action, which is not what this part checks; not counted
        echo "  signals run $i: SIG$sig after ${delay}s reached the process before it started"
        continue
    fi
    stopped_at=$(sed -n 's/^interrupted (SIG[A-Z]*) at step \([0-9]*\): checkpoint .* holds step \([0-9]*\);.*/\2/p' out)
    if [ -z "$stopped_at" ]; then
        # the signal came before the first step (still loading): no step, nothing new to save
        grep -q "^interrupted (SIG$sig) at step [0-9]*:" out || fail "signals run $i: no 'interrupted' message"
        stopped_at=$(sed -n 's/^interrupted (SIG[A-Z]*) at step \([0-9]*\):.*/\1/p' out)
    fi
    grep -q "^checkpoint: step $stopped_at saved to $CK$" out || [ -n "$resume" ] ||
        fail "signals run $i: the checkpoint of step $stopped_at was not announced"
    sigs=$((sigs + 1))
    echo "  signals run $i: SIG$sig after ${delay}s: exit $code, checkpoint of step $stopped_at"
done
resume=""
[ -e "$CK" ] && resume="--resume $CK"
# shellcheck disable=SC2086
"$A" train $OPTS --steps $N --checkpoint $CK --checkpoint-every 1 $resume --out final.safetensors >out 2>err ||
    fail "signals: final run"
if [ -n "$resume" ]; then
    got=$(sed -n 's/^resumed: .* at step \([0-9]*\)$/\1/p' out)
    [ "$got" -eq "$stopped_at" ] || fail "signals: the final run resumed at step $got, not $stopped_at"
fi
cmp -s full.safetensors final.safetensors || fail "signals: interrupted and resumed training differs from training straight through"
ok "$sigs runs stopped by SIGINT/SIGTERM at random points: exit 130/143, a checkpoint of the step reached, resumed exactly there; the final model equals $N steps straight"
echo "$PASSED passed, 0 failed"
