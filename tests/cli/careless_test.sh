#!/bin/sh
# careless_test.sh — `attend train` used carelessly (issue 17; docs/RELIABILITY.md
# "Careless users: inputs, outputs, resume"). One case per numbered problem:
#
#   sh tests/cli/careless_test.sh CASE ATTEND WORK_DIR
#
#   endless   --train /dev/zero fails at once naming /dev/zero:1 (1)
#   device    --out naming a device or FIFO is refused and left alone;
#             --write-special writes a FIFO in place (4)
#   same      --out equal to --train or --checkpoint (another spelling, a
#             link) is refused before any work; the input is unchanged (5)
#   badout    a missing or read-only directory, a name too long: refused
#             before the data is even read (6)
#   resume    reordered data, another --lr or --seed: --resume refuses naming
#             the difference; --resume-anyway warns and goes on (7)
#   fsize     a file-size limit (ulimit -f, SIGXFSZ not ignored by the shell)
#             while saving: exit 1 with "File too large", no temporary left;
#             a dead writer's temporary of --out is removed by the next run (8)
#   analysis  align --svg/--html and sweep --csv/--svg: an output equal to the
#             model, the data, a --plot input or the other output, or in a
#             missing directory, is refused before any work; a device is
#             written in place (4, 5, 6 for the analysis commands)
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0

TINY="--emb 8 --hidden 16 --dec-hidden 32 --attn 8 --batch 16 --log-every 1000"
TASK="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 200 --dev-count 20 $TINY"

# words.tsv: 200 pairs of a-f words and their reversals, deterministic
awk 'BEGIN { s = 7; for (i = 0; i < 200; i++) { w = ""; n = 2 + i % 4;
       for (j = 0; j < n; j++) { s = (s * 1103515245 + 12345) % 2147483648; w = w substr("abcdef", 1 + int(s / 65536) % 6, 1) }
       r = ""; for (j = n; j >= 1; j--) r = r substr(w, j, 1); print w "\t" r } }' >words.tsv

# no_training: the command stopped before training (and before reading data)
no_training() {
    if grep -q "^trained:" out; then fail "$1: it trained before failing"; fi
    if grep -q "^data:" out; then fail "$1: it read the data before failing"; fi
}

case $CASE in
endless)
    start=$(date +%s)
    run 1 timeout 20 "$A" train --train /dev/zero --steps 3
    has err "^attend train: /dev/zero:1: line is longer than max_line_bytes=4096$"
    run 1 timeout 20 "$A" train --train /dev/zero --skip-malformed --steps 3
    has err "^attend train: /dev/zero:1: no end of line within 16777216 bytes"
    [ $(($(date +%s) - start)) -le 10 ] || fail "it took $(($(date +%s) - start)) s"
    ok "--train /dev/zero fails at once with /dev/zero:1 (with and without --skip-malformed)"
    { head -n 3 words.tsv; awk 'BEGIN { for (i = 0; i < 5000; i++) printf "x"; print "\ty" }'; tail -n 5 words.tsv; } >long.tsv
    run 1 "$A" train --train long.tsv --steps 1 $TINY --out m.safetensors
    has err "^attend train: long.tsv:4: line is longer than max_line_bytes=4096$"
    run 0 "$A" train --train long.tsv --skip-malformed --steps 1 $TINY --out m.safetensors
    has out "^long.tsv: 1 malformed line skipped$"
    has out "^data: long.tsv: 8 training pairs"
    ok "an over-long line: long.tsv:4, or skipped and counted with --skip-malformed"
    run 1 "$A" train --train . --steps 1
    has err "^attend train: .:1: read error: Is a directory$"
    ok "a directory as --train: a read error naming it"
    ;;
device)
    mkfifo fifo || fail "mkfifo"
    run 1 "$A" train $TASK --steps 2 --out fifo
    has err "^attend train: 'fifo' is a FIFO, not a regular file: refusing to replace it$"
    has err "--write-special"
    no_training "FIFO"
    [ -p fifo ] || fail "the FIFO was replaced"
    ok "--out FIFO: refused before any work, the FIFO left alone"
    if [ "$(id -u)" = 0 ] && mknod null c 1 3 2>/dev/null; then
        run 1 "$A" train $TASK --steps 2 --out null
        has err "^attend train: 'null' is a character device, not a regular file: refusing to replace it$"
        [ -c null ] || fail "the character device was replaced"
        ok "--out a character device (a copy of /dev/null): refused, left a device"
    else
        echo "note [$CASE] not root (or no mknod): the character-device sub-case is skipped; the FIFO one stands for it"
    fi
    # --write-special: the bytes go through the FIFO, equal to a regular file's
    run 0 "$A" train $TASK --steps 2 --out regular.safetensors
    timeout 60 cat fifo >got.safetensors &
    reader=$!
    run 0 "$A" train $TASK --steps 2 --out fifo --write-special
    wait $reader || fail "the FIFO reader failed"
    has out "^saved: fifo$"
    cmp -s got.safetensors regular.safetensors || fail "the bytes read from the FIFO differ from the regular file"
    [ -p fifo ] || fail "the FIFO was replaced"
    ok "--write-special --out FIFO: written in place, the same bytes as a regular file"
    ;;
