#!/bin/sh
# newcomer_test.sh — issue 19 (a newcomer's first hour) and the streaming and
# per-line parts of issue 17: machine-readable output (--format), per-line
# problems (unknown symbols, over-long sources) with a summary and --strict,
# and bounded, streaming input in `attend decode`, `g2p`, `align` and `eval`.
#
#   sh tests/cli/newcomer_test.sh CASE ATTEND SOURCE_DIR WORK_DIR JSONL_FLAT PEAK_RSS
#
# The cases read the tiny reverse model of cli_test.sh's "train" case
# (WORK_DIR/model.safetensors, ctest fixture cli_model: symbols a-h, lengths
# 2-8) and the shipped G2P model. JSONL_FLAT (tests/cli/jsonl_flat.c) parses
# what --format jsonl printed, strictly, into LINE<TAB>PATH<TAB>VALUE lines;
# PEAK_RSS (tests/cli/peak_rss.c) measures a command's peak memory.
set -u
CASE=$1
A=$2
SRC=$3
WORK=$4
FLAT=$5
PEAK=$6
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
SRC=$(abs "$SRC")
WORK=$(abs "$WORK")
FLAT=$(abs "$FLAT")
PEAK=$(abs "$PEAK")
MODEL=$WORK/model.safetensors
G2P=$SRC/models/g2p-cmudict.safetensors
D=$WORK/newcomer_$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0
TAB=$(printf '\t')

# flat FILE: FILE parsed as JSON Lines into ./flat (fails on any syntax error)
flat() { "$FLAT" "$1" >flat 2>flat.err || { cat flat.err >&2; fail "$1 is not JSON Lines"; }; }
# val LINE PATH: the value at PATH in object LINE of ./flat
val() { awk -F '\t' -v l="$1" -v p="$2" '$1 == l && $2 == p { print $3; f = 1 } END { exit !f }' flat; }
# want_val LINE PATH VALUE
want_val() {
    got=$(val "$1" "$2") || fail "object $1 has no $2"
    [ "$got" = "$3" ] || fail "object $1: $2 is '$got', expected '$3'"
}

case $CASE in
format_decode)
    # sources with characters JSON and TSV must escape, an empty line, unknown symbols
    printf 'abcdef\nhgf\n\na b\nq"\\\n' >in
    run 0 "$A" decode "$MODEL" --format jsonl in
    flat out
    [ "$(cut -f1 flat | sort -u | wc -l)" -eq 5 ] || fail "expected 5 objects, one per input line"
    i=0
    while IFS= read -r line; do
        i=$((i + 1))
        want_val $i .index $i
        want_val $i .source "$(printf '%s' "$line" | sed 's/\\/\\\\/g')"
    done <in
    ok "jsonl: one object per input line, index = line number, source round-trips (quote, backslash)"
    want_val 1 '.hypotheses[0].output' fedcba
    want_val 2 '.hypotheses[0].output' fgh
    want_val 3 .hypotheses '[]'
    want_val 4 .unknown 1
    want_val 5 .unknown 3
    for l in 1 2 4; do
        s=$(val $l '.hypotheses[0].score') || fail "object $l: no score"
        awk -v s="$s" 'BEGIN { exit !(s + 0 <= 0 && s ~ /^-?[0-9.]+$/) }' || fail "object $l: score '$s' is not a log-probability"
    done
    ok "jsonl greedy: outputs are the reversals, scores are log-probabilities, unknown counts"
    printf 'abcdef\nhgfe\ndcb\n' >in3
    run 0 "$A" decode "$MODEL" --beam 3 --nbest 2 --format jsonl in3
    flat out
    for l in 1 2 3; do
        s1=$(val $l '.hypotheses[0].score') && s2=$(val $l '.hypotheses[1].score') || fail "object $l: not 2 hypotheses"
        awk -v a="$s1" -v b="$s2" 'BEGIN { exit !(a + 0 >= b + 0) }' || fail "object $l: scores not best first"
    done
    want_val 3 '.hypotheses[0].output' bcd
    ok "jsonl n-best: 2 scored hypotheses per input, best first"
    run 0 "$A" decode "$MODEL" --beam 3 --nbest 2 --format tsv in3
    awk -F '\t' 'NF != 5 { exit 1 }' out || fail "tsv rows are not INDEX RANK SCORE SOURCE OUTPUT"
    [ "$(cut -f1,2 out | tr '\t\n' ':,')" = "1:1,1:2,2:1,2:2,3:1,3:2," ] || fail "tsv index and rank columns"
    [ "$(awk -F '\t' '$2 == 1 { printf "%s=%s ", $4, $5 }' out)" = "abcdef=fedcba hgfe=efgh dcb=bcd " ] ||
        fail "tsv sources and best outputs"
    ok "tsv n-best: the input index in column 1, rank in column 2"
    run 0 "$A" decode "$MODEL" --format tsv in
    [ "$(sed -n 3p out)" = "3${TAB}0${TAB}${TAB}${TAB}" ] || fail "tsv: an empty line is rank 0 with no output"
    [ "$(sed -n 5p out | cut -f4)" = 'q"\\' ] || fail "tsv: backslash not escaped as \\\\"
    ok "tsv greedy: every input line has a row, escapes"
    echo abcdefg >in7
    run 0 "$A" decode "$MODEL" --align --format jsonl in7
    flat out
    rows=$(grep -c "$TAB\.hypotheses\[0\]\.alignment\[[0-9]*\]\[0\]$TAB" flat)
    [ "$rows" -eq 7 ] || fail "alignment has $rows rows, expected 7 (one per output token)"
    awk -F '\t' '$2 ~ /alignment/ { split($2, a, /[][]/); r = a[4]; sum[r] += $3; if (a[6] + 0 > 6) bad = 1 }
        END { for (r in sum) if (sum[r] < 0.99 || sum[r] > 1.01) bad = 1; exit bad }' flat ||
        fail "alignment rows are not 7 weights summing to 1"
    ok "jsonl --align: an alignment row of 7 weights per output token"
    run 2 "$A" decode "$MODEL" --align --format tsv in7
    has err "use --format jsonl for alignments"
    run 2 "$A" decode "$MODEL" --format xml in7
    has err "text\|tsv\|jsonl"
    ok "bad --format combinations are usage errors"
    ;;

