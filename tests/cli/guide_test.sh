#!/bin/sh
# guide_test.sh — guided alignment (issue 13 part 5) through the command:
#
#   sh tests/cli/guide_test.sh CASE ATTEND WORK_DIR
#
#   usage    --help names --guided-alignment; it is refused (exit 2, naming both
#            options) with --decoder none, --decoder pointer and --task sort,
#            for data without alignments and for a negative value
#   tsv      a TSV with a third column of links trains with --guided-alignment
#            (the training line says so), and as --dev and in `attend eval
#            --tsv` a third column loads; a bad third column is an error naming
#            FILE:LINE and the link (exit 1), skipped with --skip-malformed
#   resume   a checkpoint records the value: --resume with another one is
#            refused naming guided_alignment, with the same one it continues
#   task     --task reverse carries its own (anti-diagonal) alignment
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
SMALL="--emb 8 --hidden 8 --dec-hidden 16 --attn 8 --batch 8"

# reversed words with their anti-diagonal alignment
printf 'abc\tcba\t2-0 1-1 0-2\nabcd\tdcba\t3-0 2-1 1-2 0-3\nba\tab\t1-0 0-1\ncab\tbac\t2-0 1-1 0-2\n' >train.tsv
printf 'bca\tacb\t2-0 1-1 0-2\nab\tba\t1-0 0-1\n' >dev.tsv
printf 'abc\tcba\nab\tba\n' >plain.tsv

case $CASE in
usage)
    run 0 "$A" train --help
    has out "--guided-alignment X"
    # shellcheck disable=SC2086
    run 2 "$A" train --train train.tsv --decoder none --guided-alignment 1 $SMALL --steps 1 --out x.safetensors
    has err "--guided-alignment with --decoder none: it has no attention to guide"
    ok "--decoder none refused"
    run 2 "$A" train --task sort --guided-alignment 1 --steps 1 --out x.safetensors
    has err "--guided-alignment with --task sort: a pointer's attention is its output"
    run 2 "$A" train --task sort --decoder pointer --guided-alignment 1 --steps 1 --out x.safetensors
    has err "--guided-alignment with --decoder pointer"
    ok "pointer refused"
    # shellcheck disable=SC2086
    run 2 "$A" train --train plain.tsv --guided-alignment 1 $SMALL --steps 1 --out x.safetensors
    has err "--guided-alignment needs alignments: no line of plain.tsv has a third column"
    ok "data without alignments refused"
    run 2 "$A" train --train train.tsv --guided-alignment -1 --steps 1 --out x.safetensors
    has err "--guided-alignment"
    [ ! -e x.safetensors ] || fail "a refused run wrote its model"
    ok "a negative value refused"
    ;;
tsv)
    # shellcheck disable=SC2086
    run 0 "$A" train --train train.tsv --dev dev.tsv --guided-alignment 1 $SMALL --steps 20 --out g.safetensors
    has out "guided alignment 1$"
    has out "^dev: pairs 2 "
    ok "trains on a TSV with alignments; the dev file's third column loads"
    run 0 "$A" eval g.safetensors --tsv dev.tsv
    has out "^pairs +2$"
    ok "eval --tsv reads a third column"
    # shellcheck disable=SC2086
    run 0 "$A" train --train plain.tsv $SMALL --steps 2 --out p.safetensors
    ! grep -q "guided" out || fail "a run without the option mentions it"
    ok "two columns train as before"
    printf 'abc\tcba\t2-0\nab\tba\t1-0\nab\tba\t0-0 5-1\nab\tba\n' >bad.tsv
    # shellcheck disable=SC2086
    run 1 "$A" train --train bad.tsv --guided-alignment 1 $SMALL --steps 2 --out b.safetensors
    has err "bad.tsv:3: alignment column: '5-1' at byte 10: source position 5 is outside the source's 2 tokens"
    printf 'abc\tcba\t2-0\nab\tba\t1-0\nab\tba\t0-0 x\n' >bad2.tsv
    # shellcheck disable=SC2086
    run 1 "$A" train --train bad2.tsv $SMALL --steps 2 --out b.safetensors
    has err "bad2.tsv:3: alignment column: 'x' at byte 10 is not a link i-j"
    # shellcheck disable=SC2086
    run 0 "$A" train --train bad.tsv --skip-malformed --guided-alignment 1 $SMALL --steps 2 --out b.safetensors
    ok "a bad third column: FILE:LINE and the link; --skip-malformed skips it"
    ;;
resume)
    # shellcheck disable=SC2086
    run 0 "$A" train --train train.tsv --guided-alignment 1 $SMALL --steps 6 --warmup 0 --decay 0 \
        --checkpoint ck --checkpoint-every 3 --out g.safetensors
    # shellcheck disable=SC2086
    run 1 "$A" train --train train.tsv --guided-alignment 0.5 $SMALL --steps 9 --warmup 0 --decay 0 --resume ck \
        --out r.safetensors
    has err "checkpoint's guided_alignment is 1, in this run 0.5"
    ok "another value refused on resume"
    # shellcheck disable=SC2086
    run 0 "$A" train --train train.tsv --guided-alignment 1 $SMALL --steps 9 --warmup 0 --decay 0 --resume ck \
        --out r.safetensors
    has out "resumed: ck at step 6"
    ok "the same value resumes"
    ;;
task)
    run 0 "$A" train --task reverse --symbols 5 --min-len 2 --max-len 5 --count 200 --dev-count 20 \
        --guided-alignment 1 --emb 8 --hidden 8 --dec-hidden 16 --attn 8 --batch 8 --steps 10 --out t.safetensors
    has out "guided alignment 1$"
    ok "--task reverse trains with its own alignment"
    ;;
*)
    echo "guide_test.sh: unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