same)
    cp words.tsv before.tsv
    run 1 "$A" train --train words.tsv --steps 2 $TINY --out ./words.tsv
    has err "^attend train: --train 'words.tsv' and --out './words.tsv' are the same file: writing it would destroy the input$"
    no_training "--out = --train"
    cmp -s words.tsv before.tsv || fail "the training data changed"
    ln -s words.tsv link.tsv
    run 1 "$A" train --train link.tsv --steps 2 $TINY --checkpoint words.tsv
    has err "^attend train: --train 'link.tsv' and --checkpoint 'words.tsv' are the same file"
    ok "--out/--checkpoint equal to --train (another spelling, a symbolic link): refused, the data unchanged"
    run 1 "$A" train $TASK --steps 2 --checkpoint ck.safetensors --out "$D/ck.safetensors"
    has err "^attend train: --checkpoint 'ck.safetensors' and --out '$D/ck.safetensors' are the same file: writing it would lose one of the two outputs$"
    no_training "--out = --checkpoint"
    run 0 "$A" train $TASK --steps 2 --checkpoint ck.safetensors --out m.safetensors
    # the schedule from --steps differs between 2 and 4 steps: refused, with the options that help
    run 1 "$A" train $TASK --steps 4 --checkpoint ck.safetensors --resume ck.safetensors --out m.safetensors
    has err "^attend train: ck.safetensors: checkpoint's decay_steps is 2, in this run 4; resuming needs the same data and options$"
    has err "give --warmup and --decay as the checkpoint has them"
    run 0 "$A" train $TASK --steps 4 --warmup 0 --decay 2 --checkpoint ck.safetensors --resume ck.safetensors --out m.safetensors
    has out "^resumed: ck.safetensors at step 2$"
    run 1 "$A" train $TASK --steps 6 --resume ck.safetensors --out ck.safetensors
    has err "^attend train: --resume 'ck.safetensors' and --out 'ck.safetensors' are the same file"
    ok "--out equal to --checkpoint or --resume refused; --resume equal to --checkpoint still continues in place"
    ;;
badout)
    run 1 "$A" train $TASK --steps 300 --out missing/m.safetensors
    has err "^attend train: 'missing/m.safetensors' cannot be written: creating a file in directory 'missing' failed: No such file or directory$"
    no_training "missing directory"
    name=$(awk 'BEGIN { for (i = 0; i < 250; i++) printf "n" }')
    run 1 "$A" train $TASK --steps 300 --out "$name"
    has err "^attend train: output file name too long \(250 bytes"
    no_training "long name"
    mkdir ro && chmod 555 ro
    target=ro/m.safetensors
    if [ "$(id -u)" = 0 ]; then target=/sys/attend-careless-test.safetensors; fi
    if [ "$(id -u)" != 0 ] || { [ -d /sys ] && ! touch "$target" 2>/dev/null; }; then
        run 1 "$A" train $TASK --steps 300 --out "$target"
        has err "^attend train: '$target' cannot be written: creating a file in directory '.*' failed: (Permission denied|Read-only file system)$"
        no_training "read-only directory"
        ok "a missing directory, a name too long, a read-only directory ($target): refused before the data is read"
    else
        rm -f "$target"
        ok "a missing directory, a name too long: refused before the data is read (root can write every directory here: read-only sub-case skipped)"
    fi
    chmod 755 ro
    ;;
