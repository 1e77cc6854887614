#!/bin/sh
# nothing_lost_test.sh — issue 28, "Nothing lost, no one let in" (docs/RELIABILITY.md):
# one case per row of the issue's table, each of which failed at 7bd037c.
#
#   sh tests/cli/nothing_lost_test.sh CASE ATTEND WORK_DIR
#
#   oom        (1, 14) every command under ulimit -v from 10 to 300 MB works or
#              exits 1 at once naming the allocation and only options that
#              command has (or that none lowers it)
#   patience   (2) --select/--patience stopped by a run that ends after a
#              checkpoint, resumed: the same stop step and --out byte for byte
#              as one run; resuming the stopped run does nothing. g2p train
#              the same, killed with SIGKILL after an epoch without improvement;
#              an older checkpoint resumes with a note (train, g2p train)
#   signal     (3) SIGINT and SIGTERM during training: exit 130/143, a
#              checkpoint of the step reached and how to resume, and the
#              resumed model equals one run's; without --checkpoint, --out;
#              a second signal ends the process at once
#   overwrite  (4) an existing checkpoint without --resume: usage error naming
#              --resume and --overwrite, the checkpoint unchanged (train, g2p
#              train); --overwrite replaces it
#   atomic     (5) align --svg/--html, sweep --csv/--svg, quantize --out, g2p
#              data --out under a file-size limit (and on a full file system
#              when one can be mounted): exit 1 with the system's reason, the
#              earlier files unchanged, no temporary left
#   fifo       (6) a FIFO as a model, checkpoint, --resume, --rescore, quantize
#              or g2p --model: refused at once; a FIFO of data (--dict) read
#              as a stream
#   stdout     (5, 6) an output that is standard output (/dev/stdout,
#              /dev/fd/1, /proc/self/fd/1; a file or a pipe behind it): train
#              --out with --write-special, align --svg, sweep --svg/--csv write
#              the file's bytes alone on stdout, byte for byte the regular
#              file's, once (sweep), the report on stderr; refused without
#              --write-special and with --select; a failed copy keeps the model;
#              a socket as stdout refused before any work
#   symlink    (7) a symbolic link planted at train's temporary name during the
#              run: the victim untouched, --out a regular file
#   lock       (8) a second train writing the same --out/--checkpoint: refused
#              naming the first's process; a dead process's lock taken over
#   space      (9) --out on a full file system: refused before training; the
#              file system filled during the run: the message says the
#              checkpoint holds the weights (needs mount, as root)
#   terminal   (10) escape sequences in words and file names reach neither
#              stderr nor stdout raw
#   configdiff (11) resuming with --normalizer, --coverage, --copy,
#              --monotonic, --layers 2 names the field and both values
#   selectout  (12) --select with --out of another run or configuration is
#              refused (resumed or not); --overwrite replaces it
#   emptyeval  (13) g2p eval of parts without words prints n/a
#   messages   (14) --train - is stdin; -- ends options (decode); trailing
#              blank lines ignored; --help > /dev/full exits 1 everywhere;
#              --out "" is a usage error (2)
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
SRC=$(abs "$(dirname "$0")/../..")
A=$(abs "$A")
WORK=$(abs "$WORK")
D=$WORK/$CASE
umount "$D/mnt" 2>/dev/null # a tmpfs of an earlier, interrupted run
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0
trap 'umount "$D/mnt" 2>/dev/null' EXIT # the cases that mount a tmpfs, whatever happens
G=$SRC/models/g2p-cmudict.safetensors
DICT=$SRC/data/g2p/cmudict-sample.dict
TINY="--emb 8 --hidden 16 --dec-hidden 32 --attn 8 --batch 16 --log-every 1000"
TASK="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 200 --dev-count 20 $TINY"

# words.tsv: 200 pairs of a-f words and their reversals, deterministic
awk 'BEGIN { s = 7; for (i = 0; i < 200; i++) { w = ""; n = 2 + i % 4;
       for (j = 0; j < n; j++) { s = (s * 1103515245 + 12345) % 2147483648; w = w substr("abcdef", 1 + int(s / 65536) % 6, 1) }
       r = ""; for (j = n; j >= 1; j--) r = r substr(w, j, 1); print w "\t" r } }' >words.tsv

sanitized() { [ "${ATTEND_SANITIZED:-0}" = 1 ] || grep -q __asan_init "$A" 2>/dev/null; }
# wait_for FILE PATTERN SECONDS: until a line of FILE matches, or fail
wait_for() {
    n=0
    while ! grep -Eq -- "$2" "$1" 2>/dev/null; do
        n=$((n + 1))
        [ "$n" -le $(($3 * 20)) ] || fail "no line matching '$2' in $1 within $3 s"
        sleep 0.05
    done
}
# caller_state CHECKPOINT KEY: the value of KEY in the checkpoint's caller
# state (attend.caller, "early-stopping v1 ... bad=1 last=255 ..."); empty
# while there is no checkpoint
caller_state() {
    [ -f "$1" ] || return 0
    python3 - "$1" "$2" <<'PY'
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
fields = json.loads(b[8:8 + n]).get("__metadata__", {}).get("attend.caller", "").split()
print(next((f.split("=", 1)[1] for f in fields if f.startswith(sys.argv[2] + "=")), ""))
PY
}
# strip_caller CHECKPOINT: rewritten as an older attend wrote it, without the
# caller's state (the attend.caller metadata: the early-stopping state)
strip_caller() {
    python3 - "$1" <<'PY' || fail "could not rewrite $1 without attend.caller"
import json, struct, sys
b = open(sys.argv[1], "rb").read()
n = struct.unpack("<Q", b[:8])[0]
h = json.loads(b[8:8 + n])
del h["__metadata__"]["attend.caller"]
t = json.dumps(h, separators=(",", ":")).encode()
t += b" " * (-len(t) % 8)
open(sys.argv[1], "wb").write(struct.pack("<Q", len(t)) + t + b[8 + n:])
PY
}
# no_raw_esc FILE: the file holds no ESC byte
no_raw_esc() { if LC_ALL=C grep -q "$(printf '\033')" "$1"; then fail "$1 holds a raw escape character"; fi; }

