#!/bin/sh
# cli_test.sh — end-to-end tests of `attend train`, `decode`, `eval` and `demo`.
#
#   sh tests/cli/cli_test.sh CASE ATTEND SOURCE_DIR WORK_DIR
#
# CASE "train" trains the tiny reverse model the other cases use
# (WORK_DIR/model.safetensors; ctest runs it first as the fixture cli_model).
# Every case works in WORK_DIR/CASE, prints one line per check and fails
# (exit 1) at the first check that does not hold, showing the command's output.
set -u
CASE=$1
A=$2
SRC=$3
WORK=$4
# relative paths are taken from the current directory (each case cd's to its own)
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
SRC=$(abs "$SRC")
WORK=$(abs "$WORK")
FIX=$SRC/tests/cli
MODEL=$WORK/model.safetensors
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0

# The tiny model: 8 symbols a-h, lengths 2-8, Luong attention with the general
# score (sharp alignments), ~3 s.
TINY="--task reverse --symbols 8 --min-len 2 --max-len 8 --count 2000 --dev-count 200
      --emb 16 --hidden 32 --dec-hidden 64 --decoder luong --score general
      --batch 32 --steps 300 --warmup 30 --decay 270 --seed 1"
# Smaller still, for the resume and pointer cases.
SMALL="--symbols 6 --min-len 2 --max-len 6 --count 500 --dev-count 50
       --emb 8 --hidden 16 --dec-hidden 32 --batch 16 --warmup 10 --decay 100"

case $CASE in
train)
    # shellcheck disable=SC2086
    run 0 "$A" train $TINY --eval-every 100 --log-every 100 --out "$MODEL"
    has out "^data: reverse task, 8 symbols, sequences of 2-8 symbols: 2000 training pairs \(seed 1\), 200 dev pairs \(seed 2\)$"
    has out "^model: gru encoder 1x32 bidirectional, luong decoder 64, general attention, emb 16: [0-9]+ parameters$"
    has out "^eval step 100: pairs 200  loss "
    has out "^trained: steps 1-300 in "
    has out "^saved: $MODEL$"
    [ -s "$MODEL" ] || fail "no model file"
    ok "trained and saved"
    # stderr is not a terminal here: plain log lines, no progress bar
    has err "^step 100/300 loss [0-9.]+ lr [0-9.e+-]+ gnorm [0-9.e+-]+ pairs/s [0-9]+$"
    has err "^step 300/300 "
    if grep -q "$(printf '\r')" err; then fail "progress bar on a non-terminal stderr"; fi
    ok "log lines"
    acc=$(awk '$1 == "dev:" { for (i = 1; i < NF; i++) if ($i == "greedy-seq") print $(i + 1) }' out)
    at_least "$acc" 0.9
    ok "dev greedy sequence accuracy $acc"
    ;;

decode)
    printf 'abcdef\nhgf\nabab\n\ncab\tignored after the tab\nab\n' >in
    printf 'fedcba\nfgh\nbaba\n\nbac\nba\n' >want
    run 0 "$A" decode "$MODEL" in
    cmp -s out want || { diff out want >&2; fail "outputs are not the reversals"; }
    ok "greedy outputs are the reversals, empty line kept, text after a tab ignored"
    run 0 "$A" decode "$MODEL" --batch 2 - <in
    cmp -s out want || fail "--batch 2 from stdin differs"
    ok "batches of 2 from stdin give the same"
    run 0 "$A" decode "$MODEL" --beam 4 in
    cmp -s out want || fail "--beam 4 outputs are not the reversals"
    ok "beam 4 outputs are the reversals"
    ;;

