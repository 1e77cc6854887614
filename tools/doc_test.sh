#!/usr/bin/env bash
# doc_test.sh — every command line of README.md and of each `attend ... --help`
# is run as written, so an example cannot rot (issue 19).
#
#   bash tools/doc_test.sh SOURCE_DIR ATTEND WORK_DIR [--sanitized]
#   bash tools/doc_test.sh SOURCE_DIR ATTEND WORK_DIR --list     (print the lines and how each is handled)
#
# ctest runs it as `doc_test` (tests/cmake/newcomer.cmake) against the fresh
# OpenBLAS build (the portable and sanitizer builds train too slowly for it;
# --sanitized is for running it by hand against one of them).
#
# Which lines: in README.md, each line of a code block (indented by 4 spaces, or
# inside a ``` fence), a trailing `\` joining the next line, a trailing "# ..."
# comment removed, and lines that are only a comment skipped. In the --help of
# every command `attend --help` lists (and of the subcommands a synopsis like
# `attend g2p train|eval|data|bench` names): each line that starts with
# `attend ` and a lower-case word or option, or `echo ` (after blanks), `\` continuations joined, except synopsis
# lines (with `[`, `...`, a `|` without spaces around it, or an upper-case
# placeholder such as MODEL).
#
# How: each line runs with `sh -c` in WORK_DIR, in order (so the README's model
# from `attend train ... --out rev.safetensors` is there for the lines after
# it), with ./build/attend and `attend` on PATH both the binary under test. A
# line passes when it exits 0 and, for attend commands, says nothing on stderr
# about symbols unknown to the model (the README's old decode example fed spaces
# to a character model). Lines joined by && are taken part by part. The files an
# example names as the reader's own data are supplied (FIXTURES below).
#
# Not run, only checked (CHECKS below, each with its reason): the test runner
# itself, the benchmark (PyTorch, minutes), the hour-long sweep, a second full
# build, installing packages (present or not; a test never installs), and in
# sanitizer builds the lines that train for a minute. To add one, add a row.
set -u
SRC=$1
ATTEND=$2
WORK=$3
MODE=${4:-}
case $SRC in /*) ;; *) SRC=$PWD/$SRC ;; esac
case $ATTEND in /*) ;; *) ATTEND=$PWD/$ATTEND ;; esac
case $WORK in /*) ;; *) WORK=$PWD/$WORK ;; esac
SANITIZED=0
[ "$MODE" = --sanitized ] && SANITIZED=1

# CHECKS: "ERE<TAB>how<TAB>why", matched against each part of a line (the text
# between &&), first match wins. how:
#   syntax    the script exists and `bash -n` accepts it
#   options   every --option of the part is declared by the script it runs
#             (bench/run.sh or a Python script it execs) or, for cmake, every
#             -DNAME=... is an option() of CMakeLists.txt
#   help      the same command with --help appended: every option is parsed
#             (an unknown one or a bad value is exit 2) without doing the work
#   built     cmake on `build`, the directory under test: its options are
#             checked as `options`, and the binary under test must exist
#   packages  apt-get install: the packages must be installed (dpkg -s); if
#             some are not, the line is reported as not checked
#   slow      run, but in sanitizer builds checked as `help`
#   mpi       mpirun ... ./build-X/attend ARGS: `./build/attend ARGS --help`
CHECKS=$(printf '%s\n' \
    '^bash tools/test\.sh( |$)	syntax	the test runner itself: it runs this test' \
    '^bash bench/run\.sh( |$)	options	builds build-bench and runs PyTorch (python3-torch) for minutes' \
    '^cmake -S \. -B build( |$)	built	configures the build under test' \
    '^cmake --build build( |$)	built	the build under test, already built' \
    '^cmake -S \. -B [^ ]+	options	a second full build: minutes on 2 cores' \
    '^cmake --build [^ ]+	options	builds what the configure before it set up' \
    '^(sudo )?apt-get install 	packages	installing is not a test'"'"'s job' \
    '^(sudo )?apt-get update( |$)	packages	needs the network' \
    '(^|/)attend sweep( |$)	help	trains 24 models: about an hour' \
    '(^|/)attend train --task reverse --symbols 10 --min-len 5 --max-len 15 --count 20000 	help	the training `attend demo` runs (README), about a minute' \
    '(^|/)attend demo( |$)	slow	trains for about a minute' \
    '^mpirun 	mpi	needs the -DATTEND_MPI=ON build: the attend command is checked with --help here, the MPI runs are the cli_mpi_* tests (tools/test.sh mpi)')

# FIXTURES: files the examples name as the reader's own data, and what they are
# here (paths relative to SOURCE_DIR).
FIXTURES=$(printf '%s\n' \
    'pairs.tsv	tests/cli/reverse_dev.tsv' \
    'dev.tsv	tests/cli/words_dev.tsv')

# ------------------------------------------------------------ extraction

# readme_lines: the command lines of README.md, one per line
readme_lines() {
    awk '
    function emit(s) {
        sub(/^[ \t]+/, "", s)
        # a trailing comment: " # ..." outside quotes
        q = 0; out = ""
        for (i = 1; i <= length(s); i++) {
            c = substr(s, i, 1)
            if (c == "\"" || c == "'\''") q = !q
            if (!q && c == "#" && (i == 1 || substr(s, i - 1, 1) ~ /[ \t]/)) break
            out = out c
        }
        sub(/[ \t]+$/, "", out)
        if (out != "") print out
    }
    /^```/ { fence = !fence; next }
    {
        code = fence || ($0 ~ /^    [^ ]/ || $0 ~ /^     +[^ ]/) && !list
        if ($0 ~ /^[-*] / || $0 ~ /^[0-9]+\. /) list = 1
        else if ($0 ~ /^$/) list = 0
        if (!code) { if (acc != "") { emit(acc); acc = "" } next }
        line = $0
        if (acc != "") { sub(/^[ \t]+/, "", line); line = acc " " line; acc = "" }
        if (line ~ /\\$/) { sub(/[ \t]*\\$/, "", line); acc = line; next }
        emit(line)
    }
    END { if (acc != "") emit(acc) }' "$SRC/README.md"
}

# help_examples TEXT: the example lines of one --help text
help_examples() {
    awk '
    {
        line = $0
        if (acc != "") { sub(/^[ \t]+/, "", line); line = acc " " line; acc = "" }
        else {
            t = line; sub(/^[ \t]+/, "", t)
            if (t !~ /^(attend [a-z-]|echo )/) next
            line = t
        }
        if (line ~ /\\$/) { sub(/[ \t]*\\$/, "", line); acc = line; next }
        if (line ~ /\[|\.\.\./) next
        if (line ~ /[^ ]\||\|[^ ]/) next
        if (line ~ /(^| )[A-Z][A-Z_]+[.A-Z_]*( |$)/) next
        sub(/[ \t]+#.*$/, "", line)
        print line
    }' <<EOF
$1
EOF
}

# help_lines: the example lines of every command's --help
help_lines() {
    local cmds c sub subs
    cmds=$("$ATTEND" --help 2>&1 | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } /^$/ { on = 0 }')
    for c in $cmds; do
        [ "$c" = help ] && continue
        local text
        text=$("$ATTEND" "$c" --help 2>&1)
        help_examples "$text"
        subs=$(printf '%s\n' "$text" | grep -Eo "attend $c [a-z]+(\|[a-z]+)+" | head -n 1 | sed "s/^attend $c //" | tr '|' ' ')
        for sub in $subs; do
            help_examples "$("$ATTEND" "$c" "$sub" --help 2>&1)"
        done
    done
}

# ------------------------------------------------------------ checking

# how_of PART: "how<TAB>why" of the first CHECKS row matching PART, or "run"
how_of() {
    local row re
    while IFS= read -r row; do
        re=${row%%	*}
        if printf '%s\n' "$1" | grep -Eq -- "$re"; then
            printf '%s\n' "${row#*	}"
            return
        fi
    done <<EOF
$CHECKS
EOF
    printf 'run\t\n'
}

# check_options PART: every -DNAME / --option of PART is declared where it goes
check_options() {
    local part=$1 opt name script
    case $part in
    cmake*)
        for opt in $(printf '%s\n' "$part" | grep -Eo -- '-D[A-Za-z_0-9]+' | sed 's/^-D//'); do
            case $opt in CMAKE_*) continue ;; esac
            grep -Eq "^option\($opt " "$SRC/CMakeLists.txt" || { echo "-D$opt is not an option() of CMakeLists.txt"; return 1; }
        done ;;
    *)
        script=$(printf '%s\n' "$part" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /\.(sh|py)$/) { print $i; exit } }')
        [ -f "$SRC/$script" ] || { echo "no script $script"; return 1; }
        bash -n "$SRC/$script" 2>/dev/null || [ "${script##*.}" = py ] || { echo "$script: syntax error"; return 1; }
        # the script and the Python scripts it runs
        local files="$SRC/$script"
        for name in $(grep -Eo '[a-z_/]+\.py' "$SRC/$script" | sort -u); do
            [ -f "$SRC/$name" ] && files="$files $SRC/$name"
        done
        for opt in $(printf '%s\n' "$part" | grep -Eo -- '(^| )--[a-z][a-z0-9-]*' | tr -d ' '); do
            # shellcheck disable=SC2086
            grep -Eq -- "[[\"' ]$opt[]\"' =]" $files || { echo "$opt is not an option of $script"; return 1; }
        done ;;
    esac
    return 0
}

# run_part PART: runs PART in WORK; 0 when it passes
run_part() {
    local part=$1
    (cd "$WORK" && PATH="$WORK/bin:$PATH" sh -c "$part") >"$WORK/.out" 2>"$WORK/.err" </dev/null
    local rc=$?
    if [ $rc -ne 0 ]; then
        echo "exit status $rc"
        tail -n 5 "$WORK/.err"
        return 1
    fi
    if grep -q "unknown to the model" "$WORK/.err"; then
        echo "the example feeds the model symbols it does not know:"
        grep "unknown to the model" "$WORK/.err" | head -n 3
        return 1
    fi
    return 0
}

# check_line LINE: runs or checks each &&-part; prints one line per part
n_run=0 n_checked=0 n_notrun=0 n_failed=0
check_line() {
    local line=$1 part how why res
    local rest=$line
    while [ -n "$rest" ]; do
        case $rest in
        *" && "*) part=${rest%% && *}; rest=${rest#* && } ;;
        *) part=$rest; rest= ;;
        esac
        how=$(how_of "$part")
        why=${how#*	}
        how=${how%%	*}
        [ "$how" = slow ] && { if [ $SANITIZED = 1 ]; then how=help; why="$why (sanitizer build)"; else how=run; fi; }
        if [ "$MODE" = --list ]; then
            printf '%-8s %s%s\n' "$how" "$part" "${why:+   ($why)}"
            continue
        fi
        local t0 t1
        t0=$(date +%s)
        case $how in
        run) res=$(run_part "$part") ;;
        help) res=$(run_part "$part --help") ;;
        mpi)
            # mpirun's own options dropped, the MPI build's binary replaced by the one under test
            local cmd
            cmd=$(printf '%s\n' "$part" | sed -E 's#^mpirun( +-[^ ]+( +[0-9]+)?)* +\./build-[a-z]+/attend #./build/attend #')
            case $cmd in ./build/attend\ *) res=$(run_part "$cmd --help") ;; *) res="not an mpirun line of attend: $part" ;; esac ;;
        syntax)
            local s
            s=$(printf '%s\n' "$part" | awk '{ print $2 }')
            res=$([ -f "$SRC/$s" ] && bash -n "$SRC/$s" 2>&1 || echo "$s: missing or not valid bash") ;;
        options) res=$(check_options "$part") ;;
        built)
            res=$(check_options "$part")
            [ -z "$res" ] && [ ! -x "$ATTEND" ] && res="the binary under test is missing" ;;
        packages)
            local p missing=
            for p in $(printf '%s\n' "$part" | awk '{ for (i = 1; i <= NF; i++) if (seen && $i !~ /^-/) print $i; else if ($i == "install") seen = 1 }'); do
                dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
            done
            if [ -n "$missing" ] || ! command -v dpkg >/dev/null; then
                printf 'not run  %s   (not installed:%s; a test does not install)\n' "$part" "${missing:- dpkg missing}"
                n_notrun=$((n_notrun + 1))
                continue
            fi
            res= ;;
        esac
        t1=$(date +%s)
        if [ -n "$res" ]; then
            printf 'FAIL     %s\n%s\n' "$part" "$res" | sed '2,$s/^/         /'
            n_failed=$((n_failed + 1))
        elif [ "$how" = run ]; then
            printf 'ran      %s   (%s s)\n' "$part" $((t1 - t0))
            n_run=$((n_run + 1))
        else
            printf 'checked  %s   (%s: %s)\n' "$part" "$how" "$why"
            n_checked=$((n_checked + 1))
        fi
    done
}

# ------------------------------------------------------------ main

[ -x "$ATTEND" ] || { echo "doc_test: no binary $ATTEND" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK/build" "$WORK/bin" || exit 2
ln -s "$ATTEND" "$WORK/build/attend"
ln -s "$ATTEND" "$WORK/bin/attend"
# the README's lines run from the repository root, where models/ is
ln -s "$SRC/models" "$WORK/models"
while IFS='	' read -r name from; do
    [ -n "$name" ] && cp "$SRC/$from" "$WORK/$name"
done <<EOF
$FIXTURES
EOF

readme=$(readme_lines)
helps=$(help_lines)
[ -n "$readme" ] || { echo "doc_test: no command lines found in README.md" >&2; exit 1; }
[ -n "$helps" ] || { echo "doc_test: no example lines found in any --help" >&2; exit 1; }
echo "== README.md ($(printf '%s\n' "$readme" | wc -l) lines)"
while IFS= read -r l; do check_line "$l"; done <<EOF
$readme
EOF
echo "== --help texts ($(printf '%s\n' "$helps" | wc -l) lines)"
while IFS= read -r l; do check_line "$l"; done <<EOF
$helps
EOF
[ "$MODE" = --list ] && exit 0
echo "doc_test: $n_run parts ran, $n_checked checked without running, $n_notrun not run, $n_failed failed"
[ $n_failed -eq 0 ]