case $CASE in
oom)
    if sanitized; then
        ok "sanitizer build: ulimit -v would break the sanitizer, not checked"
    elif [ "${ATTEND_OPENBLAS:-0}" = 1 ] || "$A" --version | grep -q "gemm: openblas"; then
        ok "OpenBLAS linked: its start-up hangs under ulimit -v (issue 25); checked in the builds with attend's own GEMM"
    else
        run 0 "$A" train $TASK --steps 3 --out rev.st
        echo abc >in.txt
        checked=0
        failed=0
        for cmdline in "train $TASK --steps 2 --out m.st" "decode rev.st in.txt" "decode $G in.txt" "eval rev.st --task reverse" \
            "g2p --model $G hello" "g2p eval --model $G --dict $DICT --max-words 20" \
            "g2p train --dict $DICT --epochs 1 --emb 8 --hidden 8 --dec-hidden 8 --attn 8 --eval-words 5 --out g.st --overwrite" \
            "g2p data --dict $DICT" "align $G hello" "align rev.st abc --svg a.svg" "intervene rev.st abc" \
            "quantize $G --to int8 --out q.st" "sweep --lengths 4 --steps 2 --train-pairs 200 --dev-pairs 20 --csv s.csv --svg s.svg" \
            "demo --steps 2" "explain seed000-table14.1" "version"; do
            set -- $cmdline
            sub=$1
            [ "$1" = g2p ] && case ${2:-} in train | eval | data) sub="$1 $2" ;; esac
            "$A" $sub --help >help.txt 2>&1
            for v in 10000 20000 40000 80000 300000; do
                (ulimit -v $v && exec timeout 60 "$A" $cmdline) >out 2>err
                rc=$?
                checked=$((checked + 1))
                [ $rc -ne 124 ] || fail "ulimit -v $v: attend $cmdline hung (killed after 60 s)"
                [ $rc -eq 0 ] && continue
                failed=$((failed + 1))
                [ $rc -eq 1 ] || fail "ulimit -v $v: attend $cmdline: exit status $rc, expected 0 or 1"
                grep -Eq "out of memory|not enough memory" err || fail "ulimit -v $v: attend $cmdline failed without naming memory"
                named=0
                for opt in $(grep -o -- '--[a-z][a-z-]*' err | sort -u); do
                    grep -q -- "^  $opt" help.txt || fail "ulimit -v $v: attend $cmdline names $opt, which 'attend $sub' does not have"
                    named=1
                done
                [ $named = 1 ] || grep -q "no option of this command lowers it" err ||
                    fail "ulimit -v $v: attend $cmdline names no option that lowers its memory (and does not say none does)"
            done
        done
        at_least "$failed" 5
        ok "$checked runs under ulimit -v 10-300 MB: none hung; the $failed that failed exited 1 naming the allocation and only options of their command"
    fi
    ;;