beam)
    printf 'abcdef\nhgfe\ndcb\n' >in
    run 0 "$A" decode "$MODEL" --beam 3 --nbest 2 in
    [ "$(wc -l <out)" -eq 6 ] || fail "expected 2 lines per input (6)"
    awk -F '\t' 'NF != 2 || $1 !~ /^-?[0-9]+\.[0-9]+$/ { exit 1 }' out || fail "lines are not score<TAB>output"
    awk -F '\t' 'NR % 2 == 0 && $1 + 0 > prev + 0 { exit 1 } { prev = $1 }' out ||
        fail "scores do not descend within an input"
    awk -F '\t' 'NR % 2 == 1 && $1 + 0 > 0 { exit 1 }' out || fail "a log-probability above 0"
    [ "$(awk -F '\t' 'NR % 2 == 1 { printf "%s ", $2 }' out)" = "fedcba efgh bcd " ] ||
        fail "the best hypotheses are not the reversals"
    ok "2 hypotheses per input, best first, best = reversal"
    run 0 "$A" decode "$MODEL" --beam 3 --nbest 2 --alpha 1 in
    [ "$(wc -l <out)" -eq 6 ] || fail "--alpha 1: expected 6 lines"
    ok "--alpha 1"
    run 2 "$A" decode "$MODEL" --beam 2 --nbest 3 in
    has err "--nbest 3 is more than --beam 2"
    ok "--nbest above --beam is a usage error"
    ;;

align)
    echo abcdefg >in
    run 0 "$A" decode "$MODEL" --align --align-format tsv in
    has out "^gfedcba$"
    # line 2: a tab, then the 7 source tokens; lines 3-9: token and 7 weights
    [ "$(sed -n 2p out)" = "$(printf '\ta\tb\tc\td\te\tf\tg')" ] || fail "header row"
    awk -F '\t' 'NR >= 3 && NR <= 9 {
            if (NF != 8) exit 1
            best = 2; sum = 0
            for (i = 2; i <= 8; i++) { sum += $i; if ($i > $best) best = i }
            if (best - 2 != 6 - (NR - 3)) exit 1      # anti-diagonal: output t looks at 6 - t
            if (sum < 0.99 || sum > 1.01) exit 1
        }' out || fail "row argmax is not the anti-diagonal (or rows do not sum to 1)"
    ok "tsv alignment: row argmax on the anti-diagonal"
    run 0 "$A" decode "$MODEL" --align in
    # shade heatmap: header, border, 7 rows "t | c c c c c c c |", border, legend, blank
    [ "$(wc -l <out)" -eq 13 ] || fail "shade heatmap: expected 13 lines"
    [ "$(sed -n 2p out)" = "    a b c d e f g" ] || fail "shade header"
    [ "$(sed -n 3p out)" = "  +---------------+" ] || fail "shade border"
    awk 'NR >= 4 && NR <= 10 {
            ramp = " .:-=+*#%@"; best = 0; bl = 0
            for (j = 0; j < 7; j++) { l = index(ramp, substr($0, 5 + 2 * j, 1)); if (l > bl) { bl = l; best = j } }
            if (best != 6 - (NR - 4) || bl < 6) exit 1   # darkest cell on the anti-diagonal, weight >= 0.5
        }' out || fail "shade heatmap: darkest cell is not on the anti-diagonal"
    ok "shade heatmap: darkest cell on the anti-diagonal"
    run 0 "$A" decode "$MODEL" --align --align-format percent in
    has out "^ *g \|( +[0-9]+){7} \|$"
    ok "percent heatmap"
    run 0 "$A" decode "$MODEL" --beam 2 --nbest 2 --align --align-format tsv in
    [ "$(grep -c "$(printf '^\ta\tb')" out)" -eq 2 ] || fail "beam --align: one heatmap per hypothesis"
    ok "beam --align prints one heatmap per hypothesis"
    ;;

