#!/bin/sh
# oom_test.sh ATTEND SRC WORK — out of memory is an error, never a hang (issue
# 25): `--version`, `train`, `decode`, `quantize` and `g2p` under `ulimit -v`
# limits from 400 MB down to 16 MB, each with a timeout. Every run either
# works (exit 0) or exits 1 saying it ran out of memory (the wording, naming
# the allocation, is issue 28's); a timeout, a crash or any other status fails.
# (An OpenBLAS build hangs in OpenBLAS's own start-up under such limits, before
# main: the test is registered only without OpenBLAS, and never under the
# sanitizers or valgrind, whose shadow memory needs more than the limits.)
ATTEND=$1
SRC=$2
WORK=$3
CASE=oom
PASSED=0
. "$SRC/tests/cli/lib.sh"
rm -rf "$WORK" && mkdir -p "$WORK" && cd "$WORK" || exit 1
run 0 "$ATTEND" train --task reverse --steps 10 --out m.safetensors
G2P=$SRC/models/g2p-cmudict.safetensors
worked=0
refused=0
# limited KB CMD...: runs CMD under `ulimit -v KB` with a 60 s timeout
limited() {
    kb=$1
    shift
    (ulimit -v "$kb" && exec timeout 60 "$@") >out 2>err </dev/null
    rc=$?
    case $rc in
    0) worked=$((worked + 1)) ;;
    1)
        grep -q 'out of memory' err ||
            fail "exit 1 under ulimit -v $kb without saying it ran out of memory: $*"
        refused=$((refused + 1)) ;;
    124 | 137) fail "still running after 60 s under ulimit -v $kb: $*" ;;
    *) fail "exit status $rc under ulimit -v $kb: $*" ;;
    esac
}
for kb in 400000 200000 100000 60000 40000 24000 16000; do
    limited $kb "$ATTEND" --version
    limited $kb "$ATTEND" train --task reverse --steps 3 --out "t$kb.safetensors"
    printf 'abc\ncab\n' >in.txt
    limited $kb "$ATTEND" decode m.safetensors in.txt
    limited $kb "$ATTEND" decode m.safetensors in.txt --beam 4
    limited $kb "$ATTEND" quantize m.safetensors --to int8 --out "q$kb.safetensors"
    limited $kb "$ATTEND" g2p --model "$G2P" hello world
    ok "ulimit -v $kb: --version, train, decode (greedy, beam), quantize, g2p: none hung or crashed"
done
echo "$worked runs worked, $refused refused: out of memory"
[ "$refused" -gt 0 ] || fail "no run was refused: the smallest limit is too large to test the refusal"
[ "$worked" -gt 0 ] || fail "no run worked"
ok "$worked worked, $refused exited 1 saying out of memory"
echo "$PASSED passed, 0 failed"