format_other)
    printf 'hello\n\nworld\n' >words
    run 0 "$A" g2p --model "$G2P" --format jsonl - <words
    flat out
    want_val 1 .index 1
    want_val 1 .word hello
    want_val 1 '.hypotheses[0].phonemes' "HH EH L OW"
    want_val 2 .index 3
    want_val 2 '.hypotheses[0].phonemes' "W ER L D"
    val 1 '.hypotheses[0].score' | grep -Eq '^-[0-9.]+$' || fail "g2p jsonl: greedy score"
    ok "g2p jsonl: index (line), word, phonemes, score"
    run 0 "$A" g2p --model "$G2P" --nbest 2 --format tsv hello world
    [ "$(cut -f1,2,4 out | tr '\t\n' ':,')" = "1:1:hello,1:2:hello,2:1:world,2:2:world," ] || fail "g2p tsv n-best columns"
    [ "$(awk -F '\t' 'NR == 1 { print $5 }' out)" = "HH EH L OW" ] || fail "g2p tsv phonemes"
    ok "g2p tsv n-best: index, rank, score, word, phonemes"
    run 0 "$A" g2p --model "$G2P" --align --format jsonl cat
    flat out
    [ "$(grep -c "alignment\[[0-9]*\]\[0\]$TAB" flat)" -eq 3 ] || fail "g2p jsonl alignment: 3 rows for K AE T"
    ok "g2p jsonl --align"
    run 0 "$A" align "$MODEL" abcd --beam 2 --nbest 2 --format jsonl
    flat out
    [ "$(wc -l <out)" -eq 1 ] || fail "align jsonl: one object"
    want_val 1 .source abcd
    want_val 1 '.hypotheses[0].output' dcba
    [ "$(grep -c "hypotheses\[0\]\.alignment\[[0-9]*\]\[3\]$TAB" flat)" -eq 4 ] || fail "align jsonl: 4x4 alignment"
    ok "align jsonl: source, hypotheses with output, score and alignment"
    run 0 "$A" align "$MODEL" abcd --format tsv
    [ "$(sed -n 1p out)" = "index${TAB}rank${TAB}score${TAB}step${TAB}token${TAB}a${TAB}b${TAB}c${TAB}d" ] || fail "align tsv header"
    [ "$(awk -F '\t' 'NR > 1 { print $5 }' out | tr -d '\n')" = dcba ] || fail "align tsv tokens"
    awk -F '\t' 'NR > 1 && (NF != 9 || $3 + 0 > 0) { exit 1 }' out || fail "align tsv rows"
    ok "align tsv: header of source tokens, a row per output token"
    run 0 "$A" eval "$MODEL" --task reverse --count 50 --format jsonl
    flat out
    want_val 1 .pairs 50
    val 1 .greedy_seq_acc | grep -Eq '^[01]\.[0-9]{4}$' || fail "eval jsonl: greedy_seq_acc"
    run 0 "$A" eval "$MODEL" --task reverse --count 50 --format tsv
    has out "^pairs${TAB}50$"
    has out "^greedy_seq_acc${TAB}[01]\.[0-9]{4}$"
    ok "eval jsonl and tsv"
    ;;