eval)
    run 0 "$A" eval "$MODEL" --task reverse --min-len 2
    has out "^pairs +1000$"
    for k in tf_token_acc tf_seq_acc greedy_token_acc greedy_seq_acc; do
        v=$(awk -v k=$k '$1 == k { print $2 }' out)
        [ -n "$v" ] || fail "no $k"
        at_least "$v" 0.9
    done
    has out "^loss +[0-9.]+$"
    has out "^attn_entropy +[0-9.]+$"
    has out "^pairs/s +[0-9]+$"
    ok "task: accuracies >= 0.9"
    run 0 "$A" eval "$MODEL" --tsv "$FIX/reverse_dev.tsv" --batch 16
    has out "^pairs +60$"
    at_least "$(awk '$1 == "greedy_seq_acc" { print $2 }' out)" 0.9
    ok "tsv: greedy sequence accuracy >= 0.9"
    run 2 "$A" eval "$MODEL"
    has err "give exactly one of --tsv FILE and --task NAME"
    run 2 "$A" eval "$MODEL" --task sort
    has err "not a pointer model"
    ok "usage errors"
    ;;

resume)
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $SMALL --steps 60 --eval-every 20 --out full.safetensors
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $SMALL --steps 30 --checkpoint ck.safetensors --checkpoint-every 10 \
        --out half.safetensors
    has out "^checkpoint: step 10 saved to ck.safetensors$"
    has out "^checkpoint: step 30 saved to ck.safetensors$"
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $SMALL --steps 60 --resume ck.safetensors --out resumed.safetensors
    has out "^resumed: ck.safetensors at step 30$"
    has out "^trained: steps 31-60 in "
    cmp -s full.safetensors resumed.safetensors || fail "the resumed model differs from the uninterrupted one"
    if cmp -s full.safetensors half.safetensors; then fail "the half-trained model equals the full one"; fi
    ok "checkpoint at step 30 + resume to 60 == 60 steps in one run (byte for byte)"
    # shellcheck disable=SC2086
    run 1 "$A" train --task reverse $SMALL --batch 8 --steps 60 --resume ck.safetensors
    has err "batch size is 16, this run uses 8"
    ok "resume with another batch size is refused"
    echo abc >in
    run 0 "$A" decode ck.safetensors in
    ok "a checkpoint decodes like a model"
    ;;

tsv)
    run 0 "$A" train --train "$FIX/words.tsv" --dev "$FIX/words_dev.tsv" --skip-malformed \
        --steps 30 --batch 8 --emb 8 --hidden 16 --dec-hidden 32 --out words.safetensors
    has out "words.tsv: 2 malformed lines skipped$"
    has out "words_dev.tsv: 0 malformed lines skipped$"
    has out "^data: .*words.tsv: 40 training pairs, vocabularies of 8 source and 8 target symbols \(char tokenizer\), sources up to [0-9]+ and targets up to [0-9]+ tokens; .*words_dev.tsv: 11 dev pairs$"
    has out "^dev: pairs 11 "
    has out "^saved: words.safetensors$"
    ok "TSV training with --skip-malformed reports the skipped lines"
    printf 'abc\nhhz\n' >in
    run 0 "$A" decode words.safetensors in
    [ "$(wc -l <out)" -eq 2 ] || fail "two outputs expected"
    ok "the TSV model decodes (unknown characters become <unk>)"
    run 0 "$A" eval words.safetensors --tsv "$FIX/words_dev.tsv"
    has out "^pairs +11$"
    ok "eval --tsv"
    run 0 "$A" train --train "$FIX/words.tsv" --skip-malformed --tokenizer space --steps 2 --batch 8 \
        --emb 4 --hidden 4 --dec-hidden 8 --attn 4 --out space.safetensors
    has out "^train \(no --dev\): pairs 40 "
    ok "space tokenizer, no --dev: evaluated on the training data"
    ;;