resume)
    # an explicit schedule: the one from --steps would differ between 20 and 30 steps
    TINY="$TINY --warmup 2 --decay 18"
    R="--train words.tsv --steps 20 --checkpoint ck.safetensors $TINY --out m.safetensors"
    run 0 "$A" train $R
    sort -r words.tsv >reordered.tsv
    run 1 "$A" train --train reordered.tsv --steps 30 --resume ck.safetensors $TINY --out m2.safetensors
    has err "^attend train: ck.safetensors: checkpoint's source vocabulary id 4 is '.', in this run '.' \(the data's lines changed or moved\) \(also differ: target vocabulary, training data\); resuming needs the same data and options$"
    has err "--resume-anyway"
    [ ! -e m2.safetensors ] || fail "a model was written"
    ok "reordered training data: refused, naming the vocabulary id that moved"
    run 1 "$A" train --train words.tsv --steps 30 --resume ck.safetensors $TINY --out m2.safetensors --lr 0.01
    has err "^attend train: ck.safetensors: checkpoint's lr is 0.003, in this run 0.01; resuming needs the same data and options$"
    run 1 "$A" train --train words.tsv --steps 30 --resume ck.safetensors $TINY --out m2.safetensors --seed 5
    has err "^attend train: ck.safetensors: checkpoint's seed is 1, in this run 5; resuming needs the same data and options$"
    ok "another --lr or --seed: refused, naming the option and both values"
    run 0 "$A" train --train words.tsv --steps 30 --resume ck.safetensors $TINY --out m2.safetensors --seed 5 --resume-anyway
    has err "^attend train: warning: ck.safetensors: resumed anyway: checkpoint's seed is 1, in this run 5$"
    has out "^resumed: ck.safetensors at step 20$"
    ok "--resume-anyway: resumed with a warning naming the difference"
    run 0 "$A" train --train words.tsv --steps 30 --resume ck.safetensors $TINY --out m2.safetensors
    if grep -q "warning\|note" err; then fail "a warning for the same data and options"; fi
    ok "the same data and options: resumed without a word"
    ;;
analysis)
    run 0 "$A" train $TASK --steps 2 --out m.safetensors
    cp m.safetensors m.orig
    run 1 "$A" align m.safetensors abcd --svg m.safetensors
    has err "^attend align: MODEL 'm.safetensors' and --svg 'm.safetensors' are the same file: writing it would destroy the input$"
    cmp -s m.safetensors m.orig || fail "the model was changed"
    run 1 "$A" align m.safetensors abcd --svg a.svg --html ./a.svg
    has err "^attend align: --svg 'a.svg' and --html './a.svg' are the same file: writing it would lose one of the two outputs$"
    run 1 "$A" align m.safetensors abcd --html missing/a.html
    has err "^attend align: 'missing/a.html' cannot be written: creating a file in directory 'missing' failed"
    [ ! -e a.svg ] || fail "align wrote a file before failing"
    if [ -c /dev/null ]; then
        run 0 "$A" align m.safetensors abcd --svg /dev/null
        [ -c /dev/null ] || fail "/dev/null is no longer a device"
    fi
    ok "align: an output equal to the model or the other output, or unwritable, refused before work"
    printf 'x\n' >plot.csv
    cp plot.csv plot.orig
    run 1 "$A" sweep --plot plot.csv --svg plot.csv
    has err "^attend sweep: --plot CSV 'plot.csv' and --svg 'plot.csv' are the same file: writing it would destroy the input$"
    cmp -s plot.csv plot.orig || fail "the --plot input was changed"
    run 1 "$A" sweep --train words.tsv --dev words.tsv --csv words.tsv --steps 60
    has err "^attend sweep: --train 'words.tsv' and --csv 'words.tsv' are the same file"
    run 1 "$A" sweep --steps 60 --svg missing/s.svg
    has err "^attend sweep: 'missing/s.svg' cannot be written"
    [ ! -e sweep.csv ] || fail "sweep started before failing"
    ok "sweep: an output equal to an input, or unwritable, refused before any training"
    ;;
fsize)
    run 0 "$A" train $TASK --steps 2 --out full.safetensors
    size=$(wc -c <full.safetensors)
    blocks=$((size / 2048)) # under half the file in 512- or 1024-byte units
    # shellcheck disable=SC2086
    (ulimit -f "$blocks"; exec "$A" train $TASK --steps 2 --out m.safetensors) >out 2>err
    rc=$?
    [ "$rc" -eq 1 ] || fail "exit status $rc, expected 1 (153 = killed by SIGXFSZ)"
    has err "^attend train: attend_st_write: cannot write 'm.safetensors.tmp.[0-9]+': File too large$"
    if ls m.safetensors* >/dev/null 2>&1; then fail "left behind: $(ls m.safetensors*)"; fi
    ok "a file-size limit while saving: exit 1 with 'File too large', no temporary file left"
    sh -c 'exit 0' &
    dead=$!
    wait $dead
    echo x >"m.safetensors.tmp.$dead"
    run 0 "$A" train $TASK --steps 2 --out m.safetensors
    has out "^out: removed m.safetensors.tmp.$dead, left by process $dead, which is gone$"
    [ ! -e "m.safetensors.tmp.$dead" ] || fail "the dead writer's temporary is still there"
    ok "a dead writer's temporary of --out is removed by the next run, which says so"
    ;;
*)
    echo "careless_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