unknown)
    # the README's old example: spaces to a character model
    echo "a b c d" >in
    run 0 "$A" decode "$MODEL" --beam 4 in
    has err "^attend decode: in:1: 3 of 7 symbols unknown to the model \(' '\), decoded as <unk>; the model reads every character as a symbol, spaces included$"
    has err "^attend decode: 1 input line: 1 with unknown symbols \(3 symbols\)$"
    ok "decode: unknown symbols reported with the line, the symbol and the tokenizer"
    run 1 "$A" decode "$MODEL" --strict in
    has err "in:1: 3 of 7 symbols unknown.*\(an error with --strict\)$"
    ok "decode --strict: unknown symbols are an error"
    printf 'abc\n' >ok_in
    run 0 "$A" decode "$MODEL" --strict ok_in
    [ ! -s err ] || fail "a clean input prints nothing on stderr"
    ok "a clean input: no messages"
    run 0 "$A" g2p --model "$G2P" hello w0rld
    has err "^attend g2p: <args>:2: 'w0rld': 1 of 5 letters unknown to the model \('0'\), read as <unk>$"
    has err "^attend g2p: 2 words: 1 with unknown symbols \(1 symbols\)$"
    has out "^hello HH EH L OW$"
    run 1 "$A" g2p --model "$G2P" --strict w0rld
    ok "g2p: unknown letters reported per word, --strict makes them errors"
    run 0 "$A" align "$MODEL" "ab c"
    has err "^attend align: 1 of 4 source symbols unknown to the model \(' '\)"
    ok "align: unknown symbols reported"
    ;;

long)
    # one line far beyond the model (6 000 characters) among good ones: it is
    # reported with the options that help, the others decode
    { echo abc; awk 'BEGIN { for (i = 0; i < 6000; i++) printf "a"; print "" }'; echo hgfedcba; echo abcdefghabcd; } >in
    run 0 "$A" decode "$MODEL" in
    [ "$(tr "\n" , <out)" = "cba,,abcdefgh,$(sed -n 4p out)," ] || fail "outputs: the long line must give an empty line"
    has err "^attend decode: in:2: 6000 source tokens, more than this run's 64: not decoded \(--max-src-len N raises the limit, and memory with it; the model was trained on sources of up to 8\)$"
    has err "^attend decode: in:4: 12 source tokens, longer than the model's training sources \(up to 8\): expect mistakes$"
    has err "^attend decode: 4 input lines: 1 longer than the training sources, 1 too long \(not decoded\)$"
    ok "a 6000-token line: reported per line, other lines decoded, summary"
    run 1 "$A" decode "$MODEL" --strict in
    has err "in:2: 6000 source tokens.*\(an error with --strict\)$"
    ok "--strict: an error"
    run 0 "$A" decode "$MODEL" --max-src-len 3 --format jsonl in
    flat out
    want_val 3 .error "too long"
    want_val 1 '.hypotheses[0].output' cba
    ok "--max-src-len 3: longer lines not decoded, jsonl says why"
    run 0 "$A" g2p --model "$G2P" abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop cat
    has err "<args>:1: 'abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnop': 68 characters, more than the 64 a word may have: not pronounced$"
    has out "^cat K AE T$"
    ok "g2p: an over-long word is reported, the others pronounced"
    # capacities too big for memory: the message names the options that size them
    if [ "${ATTEND_SANITIZED:-0}" = 1 ] || grep -q __asan_init "$A" 2>/dev/null; then
        ok "sanitizer build: ulimit -v would break the sanitizer, not checked"
    else
        run 1 sh -c "ulimit -v 1000000; exec \"$A\" decode \"$MODEL\" --max-src-len 6000 in"
        has err "^attend decode: not enough memory for batches of 4 lines of up to 6000 source and 12000 output tokens: lower --batch, --max-src-len or --max-len \("
        ok "out of memory at --max-src-len 6000: names --batch, --max-src-len and --max-len"
    fi
    ;;