patience)
    # train: a run ended (at step K, after its checkpoint) and resumed stops
    # where one run stops, with the same --out; explicit --warmup/--decay make
    # --steps K the same run up to K
    R="$TASK --warmup 0 --decay 400 --eval-every 10 --checkpoint-every 10 --select token --patience 3 --lr 0.01"
    run 0 "$A" train $R --steps 400 --out straight.st --checkpoint straight.ck
    stop=$(sed -n 's/^trained: steps 1-\([0-9]*\) .*/\1/p' out)
    has out "^early stop: "
    grep -E '^(best|early stop|saved)' out >straight.lines
    [ -n "$stop" ] && [ "$stop" -ge 40 ] || fail "the straight run stopped at '$stop'"
    K=$((stop - 10)) # an evaluation without improvement (patience 3 > 1) lies before it
    run 0 "$A" train $R --steps $K --out r.st --checkpoint r.ck
    run 0 "$A" train $R --steps 400 --out r.st --checkpoint r.ck --resume r.ck
    has out "^resumed: r.ck at step $K$"
    has out "^best so far: r.st, dev greedy token accuracy [0-9.]+ \(step [0-9]+, [1-9] evaluations? without improvement since\)$"
    has out "^trained: steps $((K + 1))-$stop "
    grep -E '^(best:|early stop|saved)' out | sed 's/r\.st/straight.st/' >resumed.lines
    grep -E '^(best:|early stop|saved)' straight.lines | grep -v "^best: step [0-9]*,.*saved" >want.lines
    grep -v "^best: step [0-9]*,.*saved" resumed.lines >got.lines
    cmp -s want.lines got.lines || { diff want.lines got.lines >&2; fail "the resumed run stopped or chose otherwise than one run"; }
    cmp -s straight.st r.st || fail "the resumed run's --out differs from one run's"
    ok "train --select token --patience 3: ended at step $K and resumed, it stops at step $stop as one run does; --out equal byte for byte"
    cp r.st r.before
    cp r.ck ck.before
    run 0 "$A" train $R --steps 400 --out r.st --checkpoint r.ck --resume r.ck
    has out "^early stop: this run stopped at step $stop .*nothing to do$"
    if grep -q "^trained:" out; then fail "resuming the stopped run trained on"; fi
    cmp -s r.st r.before || fail "resuming the stopped run replaced --out"
    cmp -s r.ck ck.before || fail "resuming the stopped run replaced the checkpoint"
    ok "resuming a run that stopped early says so and changes nothing"
    # a checkpoint from before the early-stopping state (no attend.caller
    # metadata): it resumes, and a note states the defaults assumed
    run 0 "$A" train $R --steps $K --out o.st --checkpoint o.ck
    strip_caller o.ck
    run 0 "$A" train $R --steps 400 --out o.st --checkpoint o.ck --resume o.ck
    has err "^attend train: note: o.ck: an older checkpoint without the early-stopping state: assumed 0 evaluations without improvement, not stopped, and --out's dev score as the best so far$"
    has out "^resumed: o.ck at step $K$"
    has out "^best so far: o.st, dev greedy token accuracy "
    ok "an older checkpoint without the state resumes with a note stating the defaults assumed"
    # g2p train the same: an older checkpoint of 2 epochs, resumed for a third
    GO="--dict $DICT --emb 8 --hidden 8 --dec-hidden 8 --attn 8 --eval-words 20 --patience 5 --log-every 100000"
    run 0 "$A" g2p train $GO --epochs 2 --out go.st --checkpoint go.ck
    strip_caller go.ck
    run 0 "$A" g2p train $GO --epochs 3 --out go.st --checkpoint go.ck --resume go.ck
    has err "^attend g2p train: note: go.ck: an older checkpoint without the early-stopping state: assumed 0 epochs without improvement, not stopped, and --out's dev WER as the best so far$"
    has out "^resumed: go.ck at step [0-9]+$"
    has out "^best so far: go.st, dev WER "
    has out "^epoch 3 step "
    ok "g2p train: an older checkpoint without the state resumes with the note too"
    # g2p train: killed with SIGKILL after an epoch without improvement, resumed
    GT="--dict $DICT --emb 16 --hidden 32 --dec-hidden 32 --attn 16 --epochs 30 --warmup 20 --lr 0.01 --patience 2
        --eval-words 60 --log-every 100000 --checkpoint-every 17"
    run 0 "$A" g2p train $GT --out gs.st --checkpoint gs.ck
    has out "^early stop: no better dev WER for 2 epochs$"
    gstop=$(sed -n 's/^trained: steps 1-\([0-9]*\) .*/\1/p' out)
    # the epoch before the one that stopped the run: without improvement (patience 2)
    after=$(awk '/^epoch / { e = $2 } END { print e - 1 }' out)
    grep "^epoch $after " out | grep -q "best: saved" && fail "g2p: epoch $after improved (patience 2 should stop 2 epochs later)"
    # the epoch after it trains in a fraction of a second, so a poll of the
    # output file can miss it. The run writes into a pipe read line by line
    # here: its line of epoch $after stops it (SIGSTOP) at once; then it runs
    # on in slices of 10 ms until its checkpoint holds that epoch's state (one
    # epoch without improvement), and SIGKILL ends it there, mid-epoch.
    rm -f kout kerr kfifo # a stale line must not be taken for this run's
    mkfifo kfifo
    "$A" g2p train $GT --out gk.st --checkpoint gk.ck >kfifo 2>kerr &
    pid=$!
    exec 3<kfifo
    seen=0
    while IFS= read -r line <&3; do
        printf '%s\n' "$line" >>kout
        case $line in "epoch $after "*) kill -STOP $pid 2>/dev/null; seen=1; break ;; esac
    done
    cat <&3 >>kout & # the rest of its output (none, once killed)
    exec 3<&-
    [ $seen = 1 ] || { cat kout kerr >&2; fail "g2p: no line 'epoch $after' from the run to be killed"; }
    n=0
    until [ "$(caller_state gk.ck bad)" = 1 ]; do
        n=$((n + 1))
        [ $n -le 1000 ] || fail "g2p: the checkpoint never held epoch $after's state"
        kill -CONT $pid 2>/dev/null || break
        sleep 0.01
        kill -STOP $pid 2>/dev/null || break
    done
    kill -9 $pid 2>/dev/null
    wait $pid
    krc=$?
    wait # the cat
    [ $krc -eq 137 ] || fail "g2p: the run ended (exit $krc) before the kill after epoch $after"
    run 0 "$A" g2p train $GT --out gk.st --checkpoint gk.ck --resume gk.ck
    has out "^best so far: gk.st, dev WER [0-9.]+% \(step [0-9]+, [1-9] epochs? without improvement since\)$"
    has out "^trained: steps [0-9]+-$gstop "
    cmp -s gs.st gk.st || fail "g2p: the killed and resumed run's --out differs from one run's"
    cp gk.st gk.before
    run 0 "$A" g2p train $GT --out gk.st --checkpoint gk.ck --resume gk.ck
    has out "^early stop: this run stopped at step $gstop .*nothing to do$"
    cmp -s gk.st gk.before || fail "g2p: resuming the stopped run replaced --out"
    ok "g2p train --patience 2: killed after epoch $after (no improvement), resumed, it stops at step $gstop as one run does; --out equal; a second resume does nothing"
    ;;

