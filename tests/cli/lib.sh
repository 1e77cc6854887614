# lib.sh — what the command test scripts share (sourced by cli_test.sh and
# analysis_test.sh): each case works in its own directory, runs commands with
# stdout in ./out and stderr in ./err, prints one "ok [CASE] ..." line per check,
# and at the first check that fails prints why, the start of out/err, and
# "N passed, 1 failed", then exits 1. The caller sets CASE and PASSED=0.

# abs PATH: PATH made absolute against the current directory
abs() { case $1 in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }

fail() {
    echo "FAIL [$CASE] $*" >&2
    for f in out err; do
        if [ -s "$f" ]; then
            echo "--- $f:" >&2
            head -n 60 "$f" >&2
        fi
    done
    echo "$PASSED passed, 1 failed"
    exit 1
}
ok() {
    PASSED=$((PASSED + 1))
    echo "ok [$CASE] $*"
}

# run WANT_RC CMD...: runs CMD with stdout in ./out and stderr in ./err
run() {
    want=$1
    shift
    "$@" >out 2>err
    rc=$?
    [ "$rc" -eq "$want" ] || fail "exit status $rc, expected $want: $*"
}
# has FILE PATTERN: an extended regular expression matches a line of FILE
has() { grep -Eq -- "$2" "$1" || fail "$1 has no line matching '$2'"; }
# at_least VALUE MIN
at_least() { awk -v x="$1" -v m="$2" 'BEGIN { exit !(x + 0 >= m + 0) }' || fail "$1 < $2"; }