pointer)
    # shellcheck disable=SC2086
    run 0 "$A" train --task sort $SMALL --steps 40 --out sort.safetensors
    has out "pointer decoder"
    printf 'fcad\nb\n' >in
    run 0 "$A" decode sort.safetensors in
    awk -F '\t' 'NR == 1 { n = split($1, p, " "); if (n != 4 || length($2) != 4) exit 1
                           for (i = 1; i <= 4; i++) { if (p[i] !~ /^[0-3]$/ || seen[p[i]]++) exit 1 } }
                 NR == 2 && $0 != "0\tb" { exit 1 }' out || fail "not positions<TAB>tokens"
    ok "positions (a permutation) and the source tokens in that order"
    run 0 "$A" decode sort.safetensors --align --align-format tsv in
    has out "$(printf '^\tf\tc\ta\td$')"
    ok "pointer --align"
    run 0 "$A" decode sort.safetensors --beam 2 in
    awk -F '\t' 'NR == 2 && $0 != "0\tb" { exit 1 }' out || fail "beam: not positions<TAB>tokens"
    run 0 "$A" eval sort.safetensors --task sort --count 50
    has out "^pairs +50$"
    ok "pointer eval; beam search (tests/cli/pointer_perm_test.sh checks it further)"
    ;;

nonfinite)
    # A diverged run: a checkpoint whose output layer was scaled by 1e35 (still
    # finite, so it loads; tests/cli/st_scale.c). Resumed, its logits overflow:
    # those steps are skipped and counted. (SGD at lr 1e6 used to get there by
    # itself; with tanh saturating to exactly ±1 the gradients vanish first.)
    [ -n "${ST_SCALE:-}" ] && [ -x "$ST_SCALE" ] || fail "ST_SCALE (the st_scale helper) is not set"
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $SMALL --steps 5 --optimizer sgd --lr 0.1 --clip 0 \
        --checkpoint ck0.safetensors --checkpoint-every 5 --out m0.safetensors
    "$ST_SCALE" ck0.safetensors out.weight 1e35 || fail "st_scale"
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $SMALL --steps 30 --optimizer sgd --lr 0.1 --clip 0 --resume ck0.safetensors \
        --out nan.safetensors
    has err "^step [0-9]+: (loss|gradient norm) (nan|inf|-inf) is not finite: update skipped"
    has out "^trained: steps 6-30 in .*, [1-9][0-9]* steps skipped \(non-finite\)$"
    ok "non-finite steps are reported and counted"
    # the same with a limit of 3 in a row stops early, saves nothing after the
    # stop, and its last checkpoint (written before the stop) loads
    # shellcheck disable=SC2086
    run 1 "$A" train --task reverse $SMALL --steps 200 --optimizer sgd --lr 0.1 --clip 0 --resume ck0.safetensors \
        --max-nonfinite 3 --checkpoint ck.safetensors --checkpoint-every 1 --out stopped.safetensors
    has err "^attend train: attend_trainer_step: 3 non-finite steps in a row \(steps [0-9]+-[0-9]+; .*\): training stopped; the weights are those of step [0-9]+$"
    has err "^attend train: stopped after 3 non-finite steps in a row \(--max-nonfinite 3\); nothing was saved, the last checkpoint is ck.safetensors$"
    [ ! -e stopped.safetensors ] || fail "a model was written after the stop"
    stop=$(sed -n 's/.*non-finite steps in a row (steps [0-9]*-\([0-9]*\);.*/\1/p' err)
    last=$(sed -n 's/^checkpoint: step \([0-9]*\) saved.*/\1/p' out | tail -n 1)
    [ -n "$stop" ] && [ -n "$last" ] && [ "$last" -lt "$stop" ] || fail "checkpoint step '$last', stop at '$stop'"
    echo abc >in
    run 0 "$A" decode ck.safetensors in
    ok "--max-nonfinite 3 stops the run at step $stop with a message; the last checkpoint (step $last) loads"
    run 2 "$A" train --task reverse --max-nonfinite -1
    has err "^attend train: --max-nonfinite: expected an integer in \[0, 1000000000\], got '-1'$"
    ok "--max-nonfinite takes N >= 0"
    ;;