signal)
    # a script's background job starts with SIGINT ignored, and attend keeps an
    # ignored signal ignored (as nohup's users expect): the default restored
    # for the jobs here (coreutils env)
    env --default-signal=INT true || fail "env --default-signal=INT is missing (coreutils >= 8.31)"
    BG="env --default-signal=INT"
    R="$TASK --steps 3000 --warmup 0 --decay 3000"
    run 0 "$A" train $R --out full.st
    for sig in INT TERM; do
        code=130
        [ $sig = TERM ] && code=143
        rm -f ck.st m.st
        rm -f out err # a stale line must not be taken for this run's
        $BG "$A" train $R --checkpoint ck.st --checkpoint-every 50 --out m.st >out 2>err &
        pid=$!
        wait_for out "^checkpoint: step (100|150|200) saved" 60
        kill -$sig $pid
        wait $pid
        rc=$?
        [ $rc -eq $code ] || fail "SIG$sig: exit status $rc, expected $code"
        has out "^interrupted \(SIG$sig\) at step [0-9]+: checkpoint ck.st holds step [0-9]+; to go on, run the same command with --resume ck.st$"
        step=$(sed -n 's/^interrupted (SIG[A-Z]*) at step \([0-9]*\):.*/\1/p' out)
        has out "^checkpoint: step $step saved to ck.st$"
        run 0 "$A" train $R --checkpoint ck.st --checkpoint-every 50 --out m.st --resume ck.st
        has out "^resumed: ck.st at step $step$"
        cmp -s full.st m.st || fail "SIG$sig: the resumed model differs from one run's"
        ok "SIG$sig at step $step: exit $code, checkpoint of that step, how to resume; the resumed model equals one run's"
    done
    # without --checkpoint: --out holds the model of the step reached
    rm -f m.st
    rm -f out err # a stale line must not be taken for this run's
    $BG "$A" train $R --out m.st >out 2>err &
    pid=$!
    wait_for out "^training: " 60
    sleep 0.3
    kill -INT $pid
    wait $pid
    rc=$?
    [ $rc -eq 130 ] || fail "without --checkpoint: exit status $rc, expected 130"
    has out "^interrupted \(SIGINT\) at step [0-9]+: the model of step [0-9]+ saved to m.st \(not resumable"
    echo abc >in.txt
    run 0 "$A" decode m.st in.txt
    ok "without --checkpoint: SIGINT saves --out (the model of the step reached) and says it is not resumable"
    # a second signal ends the process at once: the first lands in a long step
    # (a big batch of long sequences), the second before that step ends
    BIG="--task reverse --symbols 30 --min-len 60 --max-len 80 --count 128 --dev-count 4 --emb 32 --hidden 128
         --dec-hidden 256 --attn 32 --batch 128 --steps 3 --log-every 1"
    rm -f out err # a stale line must not be taken for this run's
    $BG "$A" train $BIG --out big.st >out 2>err &
    pid=$!
    wait_for out "^training: " 60
    sleep 0.3
    kill -INT $pid
    sleep 0.1
    kill -INT $pid 2>/dev/null
    wait $pid
    rc=$?
    [ $rc -eq 130 ] || fail "two SIGINTs: exit status $rc, expected 130 (killed by SIGINT)"
    if grep -q "^interrupted" out; then fail "the second signal did not end the process at once"; fi
    ok "a second SIGINT ends the process at once (exit 130, nothing more written)"
    ;;

overwrite)
    run 0 "$A" train $TASK --steps 40 --checkpoint old.ck --out m.st
    cp old.ck old.orig
    run 2 "$A" train $TASK --steps 20 --checkpoint old.ck --out m.st
    has err "^attend train: --checkpoint 'old.ck' exists: continue that run with --resume old.ck, or start over with --overwrite \(which replaces it\)$"
    cmp -s old.ck old.orig || fail "the existing checkpoint changed"
    if grep -q "^trained:" out; then fail "it trained"; fi
    run 2 "$A" train $TASK --steps 20 --checkpoint old.ck --resume other.ck --out m.st
    has err "^attend train: --checkpoint 'old.ck' exists and is not the --resume file"
    cmp -s old.ck old.orig || fail "the existing checkpoint changed"
    run 0 "$A" train $TASK --steps 20 --checkpoint old.ck --out m.st --overwrite
    has out "^checkpoint: step 20 saved to old.ck$"
    if cmp -s old.ck old.orig; then fail "--overwrite did not replace the checkpoint"; fi
    ok "train: an existing checkpoint without --resume is a usage error naming --resume and --overwrite; --overwrite replaces it"
    GT="--dict $DICT --emb 8 --hidden 8 --dec-hidden 8 --attn 8 --epochs 1 --eval-words 5"
    run 0 "$A" g2p train $GT --checkpoint g.ck --out g.st
    cp g.ck g.orig
    run 2 "$A" g2p train $GT --checkpoint g.ck --out g2.st
    has err "^attend g2p train: --checkpoint 'g.ck' exists: continue that run with --resume g.ck, or start over with --overwrite"
    cmp -s g.ck g.orig || fail "g2p: the existing checkpoint changed"
    ok "g2p train: the same"
    ;;

