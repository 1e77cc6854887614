#!/bin/sh
# g2p_distill.sh — the distilled G2P model (issue 29 item 4; docs/G2P.md,
# "The distilled model"): sequence-level knowledge distillation (Kim and Rush
# 2016) from the shipped A+B ensemble into a student of at most 0.8 M
# parameters, and the ablation of its training targets.
#
#   sh tools/g2p_distill.sh [options]      (ATTEND=path/to/attend; default build/attend)
#
#   --work DIR      where everything goes (g2p-distill; --smoke: g2p-distill-smoke)
#   --dict PATH     the dictionary (data/g2p/cmudict-en-us.dict; tools/get_cmudict.sh)
#   --teacher LIST  the teacher, models separated by commas (the shipped ensemble,
#                   models/g2p-cmudict.safetensors,models/g2p-cmudict-b-int8.safetensors)
#   --arms LIST     the students to train, in order, separated by commas (both,refs,teacher;
#                   with --extra, both,refs,teacher,extra):
#                     both     the references, then the teacher's pronunciation when it
#                              differs from all of them (the candidate for shipping)
#                     refs     the references only (no distillation: the baseline)
#                     teacher  the teacher's pronunciation only
#                     extra    both's data plus the teacher's pronunciations of the
#                              --extra words (needs --extra)
#   --extra FILE    a word list, one word per line (e.g. Debian's wamerican-huge:
#                   /usr/share/dict/american-english-huge); its words of 1-20 letters
#                   a-z (lower-cased; words with other characters dropped) that the
#                   dictionary lacks and that fall in the train part (by the
#                   split's hash) are pronounced by the teacher for the extra arm
#   --seed N        the students' seed (1)
#   --smoke         seconds: the first 600 lines of the committed sample
#                   dictionary, the int8 ensemble as teacher, a tiny student (15 k
#                   parameters, 30 epochs of batches of 8), and, without --extra,
#                   an extra list made from the sample's next 400 words; what the
#                   ctest cli_g2p_recipe runs, tests/data/g2p/cli_test.sh
#
# Stages, each skipped when its result is there (so a rerun of the same command
# continues where a killed or stopped one ended):
# 1. WORK/teacher.dict and WORK/both.dict: `attend g2p distill` (the teacher
#    pronounces the train words, greedy; dev and test words keep their
#    references), written to a temporary and renamed when complete;
#    for the extra arm, WORK/extra.words (the filtered list), WORK/extra-parts/
#    (its split, `attend g2p data --out`), WORK/extra-teacher.dict (`attend g2p
#    distill --targets teacher` on the train part's words, each given a
#    placeholder pronunciation the teacher replaces; a word the teacher cannot
#    pronounce keeps it and is dropped) and WORK/extra.dict (both.dict, then
#    extra-teacher.dict: dev and test are still the dictionary's own);
# 2. per arm: `attend g2p train` on its dictionary (student shape and schedule
#    below), --checkpoint WORK/ARM.ckpt every 500 steps (smoke: 20); when the
#    checkpoint is there and WORK/ARM.done is not, --resume from it (the
#    trainer continues bit for bit); WORK/ARM.done marks a finished run.
#    WORK/ARM.safetensors is the best epoch by dev WER (the real dev words: no
#    arm changes them);
# 3. per arm: int8 (through fp16, as the shipped models are made), then
#    `attend g2p eval` (greedy) on the *original* dictionary into WORK/ARM.eval;
# 4. WORK/summary.tsv: arm, parameters, int8 bytes, dev and test PER / WER.
# Everything is deterministic for a seed (the teacher decodes greedily; the
# trainer is deterministic for a seed and resumes bit for bit): the same binary
# gives the same files. SIGTERM / SIGINT stop after the training step in
# progress with the checkpoint written (exit 143 / 130).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
A=${ATTEND:-$here/build/attend}
W='' DICT='' TEACHER='' ARMS='' EXTRA='' SEED=1 SMOKE=0
usage() {
    sed -n '6,31p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --work) [ $# -ge 2 ] || usage; W=$2; shift 2 ;;
    --dict) [ $# -ge 2 ] || usage; DICT=$2; shift 2 ;;
    --teacher) [ $# -ge 2 ] || usage; TEACHER=$2; shift 2 ;;
    --arms) [ $# -ge 2 ] || usage; ARMS=$2; shift 2 ;;
    --extra) [ $# -ge 2 ] || usage; EXTRA=$2; shift 2 ;;
    --seed) [ $# -ge 2 ] || usage; SEED=$2; shift 2 ;;
    --smoke) SMOKE=1; shift ;;
    -h | --help) usage ;;
    *) echo "g2p_distill.sh: unknown option '$1'" >&2; usage ;;
    esac
