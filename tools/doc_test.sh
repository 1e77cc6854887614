#!/usr/bin/env bash
# doc_test.sh — every command line of README.md, of docs/*.md and of each
# `attend ... --help` is run as written, so an example cannot rot (issues 19, 30).
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
# In docs/*.md (issue 30), in code blocks (indented or fenced; ```python blocks
# are python_docs' job), only lines that start like a command (attend, ./build/...,
# sh, bash, cmake, cc, pkg-config, /usr/bin/python3, python3, mpirun, apt-get,
# echo, cmp, export, with optional VAR=value prefixes) are taken, and:
#   - a line after a `$ ` prompt is a transcript: the lines under it, up to the
#     next prompt or the end of the block, are what it must print (stdout,
#     compared exactly, trailing blanks aside);
#   - a ```c or ```cmake block whose first line is a comment naming a file
#     (`/* app/app.c: ...`, `# app/CMakeLists.txt`) is written to that file in
#     WORK_DIR, for the lines after it to build.
# `export VAR=value` lines set VAR for the lines after them.
#
# How: each line runs with `sh -c` in WORK_DIR, in order (so the README's model
# from `attend train ... --out rev.safetensors` is there for the lines after
# it), with ./build/attend and `attend` on PATH both the binary under test
# (WORK_DIR/build is the build directory under test, so `cmake --install build`
# and build/tests/g2p_say work as written), HOME a scratch WORK_DIR/home (so
# `~/.local` is scratch too), `python3` Debian's /usr/bin/python3, and models/
# a copy of the source tree's (a line that rewrites a model cannot touch the
# shipped ones); tools/, data/, bench/ and examples/ are the source tree's. A
# line passes when it exits 0 and, for attend commands, says nothing on stderr
# about symbols unknown to the model (the README's old decode example fed spaces
# to a character model). Lines joined by && are taken part by part. The files an
# example names as the reader's own data are supplied (FIXTURES below).
#
# Not run, only checked (CHECKS below, each with its reason): the test runner
# itself, the benchmark (PyTorch, minutes), the hour-long sweep, a second full
# build, installing packages (present or not; a test never installs), the
# measurements in docs/*.md that train for minutes to hours, and in sanitizer
# builds the lines that train for a minute. To add one, add a row.
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
# between &&, VAR=value prefixes aside), first match wins; an ERE written
# "docs:ERE" matches only lines of docs/*.md. how:
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
#   mpi       mpirun ... build-X/attend ARGS: `./build/attend ARGS --help`
#   elsewhere another test runs the line: it must appear, as written, in the
#             script the reason names
CHECKS=$(printf '%s\n' \
    '^bash tools/test\.sh( |$)	syntax	the test runner itself: it runs this test' \
    '^bash bench/run\.sh( |$)	options	builds build-bench and runs PyTorch (python3-torch) for minutes' \
    '^cmake -S \. -B build( |$)	built	configures the build under test' \
    '^cmake --build build( |$)	built	the build under test, already built' \
    '^cmake -S \. -B [^ ]+	options	a second full build: minutes on 2 cores' \
    '^cmake --build build-[^ ]+	options	builds what the configure before it set up' \
    '^python3 -m venv --system-site-packages v$	elsewhere	python_wheel (python/tests/wheel_test.sh) runs this pip route in a fresh venv, building the library again' \
    '^v/bin/pip install --no-build-isolation --no-index \.$	elsewhere	python_wheel (python/tests/wheel_test.sh) runs this pip route in a fresh venv, building the library again' \
    '^(sudo )?apt-get install 	packages	installing is not a test'"'"'s job' \
    '^(sudo )?apt-get update( |$)	packages	needs the network' \
    '(^|/)attend sweep( |$)	help	trains 24 models: about an hour' \
    '(^|/)attend train --task reverse --symbols 10 --min-len 5 --max-len 15 --count 20000 	help	the training `attend demo` runs (README), about a minute' \
    '(^|/)attend demo( |$)	slow	trains for about a minute' \
    '^mpirun 	mpi	needs the -DATTEND_MPI=ON build: the attend command is checked with --help here, the MPI runs are the cli_mpi_* tests (tools/test.sh mpi)' \
    'docs:^(sh|bash) (tools|bench)/[a-z0-9_]+\.sh( |$)	options	a measurement or build script of docs/*.md: minutes to hours' \
    'docs:^/usr/bin/python3 (bench/ab|tools/copy_names|tools/table81)\.py( |$)	options	a measurement of docs/*.md: two builds, or minutes of training' \
    'docs:(^|/)attend (--threads [0-9a-z]+ )?readout( |$)	help	a training run of docs/*.md (Table 8.1): seconds to minutes each' \
    'docs:(^|/)attend (--threads [0-9a-z]+ )?(g2p )?train( |$)	help	a training run of docs/*.md: minutes to hours (the README'"'"'s training lines run)' \
    'docs:(^|/)attend g2p eval( |$)	help	needs the whole CMUdict (tools/get_cmudict.sh; the network)' \
    'docs:(^|/)attend quantize a\.safetensors 	help	a.safetensors is the G2P training run'"'"'s model above' \
    'docs:(^|/)attend quantize stress\.safetensors 	help	stress.safetensors is the stress model'"'"'s training run above it' \
    'docs:(^|/)attend [a-z]+ /tmp/	help	its model is made by the measurement script above it' \
    'docs:(^|/)attend eval loss\.safetensors 	help	its model is the training run above it' \
    'docs:(^|/)attend intervene revtf\.safetensors 	help	its model is the training run above it (RESULTS.md, the transformer)')

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