errors)
    run 1 "$A" decode "$D/missing.safetensors" /dev/null
    has err "^attend decode: .*missing.safetensors"
    ok "missing model file: exit 1 naming it"
    head -c 1000 "$MODEL" >truncated.safetensors
    run 1 "$A" decode truncated.safetensors /dev/null
    has err "^attend decode: .*truncated.safetensors"
    run 1 "$A" eval truncated.safetensors --task reverse
    has err "^attend eval: .*truncated.safetensors"
    printf 'this is not a model\n' >garbage.safetensors
    run 1 "$A" decode garbage.safetensors /dev/null
    has err "^attend decode: .*garbage.safetensors"
    ok "truncated and garbage model files: exit 1 naming them"
    run 1 "$A" decode "$MODEL" no-such-input.txt
    has err "^attend decode: no-such-input.txt: "
    ok "missing input file"
    run 1 "$A" train --train "$FIX/words.tsv" --steps 1 --out x.safetensors
    has err "^attend train: .*words.tsv:5: "
    [ ! -e x.safetensors ] || fail "a model was written"
    ok "malformed TSV without --skip-malformed: exit 1 with file:line"
    run 2 "$A" train --task reverse --bogus 3
    has err "unknown option '--bogus'"
    run 2 "$A" decode "$MODEL" --frobnicate
    has err "unknown option '--frobnicate'"
    run 2 "$A" eval "$MODEL" --task reverse --nope=1
    has err "unknown option '--nope'"
    run 2 "$A" demo --what
    has err "unknown option '--what'"
    run 2 "$A" no-such-command
    ok "unknown options and commands: exit 2 naming them"
    run 2 "$A" train --task reverse --steps many
    has err "--steps: expected an integer"
    run 2 "$A" train --task reverse --lr -1
    has err "--lr: expected a number"
    run 2 "$A" train --task reverse --cell rnn
    has err "--cell: expected one of gru\|lstm, got 'rnn'"
    run 2 "$A" train --task reverse --steps
    has err "--steps needs a value"
    run 2 "$A" decode "$MODEL" --beam 0
    has err "--beam: expected an integer in \[1, 64\]"
    run 2 "$A" decode "$MODEL" --align-format svg
    has err "--align-format: expected one of shade\|percent\|tsv"
    run 2 "$A" train --steps 10
    has err "give the data"
    run 2 "$A" train --task reverse --decoder pointer
    has err "needs --task sort"
    run 2 "$A" train --task sort --decoder luong
    has err "needs --decoder pointer"
    run 2 "$A" train --task reverse --train "$FIX/words.tsv"
    has err "exclude each other"
    run 2 "$A" decode
    has err "which model"
    ok "bad values and combinations: exit 2 naming the option"
    run 1 "$A" train --task reverse --steps 1 --resume missing-checkpoint.safetensors
    has err "missing-checkpoint.safetensors"
    ok "missing checkpoint: exit 1"
    for c in train decode eval demo; do
        run 0 "$A" $c --help
        has out "^usage: attend $c"
    done
    ok "--help"
    ;;

demo)
    run 0 "$A" demo --steps 5 --out demo.safetensors
    [ -s demo.safetensors ] || fail "no model file"
    [ "$(grep -Ec '^example [1-4]: [a-j]+ -> [a-j]*  \((correct|wrong)\)$' out)" -eq 4 ] || fail "4 examples"
    [ "$(grep -Ec '^ +\+-+\+$' out)" -eq 8 ] || fail "4 heatmaps (2 borders each)"
    has out "^On 500 held-out strings the model reverses [0-9.]+% exactly"
    has out "^saved: demo.safetensors$"
    has out "attend decode demo.safetensors --align$"
    ok "demo: accuracy, 4 examples with heatmaps, saved model"
    run 0 "$A" demo --steps 5 --out demo2.safetensors
    cmp -s demo.safetensors demo2.safetensors || fail "two demo runs with the same seed differ"
    ok "deterministic for a seed"
    ;;

*)
    echo "cli_test.sh: unknown case '$CASE'" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