atomic)
    run 0 "$A" train $TASK --steps 3 --out rev.st
    echo "<svg>the earlier picture</svg>" >a.svg
    echo "<html>the earlier page</html>" >a.html
    cp a.svg a.svg.orig
    cp a.html a.html.orig
    # a file-size limit below the SVG's size, as a full disk (write fails with EFBIG)
    (trap '' XFSZ; ulimit -f 2 && exec "$A" align "$G" attention --svg a.svg) >out 2>err
    rc=$?
    [ $rc -eq 1 ] || fail "align --svg over the limit: exit status $rc, expected 1"
    has err "^attend align: cannot write 'a.svg.tmp.[0-9]+': File too large \(the previous a.svg is unchanged\)$"
    cmp -s a.svg a.svg.orig || fail "a.svg changed"
    (trap '' XFSZ; ulimit -f 2 && exec "$A" align "$G" attention --html a.html) >out 2>err
    [ $? -eq 1 ] || fail "align --html over the limit: not exit 1"
    has err "File too large"
    cmp -s a.html a.html.orig || fail "a.html changed"
    if ls ./*.tmp.* >/dev/null 2>&1; then fail "temporaries left: $(ls ./*.tmp.*)"; fi
    ok "align --svg/--html over a file-size limit: exit 1 with the reason, the earlier files unchanged, no temporary left"
    echo "<svg>the earlier plot</svg>" >s.svg
    cp s.svg s.orig
    (trap '' XFSZ; ulimit -f 1 && exec "$A" sweep --lengths 4 --steps 2 --train-pairs 200 --dev-pairs 20 --csv s.csv --svg s.svg) >out 2>err
    [ $? -eq 1 ] || fail "sweep over the limit: not exit 1"
    has err "File too large"
    cmp -s s.svg s.orig || fail "s.svg changed"
    head -n 1 s.csv | grep -q "^model,decoder," || fail "s.csv is not a whole CSV: $(head -c 80 s.csv)"
    cp "$G" g.st
    echo "an earlier quantized file" >q.st
    cp q.st q.orig
    (trap '' XFSZ; ulimit -f 20 && exec "$A" quantize g.st --to int8 --out q.st) >out 2>err
    [ $? -eq 1 ] || fail "quantize over the limit: not exit 1"
    has err "File too large"
    cmp -s q.st q.orig || fail "the earlier quantized file changed"
    mkdir -p parts && echo "earlier" >parts/train.dict && cp parts/train.dict train.orig
    (trap '' XFSZ; ulimit -f 20 && exec "$A" g2p data --dict "$DICT" --out parts) >out 2>err
    [ $? -eq 1 ] || fail "g2p data over the limit: not exit 1"
    has err "File too large"
    cmp -s parts/train.dict train.orig || fail "g2p data: the earlier train.dict changed"
    if ls ./*.tmp.* parts/*.tmp.* >/dev/null 2>&1; then fail "temporaries left"; fi
    ok "sweep --csv, quantize --out and g2p data --out over the limit: exit 1 with the reason, earlier files unchanged"
    if [ "$(id -u)" = 0 ] && mkdir -p mnt && mount -t tmpfs -o size=64k tmpfs mnt 2>/dev/null; then
        cp a.svg.orig mnt/a.svg
        dd if=/dev/zero of=mnt/fill bs=1k count=1000 2>/dev/null
        run 1 "$A" align "$G" attention --svg mnt/a.svg
        umount_ok=1
        has err "cannot write 'mnt/a.svg.tmp.[0-9]+': No space left on device"
        cmp -s mnt/a.svg a.svg.orig || { umount mnt; fail "mnt/a.svg changed on the full file system"; }
        umount mnt
        ok "align --svg on a full file system (tmpfs): 'No space left on device', the earlier file unchanged"
    else
        echo "note [$CASE] cannot mount a tmpfs here: the full file system sub-case is skipped (the file-size limit stands for it)"
    fi
    ;;

fifo)
    run 0 "$A" train $TASK --steps 3 --out rev.st
    echo abc >in.txt
    mkfifo f
    for cmdline in "decode f in.txt" "train $TASK --steps 3 --resume f --out m.st" "g2p --model f hello" \
        "decode rev.st in.txt --nbest 2 --beam 2 --rescore f" "quantize f --to int8 --out q.st" "eval f --task reverse" \
        "align f abc"; do
        start=$(date +%s)
        timeout 20 "$A" $cmdline >out 2>err
        rc=$?
        [ $rc -ne 124 ] || fail "attend $cmdline blocked on the FIFO"
        [ $rc -eq 1 ] || fail "attend $cmdline: exit status $rc, expected 1"
        has err "f: a FIFO, not a regular file"
        [ $(($(date +%s) - start)) -le 5 ] || fail "attend $cmdline took $(($(date +%s) - start)) s"
    done
    [ -p f ] || fail "the FIFO was replaced"
    ok "a FIFO as a model, checkpoint, --resume, --rescore, quantize or align input: refused at once"
    # data stays a stream: a dictionary through a FIFO (as --dict <(zcat ...))
    cat "$DICT" >f &
    run 0 timeout 60 "$A" g2p eval --model "$G" --dict f --max-words 5 --beam 0
    has out "^dev +greedy +5 "
    ok "a FIFO of data (g2p eval --dict) is read as a stream"
    ;;

stdout)
    run 0 "$A" train $TASK --steps 3 --out ref.st
    for target in /dev/stdout /dev/fd/1 /proc/self/fd/1; do
        # stdout a regular file: the model alone, not the report over its first bytes
        run 0 "$A" train $TASK --steps 3 --out $target --write-special
        cmp -s out ref.st || fail "--out $target > file: not the bytes of --out ref.st ($(wc -c <out) bytes)"
        has err "^saved: $target"
        # stdout a pipe
        "$A" train $TASK --steps 3 --out $target --write-special 2>err | cat >piped.st
        cmp -s piped.st ref.st || fail "--out $target | cat: not the bytes of --out ref.st"
    done
    run 0 "$A" decode piped.st words.tsv
    ok "train --out /dev/stdout, /dev/fd/1, /proc/self/fd/1 --write-special: the model alone on stdout (file or pipe), the report on stderr"
    run 1 "$A" train $TASK --steps 3 --out /dev/stdout
    has err "'/dev/stdout' is a link to a process's open file, not a regular file: refusing to replace it"
    has err "--write-special"
    [ ! -s out ] || fail "something was written to stdout"
    run 1 "$A" train $TASK --steps 3 --out /dev/fd/1
    has err "'/dev/fd/1' is a link to a process's open file"
    run 1 "$A" train $TASK --steps 3 --out m.st --checkpoint /dev/stdout --write-special
    has err "'/dev/stdout' is a link to a process's open file, not a regular file: refusing to replace it"
    if grep -q -- "--write-special" err; then fail "the --write-special hint for a --checkpoint, which it does not cover"; fi
    run 2 "$A" train $TASK --steps 6 --eval-every 2 --select token --out /dev/stdout --write-special
    has err "--out '/dev/stdout' is written in place .* --select rewrites --out at each better evaluation"
    ok "without --write-special refused before any work (a checkpoint always); --select with an in-place --out is a usage error"
    # a copy into stdout that fails: the model is kept, and the message says where
    mkdir -p keep
    TMPDIR=$D/keep "$A" train $TASK --steps 3 --out /dev/stdout --write-special >/dev/full 2>err
    rc=$?
    [ $rc -eq 1 ] || fail "--out /dev/stdout >/dev/full: exit status $rc, expected 1"
    has err "No space left on device"
    has err "is kept in '$D/keep/attend-out-"
    kept=$(ls keep/attend-out-* 2>/dev/null | head -n 1)
    cmp -s "$kept" ref.st || fail "the kept file is not the model"
    ok "--out /dev/stdout on a full device: exit 1 with the reason, the model kept in \$TMPDIR and named"
    # standard output a socket (as some service managers give): open(2) cannot
    # open it by name, so it is refused before any training
    python3 - "$A" train $TASK --steps 3 --out /dev/stdout --write-special <<'PY' >out 2>err || fail "a socket as stdout: $(cat out)"
import socket, subprocess, sys
a, b = socket.socketpair()
p = subprocess.run(sys.argv[1:], stdout=a, stderr=subprocess.PIPE, timeout=120)
a.close()
sys.stderr.write(p.stderr.decode())
sys.exit(0 if p.returncode == 1 else 1)
PY
    has err "'/dev/stdout' is a socket, which cannot be opened by name"
    if grep -q "^trained:" err; then fail "a socket as stdout: refused only after training"; fi
    ok "--out /dev/stdout with stdout a socket: refused before any work, naming why"
    run 0 "$A" align "$G" hello --svg a.svg
    mv out align.txt
    run 0 "$A" align "$G" hello --svg /dev/stdout
    cmp -s out a.svg || fail "align --svg /dev/stdout > file: not the bytes of --svg a.svg"
    sed 's/a\.svg/\/dev\/stdout/' align.txt | cmp -s - err || fail "align's report is not on stderr"
    "$A" align "$G" hello --html /dev/stdout 2>err | cat >piped.html
    grep -q "</html>" piped.html || fail "align --html /dev/stdout | cat: no page"
    ok "align --svg/--html /dev/stdout: the picture alone on stdout, the report on stderr"
    SW="--lengths 4,6 --steps 2 --train-pairs 200 --dev-pairs 20"
    run 0 "$A" sweep $SW --csv s.csv --svg s.svg
    "$A" sweep $SW --csv s2.csv --svg /dev/stdout 2>err | cat >s2.svg
    [ "$(grep -c '<svg' s2.svg)" -eq 1 ] || fail "sweep --svg /dev/stdout | cat: $(grep -c '<svg' s2.svg) pictures, not 1"
    cmp -s s2.svg s.svg || fail "sweep --svg /dev/stdout: not the bytes of --svg s.svg"
    run 0 "$A" sweep $SW --csv /dev/stdout --svg s3.svg
    [ "$(wc -l <out)" -eq "$(wc -l <s.csv)" ] || fail "sweep --csv /dev/stdout: $(wc -l <out) lines, s.csv has $(wc -l <s.csv)"
    [ "$(head -n 1 out)" = "$(head -n 1 s.csv)" ] || fail "sweep --csv /dev/stdout: another header"
    has err "^wrote /dev/stdout and s3.svg"
    ok "sweep --svg/--csv /dev/stdout: one picture, one table, alone on stdout"
    ;;

symlink)
    echo "precious" >victim
    rm -f out err # a stale line must not be taken for this run's
    "$A" train $TASK --steps 4000 --out m.st >out 2>err &
    pid=$!
    wait_for out "^training: " 60
    ln -s "$D/victim" "m.st.tmp.$pid"
    kill -0 $pid 2>/dev/null || fail "the run ended before the link was planted"
    wait $pid
    rc=$?
    [ $rc -eq 0 ] || fail "the run failed (exit $rc)"
    [ "$(cat victim)" = precious ] || fail "the victim was overwritten"
    [ -f m.st ] && [ ! -L m.st ] || fail "m.st is not a regular file"
    run 0 "$A" decode m.st words.tsv
    ok "a link planted at the temporary's name is removed, not followed: the victim intact, m.st a regular model file"
    ;;

lock)
    rm -f out1 err1 # a stale line must not be taken for this run's
    "$A" train $TASK --steps 4000 --out shared.st --checkpoint ck.st >out1 2>err1 &
    pid=$!
    wait_for out1 "^training: " 60
    run 1 "$A" train $TASK --steps 20 --out shared.st --checkpoint other.ck
    has err "'shared.st' is in use by process $pid \(lock file shared.st.lock\)"
    run 1 "$A" train $TASK --steps 20 --out other.st --checkpoint ck.st --overwrite
    has err "'ck.st' is in use by process $pid"
    wait $pid
    rc=$?
    [ $rc -eq 0 ] || fail "the first run failed (exit $rc)"
    has out1 "^saved: shared.st$"
    [ ! -e shared.st.lock ] || fail "the lock file was left"
    ok "a second run writing the same --out or --checkpoint is refused naming process $pid; the first finishes and removes its lock"
    # a lock file of a process that is gone (killed): taken over
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    echo $dead >shared.st.lock
    run 0 "$A" train $TASK --steps 20 --out shared.st
    has err "note: 'shared.st' was locked by process $dead, which is gone: lock taken over"
    ok "a stale lock of a dead process is taken over"
    ;;

space)
    if [ "$(id -u)" = 0 ] && mkdir -p mnt && mount -t tmpfs -o size=256k tmpfs mnt 2>/dev/null; then
        dd if=/dev/zero of=mnt/fill bs=1k count=4000 2>/dev/null
        run 1 "$A" train $TASK --steps 20 --out mnt/m.st
        has err "^attend train: not enough free space: 'mnt/m.st' \(the model, about [0-9.]+ [KM]iB\), and its file system has [0-9.]+ (bytes|KiB) free"
        if grep -q "^trained:" out; then umount mnt; fail "it trained before refusing"; fi
        rm -f mnt/fill
        # the file system fills up during the run: the final save fails, and the
        # message says the checkpoint (elsewhere) holds the weights
        rm -f out err # a stale line must not be taken for this run's
        "$A" train $TASK --steps 3000 --checkpoint ck.st --out mnt/m.st >out 2>err &
        pid=$!
        wait_for err "^step 1000/3000 " 60 # past the free-space check: training
        dd if=/dev/zero of=mnt/fill bs=1k count=4000 2>/dev/null
        wait $pid
        rc=$?
        umount mnt
        [ $rc -eq 1 ] || fail "a full file system at the save: exit status $rc, expected 1"
        has err "No space left on device"
        has err "the trained weights are safe in the checkpoint ck.st \(step 3000\), which loads as a model"
        echo abc >in.txt
        run 0 "$A" decode ck.st in.txt
        ok "--out on a full file system: refused before training; filled during the run: the checkpoint holds the weights, said so"
    else
        echo "note [$CASE] not root or cannot mount a tmpfs: skipped"
        ok "skipped: no tmpfs can be mounted here"
    fi
    ;;

terminal)
    ESC=$(printf '\033')
    printf 'hel\033[2Jlo\n' | "$A" g2p --model "$G" >out 2>err
    no_raw_esc err
    no_raw_esc out
    has err 'hel\\x1b\[2Jlo'
    printf 'hel\033[2Jlo\n' | "$A" g2p --model "$G" --skip-malformed >out 2>err
    no_raw_esc out
    no_raw_esc err
    has out '^hel\\x1b\[2Jlo$'
    ok "an escape sequence in a word reaches stderr and stdout as \\x1b"
    name="m${ESC}[2J.st"
    run 1 "$A" decode "$name" words.tsv
    no_raw_esc err
    has err 'm\\x1b\[2J.st'
    printf 'a\tb\n' >"t${ESC}]0;x.tsv"
    run 1 "$A" train --train "t${ESC}]0;x.tsv" --steps 1 --out "o${ESC}[2J.st" --dev missing.tsv
    no_raw_esc err
    no_raw_esc out
    ok "escape sequences in file names are shown as \\x1b in messages"
    ;;

configdiff)
    S="$TASK --warmup 0 --decay 0"
    run 0 "$A" train $S --steps 2 --checkpoint ck.st --out m.st
    for pair in "--normalizer sparsemax|normalizer is softmax, this run's sparsemax" \
        "--coverage|coverage is 0, this run's 1" "--copy|copy is 0, this run's 1" \
        "--monotonic|monotonic is 0, this run's 1" "--layers 2|enc_layers is 1, this run's 2"; do
        opt=${pair%%|*}
        msg=${pair#*|}
        run 1 "$A" train $S $opt --steps 4 --resume ck.st --out m2.st
        has err "^attend train: ck.st: checkpoint is for another model: its $msg$"
    done
    ok "resuming with another configuration names the first differing field and both values"
    ;;

selectout)
    S="$TASK --warmup 0 --decay 0 --eval-every 10"
    run 0 "$A" train $S --steps 20 --seed 7 --select loss --out other.st
    cp other.st other.orig
    run 0 "$A" train $S --steps 40 --select seq --checkpoint ck.st --out mine.st
    run 2 "$A" train $S --steps 60 --select seq --resume ck.st --checkpoint ck.st --out other.st
    has err "^attend train: --out 'other.st' exists and holds a model of another run: its fingerprint of the data and options is [0-9a-f]{16}, this run's [0-9a-f]{16}; this run would replace it with its best model: give another --out, or --overwrite to replace it$"
    cmp -s other.st other.orig || fail "another run's model was changed"
    run 2 "$A" train $S --hidden 12 --steps 20 --select loss --out other.st
    has err "holds a model of another configuration: its enc_hidden is 16, this run's 12"
    cmp -s other.st other.orig || fail "another configuration's model was changed"
    run 0 "$A" train $TASK --steps 20 --out plain.st
    cp plain.st plain.orig
    run 2 "$A" train $S --steps 20 --select loss --out plain.st
    has err "holds a model without a run fingerprint"
    cmp -s plain.st plain.orig || fail "a model without a fingerprint was changed"
    ok "--select with --out of another run (resumed), another configuration, or no fingerprint: usage error naming the difference and --overwrite, the file unchanged"
    run 0 "$A" train $S --steps 60 --select seq --resume ck.st --checkpoint ck.st --out mine.st
    run 0 "$A" train $S --hidden 12 --steps 20 --select loss --out other.st --overwrite
    if cmp -s other.st other.orig; then fail "--overwrite did not replace it"; fi
    ok "its own --out resumes; --overwrite replaces another run's"
    ;;

emptyeval)
    printf 'CAT K AE1 T\nDOG D AO1 G\nBAT B AE1 T\n' >tiny.dict
    run 0 "$A" g2p eval --model "$G" --dict tiny.dict --split train,dev,test --beam 0
    has out "^(dev|test) +greedy +0 +n/a +n/a "
    if grep -Eq "^[a-z]+ +greedy +0 +0\.00" out; then fail "an empty part is shown as 0.00%"; fi
    ok "g2p eval: a part without words shows n/a, not 0.00%"
    ;;

messages)
    run 0 sh -c "cat words.tsv | '$A' train --train - --steps 2 $TINY --out m.st"
    has out "^data: <stdin>: 200 training pairs"
    ok "--train - reads standard input"
    printf 'abc\n' >./-x.txt
    run 0 "$A" decode m.st -- -x.txt
    [ "$(wc -l <out)" -eq 1 ] || fail "decode -- -x.txt printed $(wc -l <out) lines"
    ok "decode MODEL -- -x.txt: -- ends the options"
    { cat words.tsv; printf '\n\n'; } >blank.tsv
    run 0 "$A" train --train blank.tsv --steps 1 $TINY --out m.st
    has out "^data: blank.tsv: 200 training pairs"
    ok "trailing blank lines in a TSV are ignored"
    for sub in "" train decode eval g2p "g2p train" "g2p eval" "g2p data" align intervene sweep quantize demo explain; do
        "$A" $sub --help >/dev/full 2>err
        rc=$?
        [ $rc -eq 1 ] || fail "attend $sub --help >/dev/full: exit status $rc, expected 1"
        has err "error writing the output: No space left on device"
    done
    "$A" version >/dev/full 2>err
    [ $? -eq 1 ] || fail "attend version >/dev/full: not exit 1"
    ok "--help (and version) with stdout on /dev/full: exit 1 naming the reason, every command"
    run 2 "$A" train $TASK --steps 1 --out ""
    has err "^attend train: --out: the file name is empty$"
    run 2 "$A" g2p train --dict "$DICT" --out ""
    run 2 "$A" align m.st abc --svg ""
    ok "an empty file name is a usage error (exit 2)"
    ;;

*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