done
if [ -z "$ARMS" ]; then
    ARMS=both,refs,teacher
    { [ -n "$EXTRA" ] || [ "$SMOKE" = 1 ]; } && ARMS=$ARMS,extra
fi
for arm in $(echo "$ARMS" | tr ',' ' '); do
    case $arm in
    both | refs | teacher) ;;
    extra)
        if [ -z "$EXTRA" ] && [ "$SMOKE" = 0 ]; then
            echo "g2p_distill.sh: --arms: the extra arm needs --extra FILE (a word list)" >&2
            exit 2
        fi
        ;;
    *) echo "g2p_distill.sh: --arms: unknown arm '$arm' (both, refs, teacher, extra)" >&2; exit 2 ;;
    esac
done
case $SEED in '' | *[!0-9]*) echo "g2p_distill.sh: --seed: expected a number, got '$SEED'" >&2; exit 2 ;; esac
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ATTEND_NUM_THREADS=1
if [ "$SMOKE" = 1 ]; then
    W=${W:-g2p-distill-smoke}
    TEACHER=${TEACHER:-$here/models/g2p-cmudict-int8.safetensors,$here/models/g2p-cmudict-b-int8.safetensors}
    # the student: tiny, 30 epochs of batches of 8 (about 2 000 steps: time
    # for the test to interrupt one and resume it)
    STUDENT="--emb 8 --hidden 16 --dec-hidden 32 --attn 16 --epochs 30 --batch 8 --warmup 10"
    EVERY=20
else
    W=${W:-g2p-distill}
    DICT=${DICT:-$here/data/g2p/cmudict-en-us.dict}
    TEACHER=${TEACHER:-$here/models/g2p-cmudict.safetensors,$here/models/g2p-cmudict-b-int8.safetensors}
    # the student: the default recipe's shape (bi-GRU 128, decoder 256, attention
    # 128, embeddings 64: about 0.75 M parameters) and learning rate, 15 epochs
    STUDENT="--emb 64 --hidden 128 --layers 1 --dec-hidden 256 --attn 128 --lr 0.003 --epochs 15"
    EVERY=500
fi
mkdir -p "$W"
if [ "$SMOKE" = 1 ] && [ -z "$DICT" ]; then
    DICT=$W/smoke.dict
    [ -f "$DICT" ] || head -n 600 "$here/data/g2p/cmudict-sample.dict" >"$DICT"
fi
if [ "$SMOKE" = 1 ] && [ -z "$EXTRA" ]; then
    # words the smoke dictionary lacks (the sample's next 400), plus lines the
    # filter must drop or fold: the dictionary's first word of letters a-z in capitals, an
    # apostrophe, a digit, a non-ASCII letter, 21 letters, a duplicate
    EXTRA=$W/smoke.words
    if [ ! -f "$EXTRA" ]; then
        {
        tail -n +601 "$here/data/g2p/cmudict-sample.dict" | awk '{ sub(/\(.*/, "", $1); print $1 }' | uniq |
            head -n 400
        awk '$1 ~ /^[a-z]+$/ { print toupper($1); exit }' "$DICT"
        printf 'can'"'"'t\nmp3\nna\303\257ve\nabcdefghijklmnopqrstu\nZygote\nzygote\n'
        } >"$EXTRA.tmp"
        mv "$EXTRA.tmp" "$EXTRA"
    fi
fi
if [ ! -f "$DICT" ]; then
    echo "g2p_distill.sh: no dictionary '$DICT' (sh tools/get_cmudict.sh fetches CMUdict)" >&2
    exit 1
fi
case ",$ARMS," in *,extra,*)
    if [ ! -f "$EXTRA" ]; then
        echo "g2p_distill.sh: no word list '$EXTRA' (--extra)" >&2
        exit 1
    fi
    ;;
esac
trap 'exit 143' TERM
trap 'exit 130' INT
say() { echo "g2p_distill.sh: $*"; }

# 1. the teacher's targets
for t in teacher both; do
    if [ -f "$W/$t.dict" ]; then
        say "$W/$t.dict: there (skipped)"
        continue
    fi
    "$A" g2p distill --model "$TEACHER" --dict "$DICT" --targets $t >"$W/$t.dict.tmp" 2>"$W/$t.dict.log" ||
        { cat "$W/$t.dict.log" >&2; exit 1; }
    mv "$W/$t.dict.tmp" "$W/$t.dict"
    say "$(cat "$W/$t.dict.log")"
done