stream)
    # endless input without a newline: a clear error at once, not the OOM killer
    run 1 timeout 20 "$A" decode "$MODEL" /dev/zero
    has err "^attend decode: /dev/zero:1: longer than the 65536 bytes a line may have \(--skip-malformed skips such lines\)$"
    run 1 timeout 20 sh -c "\"$A\" g2p --model \"$G2P\" </dev/zero"
    has err "^attend g2p: <stdin>:1: longer than the 65536 bytes a line may have"
    ok "/dev/zero: a path:line error, quickly"
    # a huge line then a good one: the error names the line; --skip-malformed skips it
    { awk 'BEGIN { for (i = 0; i < 3000; i++) printf "abcdefghabcdefghabcdefghabcdefgh"; print "" }'; echo def; } >in
    run 1 "$A" decode "$MODEL" in
    has err "^attend decode: in:1: longer than the 65536 bytes"
    run 0 "$A" decode "$MODEL" --skip-malformed in
    [ "$(tr '\n' , <out)" = ",fed," ] || fail "--skip-malformed: an empty output, then fed"
    has err "^attend decode: 2 input lines: 1 malformed \(skipped\)$"
    ok "a 96 000-byte line: error, or skipped with --skip-malformed and the next line decoded"
    # a read error is not the end of the input
    mkdir adir
    run 1 "$A" decode "$MODEL" adir
    has err "^attend decode: adir: read error in line 1: Is a directory$"
    run 1 sh -c "\"$A\" g2p --model \"$G2P\" <adir"
    has err "^attend g2p: <stdin>: read error in line 1: Is a directory$"
    ok "read errors: non-zero exit with the reason"
    # streaming: the first batch's outputs appear while the input is still open
    mkfifo fifo
    "$A" decode "$MODEL" --batch 4 fifo >sout 2>serr &
    pid=$!
    exec 3>fifo
    printf 'ab\nabc\nabcd\nabcde\n' >&3
    n=0
    while [ "$(wc -l <sout)" -lt 4 ] && [ $n -lt 200 ]; do sleep 0.1; n=$((n + 1)); done
    got=$(wc -l <sout)
    printf 'hgf\n' >&3
    exec 3>&-
    wait $pid || fail "decode from a fifo failed: $(cat serr)"
    [ "$got" -eq 4 ] || fail "no output while the input was open: decode does not stream"
    [ "$(tr '\n' , <sout)" = "ba,cba,dcba,edcba,fgh," ] || fail "fifo outputs"
    ok "a batch is decoded and printed before the input ends"
    ;;

memory)
    # peak memory does not grow with the input: 10 000 then 100 000 lines (a
    # tenth of that in sanitizer builds, whose allocator keeps freed memory, so
    # the peak is not compared there: they check the outputs only)
    small=10000 big=100000 sanitized=0
    if [ "${ATTEND_SANITIZED:-0}" = 1 ] || grep -q __asan_init "$A" 2>/dev/null; then
        small=1000 big=10000 sanitized=1
    fi
    awk -v n=$big 'BEGIN { srand(1); for (i = 0; i < n; i++) { k = 2 + int(rand() * 7); s = "";
         for (j = 0; j < k; j++) s = s substr("abcdefgh", 1 + int(rand() * 8), 1); print s } }' >big
    head -n $small big >small
    "$PEAK" rss_small "$A" decode "$MODEL" small >out_small 2>err || fail "decode of $small lines failed"
    "$PEAK" rss_big "$A" decode "$MODEL" big >out_big 2>err || fail "decode of $big lines failed"
    [ "$(wc -l <out_big)" -eq $big ] || fail "$big outputs expected"
    head -n $small out_big >first
    cmp -s out_small first || fail "the first $small outputs differ"
    s=$(cat rss_small) b=$(cat rss_big)
    ok "$big lines decoded (peak $b KiB; $small lines: $s KiB)"
    if [ $sanitized = 1 ]; then
        ok "sanitizer build: peak not compared"
    else
        [ $((b - s)) -lt 1536 ] || fail "peak memory grew by $((b - s)) KiB from $small to $big lines (bound 1536)"
        [ "$b" -lt 65536 ] || fail "peak $b KiB over 64 MiB"
        ok "peak memory grew by $((b - s)) KiB (< 1536) for 10x the lines"
    fi
    ;;