# docs_records FILE: the command lines, transcripts and files of a docs/*.md
# page, one record per line: "C<TAB>command", "T<TAB>command" (a `$ ` prompt)
# followed by its "O<TAB>output line"s, "F<TAB>path" followed by its
# "L<TAB>content line"s.
docs_records() {
    awk '
    function trim_comment(s,    q, out, i, c) {
        q = 0; out = ""
        for (i = 1; i <= length(s); i++) {
            c = substr(s, i, 1)
            if (c == "\"" || c == "'\''") q = !q
            if (!q && c == "#" && (i == 1 || substr(s, i - 1, 1) ~ /[ \t]/)) break
            out = out c
        }
        sub(/[ \t]+$/, "", out)
        return out
    }
    function is_cmd(s,    t) {
        t = s
        while (match(t, /^[A-Za-z_][A-Za-z_0-9]*=("[^"]*"|[^ ]*) +/)) t = substr(t, RLENGTH + 1)
        if (t ~ /^attend [a-z-]+:/) return 0                     # a message, not a command
        return t ~ /^(sudo )?(attend|\.?\/?build[^ ]*\/[^ ]+|sh|bash|cmake|cc|gcc|pkg-config --[a-z]|\/usr\/bin\/python3|python3|mpirun|apt-get|echo|printf|cmp|export|\.\/app\/[^ ]+|v\/bin\/[a-z0-9]+)( |$)/
    }
    function flush_cmd() { if (acc != "") { emit_cmd(acc); acc = "" } }
    function emit_cmd(s,    c) {
        c = trim_comment(s)
        if (c == "") return
        if (prompt) { print "T\t" c; intx = 1 } else if (is_cmd(c)) print "C\t" c
    }
    function line_in_block(raw,    t) {
        t = raw
        if (acc != "") { sub(/^[ \t]+/, "", t); t = acc " " t; acc = "" }
        else if (t ~ /^\$ /) { prompt = 1; t = substr(t, 3); intx = 0 }
        else if (intx) { print "O\t" raw; return }
        else { prompt = 0; sub(/^[ \t]+/, "", t) }
        if (t ~ /\\$/) { sub(/[ \t]*\\$/, "", t); acc = t; return }
        emit_cmd(t)
        if (!prompt) intx = 0
    }
    function end_block() { flush_cmd(); prompt = 0; intx = 0; file = 0 }
    /^```/ {
        if (!fence) {
            fence = 1; lang = substr($0, 4); sub(/[ \t].*$/, "", lang); first = 1; skip = (lang == "python"); next
        }
        fence = 0; end_block(); next
    }
    fence {
        if (skip) next
        if (first && (lang == "c" || lang == "cmake")) {
            first = 0
            if (match($0, /^(\/\*|\/\/|#) *[A-Za-z0-9_.\/-]+[A-Za-z0-9]/)) {
                path = $0; sub(/^(\/\*|\/\/|#) */, "", path); sub(/[: ].*$/, "", path)
                print "F\t" path; file = 1
            } else skip = 1
        }
        first = 0
        if (file) { print "L\t" $0; next }
        if (lang == "c" || lang == "cmake") next
        line_in_block($0)
        next
    }
    {
        code = ($0 ~ /^    [^ ]/ || $0 ~ /^     +[^ ]/) && !list
        if ($0 ~ /^[-*] / || $0 ~ /^[0-9]+\. /) list = 1
        else if ($0 ~ /^$/) list = 0
        if (!code) { end_block(); next }
        line_in_block(substr($0, 5))
    }
    END { end_block() }' "$1"
}

# ------------------------------------------------------------ checking

# how_of PART SOURCE: "how<TAB>why" of the first CHECKS row matching PART
# (VAR=value prefixes dropped; SOURCE "docs" also matches the docs: rows), or "run"
how_of() {
    local row re part
    part=$(printf '%s\n' "$1" | sed -E 's/^([A-Za-z_][A-Za-z_0-9]*=("[^"]*"|[^ ]*) +)+//')
    while IFS= read -r row; do
        re=${row%%	*}
        case $re in
        docs:*) [ "$2" = docs ] || continue; re=${re#docs:} ;;
        esac
        if printf '%s\n' "$part" | grep -Eq -- "$re"; then
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
            grep -Eq "^(option\($opt |set\($opt .* CACHE )" "$SRC/CMakeLists.txt" ||
                { echo "-D$opt is not an option() or cache variable of CMakeLists.txt"; return 1; }
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
    (cd "$WORK" && env -u PYTHONPATH -u ATTEND_LIBRARY -u ATTEND_G2P_MODEL -u ATTEND_G2P_DICT \
        HOME="$WORK/home" PATH="$WORK/bin:$PATH" sh -c "$part") >"$WORK/.out" 2>"$WORK/.err" </dev/null
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

# norm: the lines of stdin without trailing blanks, trailing empty lines dropped
norm() {
    awk '{ sub(/[ \t]+$/, ""); a[NR] = $0 } END { n = NR; while (n > 0 && a[n] == "") n--; for (i = 1; i <= n; i++) print a[i] }'
}

# check_line LINE [SOURCE [EXPECTED]]: runs or checks each &&-part; prints one
# line per part. SOURCE "docs" also applies the docs: rows of CHECKS. With
# EXPECTED (a transcript), the parts' standard output together must be it.
n_run=0 n_checked=0 n_notrun=0 n_failed=0 n_compared=0
check_line() {
    local line=$1 src=${2:-readme} expected=${3-} part how why res all_run=1
    local rest=$line
    : >"$WORK/.tout"
    while [ -n "$rest" ]; do
        case $rest in
        *" && "*) part=${rest%% && *}; rest=${rest#* && } ;;
        *) part=$rest; rest= ;;
        esac
        how=$(how_of "$part" "$src")
        why=${how#*	}
        how=${how%%	*}
        [ "$how" = slow ] && { if [ $SANITIZED = 1 ]; then how=help; why="$why (sanitizer build)"; else how=run; fi; }
        case $part in export\ [A-Za-z_]*=*) how=export ;; esac
        [ "$how" = run ] || [ "$how" = export ] || all_run=0
        if [ "$MODE" = --list ]; then
            printf '%-8s %s%s\n' "$how" "$part" "${why:+   ($why)}"
            continue
        fi
        local t0 t1
        t0=$(date +%s)
        case $how in
        export)
            # the lines after it see the variable (expanded with the scratch HOME)
            local home=$HOME
            HOME=$WORK/home
            eval "$part"
            HOME=$home
            res= ;;
        run) res=$(run_part "$part"); cat "$WORK/.out" >>"$WORK/.tout" ;;
        help) res=$(run_part "$(printf '%s' "$part" | tr -d '[]') --help") ;;   # [--option] of a synopsis: given
        mpi)
            # mpirun and its options dropped, the MPI build's binary replaced by the one under test
            local cmd
            cmd=$(printf '%s\n' "$part" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /(^|\/)attend$/) { out = "./build/attend"; for (j = i + 1; j <= NF; j++) out = out " " $j; print out; exit } }')
            case $cmd in ./build/attend\ *) res=$(run_part "$cmd --help") ;; *) res="not an mpirun line of attend: $part" ;; esac ;;
        syntax)
            local s
            s=$(printf '%s\n' "$part" | awk '{ print $2 }')
            res=$([ -f "$SRC/$s" ] && bash -n "$SRC/$s" 2>&1 || echo "$s: missing or not valid bash") ;;
        options) res=$(check_options "$part") ;;
        built)
            res=$(check_options "$part")
            [ -z "$res" ] && [ ! -x "$ATTEND" ] && res="the binary under test is missing" ;;
        elsewhere)
            local script
            script=$(printf '%s\n' "$why" | grep -Eo '[a-z_/]+\.(sh|py)' | head -n 1)
            res=
            grep -qF -- "$part" "$SRC/$script" 2>/dev/null || res="not in $script as written: $part" ;;
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
        elif [ "$how" = run ] || [ "$how" = export ]; then
            printf 'ran      %s   (%s s)\n' "$part" $((t1 - t0))
            n_run=$((n_run + 1))
        else
            printf 'checked  %s   (%s: %s)\n' "$part" "$how" "$why"
            n_checked=$((n_checked + 1))
        fi
    done
    [ "$MODE" = --list ] && { [ -z "$expected" ] || printf '%-8s %s\n' compare "(its output: $(printf '%s\n' "$expected" | wc -l) lines)"; return; }
    [ -n "$expected" ] || return 0
    if [ $all_run = 0 ]; then
        printf 'checked  (the output shown under it is not compared: the line was not run)\n'
        return
    fi
    if [ "$(norm <"$WORK/.tout")" = "$(printf '%s\n' "$expected" | norm)" ]; then
        printf 'output   as shown (%s lines)\n' "$(printf '%s\n' "$expected" | norm | wc -l)"
        n_compared=$((n_compared + 1))
    else
        printf 'FAIL     the output of %s differs from the page:\n' "$line"
        diff <(printf '%s\n' "$expected" | norm) <(norm <"$WORK/.tout") | sed 's/^/         /' | head -n 40
        n_failed=$((n_failed + 1))
    fi
}

# docs_check FILE: the records of one docs/*.md page, in order
docs_check() {
    local type text cmd= out= path= body= have_cmd=0 have_file=0
    flush() {
        if [ $have_cmd = 1 ]; then check_line "$cmd" docs "$out"; fi
        if [ $have_file = 1 ] && [ "$MODE" != --list ]; then
            mkdir -p "$WORK/$(dirname "$path")" && printf '%s' "$body" >"$WORK/$path"
            printf 'wrote    %s\n' "$path"
        elif [ $have_file = 1 ]; then
            printf 'file     %s\n' "$path"
        fi
        have_cmd=0 have_file=0 cmd= out= path= body=
    }
    while IFS='	' read -r type text; do
        case $type in
        C) flush; check_line "$text" docs ;;
        T) flush; cmd=$text; have_cmd=1 ;;
        O) out="$out$text
" ;;
        F) flush; path=$text; have_file=1 ;;
        L) body="$body$text
" ;;
        esac
    done <<EOF
$(docs_records "$1")
EOF
    flush
}

# ------------------------------------------------------------ main

[ -x "$ATTEND" ] || { echo "doc_test: no binary $ATTEND" >&2; exit 2; }
rm -rf "$WORK"
mkdir -p "$WORK/bin" "$WORK/home" || exit 2
# build/: the build directory under test (its attend, tests/g2p_say, `cmake --install build`)
ln -s "$(dirname "$ATTEND")" "$WORK/build"
[ -x "$WORK/build/attend" ] || { rm "$WORK/build"; mkdir "$WORK/build"; ln -s "$ATTEND" "$WORK/build/attend"; }
ln -s "$ATTEND" "$WORK/bin/attend"
[ -x /usr/bin/python3 ] && ln -s /usr/bin/python3 "$WORK/bin/python3"    # Debian's: numpy, torch
# the lines run from the repository root: models/ a copy (a line may rewrite a
# model), the rest the source tree's own
cp -r "$SRC/models" "$WORK/models"
for d in tools data bench examples; do ln -s "$SRC/$d" "$WORK/$d"; done
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
for f in "$SRC"/docs/*.md; do
    echo "== docs/$(basename "$f")"
    docs_check "$f"
done
[ "$MODE" = --list ] && exit 0
echo "doc_test: $n_run parts ran ($n_compared outputs compared with the page), $n_checked checked without running, $n_notrun not run, $n_failed failed"
[ $n_failed -eq 0 ]