# 1b. the extra arm's data: the teacher's pronunciations of words the dictionary lacks
case ",$ARMS," in *,extra,*)
    if [ -f "$W/extra.dict" ]; then
        say "$W/extra.dict: there (skipped)"
    else
        # the dictionary's words (alternates' (N) removed), then the list's new words, sorted bytewise
        LC_ALL=C awk '!/^;;;/ && NF { w = tolower($1); sub(/\(.*/, "", w); print w }' "$DICT" | LC_ALL=C sort -u \
            >"$W/extra.known"
        LC_ALL=C tr 'A-Z' 'a-z' <"$EXTRA" | LC_ALL=C grep -E '^[a-z]{1,20}$' | LC_ALL=C sort -u |
            LC_ALL=C comm -23 - "$W/extra.known" >"$W/extra.words.tmp"
        mv "$W/extra.words.tmp" "$W/extra.words"
        # a placeholder pronunciation no English word has; the teacher replaces it
        placeholder='ZH ZH ZH ZH ZH ZH ZH ZH'
        awk -v p="$placeholder" '{ print $1 " " p }' "$W/extra.words" >"$W/extra-placeholder.dict"
        rm -rf "$W/extra-parts"
        "$A" g2p data --dict "$W/extra-placeholder.dict" --out "$W/extra-parts" >"$W/extra-parts.log" 2>&1 ||
            { cat "$W/extra-parts.log" >&2; exit 1; }
        "$A" g2p distill --model "$TEACHER" --dict "$W/extra-parts/train.dict" --targets teacher \
            >"$W/extra-teacher.dict.tmp" 2>"$W/extra-teacher.dict.log" || { cat "$W/extra-teacher.dict.log" >&2; exit 1; }
        grep -v " $placeholder\$" "$W/extra-teacher.dict.tmp" >"$W/extra-teacher.dict.tmp2" || true
        dropped=$(($(wc -l <"$W/extra-teacher.dict.tmp") - $(wc -l <"$W/extra-teacher.dict.tmp2")))
        mv "$W/extra-teacher.dict.tmp2" "$W/extra-teacher.dict"
        rm -f "$W/extra-teacher.dict.tmp"
        cat "$W/both.dict" "$W/extra-teacher.dict" >"$W/extra.dict.tmp"
        mv "$W/extra.dict.tmp" "$W/extra.dict"
        say "extra: $(wc -l <"$W/extra.words" | tr -d ' ') new words in $EXTRA, $(grep -c . "$W/extra-teacher.dict" ||
            true) train-part words pronounced by the teacher ($dropped it could not pronounce dropped)"
    fi
    ;;
esac

# 2.-3. the students
for arm in $(echo "$ARMS" | tr ',' ' '); do
    case $arm in
    refs) data=$DICT ;;
    *) data=$W/$arm.dict ;;
    esac
    if [ ! -f "$W/$arm.done" ]; then
        if [ -f "$W/$arm.ckpt" ]; then
            resume="--resume $W/$arm.ckpt"
            say "$arm: resuming from $W/$arm.ckpt"
        else
            resume=
            say "$arm: training on $data"
        fi
        # shellcheck disable=SC2086
        "$A" g2p train --dict "$data" $STUDENT --seed "$SEED" --patience 0 --max-minutes 0 \
            --out "$W/$arm.safetensors" --checkpoint "$W/$arm.ckpt" --checkpoint-every $EVERY --log-every $EVERY \
            --overwrite $resume >>"$W/$arm.log" 2>>"$W/$arm.err" || {
            rc=$?
            tail -n 3 "$W/$arm.err" >&2
            exit $rc
        }
        : >"$W/$arm.done"
    fi
    say "$arm: $(grep '^trained:' "$W/$arm.log" | tail -n 1)"
    if [ ! -f "$W/$arm.eval" ]; then
        "$A" quantize "$W/$arm.safetensors" --to f16 --out "$W/$arm-f16.safetensors" >/dev/null
        "$A" quantize "$W/$arm-f16.safetensors" --to int8 --out "$W/$arm-int8.safetensors" >/dev/null
        ATTEND_G2P_LEXICON=none "$A" g2p eval --model "$W/$arm.safetensors" --dict "$DICT" --beam 0 \
            >"$W/$arm.eval.tmp"
        mv "$W/$arm.eval.tmp" "$W/$arm.eval"
    fi
done

# 4. the summary
{
    printf 'arm\tparameters\tint8_bytes\tdev_PER\tdev_WER\ttest_PER\ttest_WER\n'
    for arm in $(echo "$ARMS" | tr ',' ' '); do
        params=$(sed -n 's/^model: .*(\([0-9]*\) parameters)$/\1/p' "$W/$arm.eval")
        bytes=$(wc -c <"$W/$arm-int8.safetensors" | tr -d ' ')
        dev=$(awk '$1 == "dev" && $2 == "greedy" { print $4 "\t" $5 }' "$W/$arm.eval")
        test=$(awk '$1 == "test" && $2 == "greedy" { print $4 "\t" $5 }' "$W/$arm.eval")
        printf '%s\t%s\t%s\t%s\t%s\n' "$arm" "$params" "$bytes" "$dev" "$test"
    done
} >"$W/summary.tsv"
cat "$W/summary.tsv"