steps)
    # schedules follow --steps when not given: warm-up a tenth (at most 100),
    # cosine decay over the rest, an evaluation every fifth, a checkpoint every
    # tenth (both at least 100 steps apart)
    TASK="--task reverse --symbols 6 --min-len 2 --max-len 6 --count 300 --dev-count 30 --emb 8 --hidden 8
          --dec-hidden 16 --attn 8 --batch 16"
    # shellcheck disable=SC2086
    run 0 "$A" train $TASK --steps 1500 --checkpoint ck.safetensors --out m.safetensors
    has out "^training: adam lr 0.003, warm-up 100, cosine decay 1400 to 0, clip 1, batch 16, 1500 steps, seed 1$"
    [ "$(grep -c '^eval step ' out)" -eq 4 ] || fail "expected evaluations at steps 300, 600, 900, 1200"
    has out "^eval step 1200: "
    [ "$(grep -c '^checkpoint: step [0-9]* saved' out)" -eq 10 ] || fail "expected a checkpoint every 150 steps"
    ok "train --steps 1500: warm-up 100, decay 1400, evaluation every 300, checkpoint every 150"
    # shellcheck disable=SC2086
    run 0 "$A" train $TASK --steps 50 --checkpoint ck.safetensors --overwrite --out m.safetensors
    has out "^training: adam lr 0.003, warm-up 5, cosine decay 45 to 0, clip 1, batch 16, 50 steps, seed 1$"
    [ "$(grep -c '^eval step ' out)" -eq 0 ] || fail "--steps 50: evaluations are at least 100 steps apart"
    [ "$(grep -c '^checkpoint: step [0-9]* saved' out)" -eq 1 ] || fail "--steps 50: only the final checkpoint"
    ok "train --steps 50: warm-up 5, decay 45, evaluation and checkpoint only at the end"
    # shellcheck disable=SC2086
    run 0 "$A" train $TASK --steps 50 --warmup 0 --decay 0 --eval-every 0 --out m.safetensors
    has out "^training: adam lr 0.003, clip 1, batch 16, 50 steps, seed 1$"
    [ "$(grep -c '^eval step ' out)" -eq 0 ] || fail "--eval-every 0: only the final evaluation"
    ok "explicit values win (0: no warm-up, constant rate, no interim evaluations)"
    # shellcheck disable=SC2086
    run 0 "$A" train --help
    has out "--warmup N +linear warm-up steps \(a tenth of --steps, at most 100\)"
    has out "--eval-every N +evaluate on the dev set every N steps \(a fifth of --steps, at"
    has out "--checkpoint-every N steps between checkpoints \(a tenth of --steps, at least 100;"
    ok "train --help states the rules"
    run 0 "$A" sweep --steps 60 --lengths 5 --decoders additive --train-pairs 200 --dev-pairs 20 --csv s.csv --svg s.svg
    has out "warm-up 6, cosine to 0.0001"
    ok "sweep --steps 60 works (warm-up 6)"
    run 0 "$A" demo --steps 20 --out demo.safetensors
    has out "^training: adam lr 0.003, warm-up 2, cosine decay 18 to 0.0001, "
    [ "$(grep -c '^eval step ' out)" -eq 0 ] || fail "demo --steps 20: no interim evaluations"
    ok "demo --steps 20: warm-up 2, decay 18, one evaluation at the end"
    ;;

*)
    fail "unknown case $CASE"
    ;;
esac
echo "$PASSED passed, 0 failed"
