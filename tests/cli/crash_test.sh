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
echo "$PASSED passed, 0 failed"
