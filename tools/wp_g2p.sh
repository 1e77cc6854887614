#!/bin/sh
# wp_g2p.sh — Wiegreffe & Pinter's tests at the G2P scale (issue 31 item 3;
# docs/RESULTS.md, "Wiegreffe & Pinter's tests", G2P): the 0.75 M-parameter
# recipe of tools/g2p_distill.sh (its refs arm: the dictionary's own
# pronunciations, 15 epochs), three seeds, the uniform baseline, adversaries
# and the diagnostic transfer, each compared with its base on the dev words.
#
#   sh tools/wp_g2p.sh [options]      (ATTEND=path/to/attend; default build/attend)
#
#   --work DIR         where everything goes (wp-g2p; --smoke: wp-g2p-smoke)
#   --dict PATH        the dictionary (data/g2p/cmudict-en-us.dict; tools/get_cmudict.sh)
#   --base MODEL       the seed-1 base model, already trained with this recipe on this
#                      dictionary (e.g. tools/g2p_distill.sh's WORK/refs.safetensors):
#                      copied to WORK/base.safetensors instead of training it
#   --adversaries LIST the adversaries' lambdas, separated by commas: the first is
#                      trained right after the uniform model and is the reference of
#                      frozen-adv, the others last (1,0.1,10)
#   --smoke            seconds: the first 600 lines of the committed sample
#                      dictionary, tiny models (15 k parameters, 20 epochs of batches
#                      of 8), adversaries 1,10; what the ctest tools_wp_g2p runs
#   --only NAMES       only these models (names below, separated by commas), e.g. two
#                      runs at once on two cores with disjoint lists; a model whose
#                      reference is not finished is refused (exit 1) naming it
#
# The models, in this order (so that the most useful exist first when a run is
# cut short), each WORK/NAME.safetensors:
#   base         seed 1 (or --base)          seed2, seed3   seeds 2 and 3
#   uniform      --uniform-attention          adv-L1         --adversarial L1 --reference base
#   frozen-base, frozen-uniform, frozen-adv   --frozen-attention --reference base / uniform / adv-L1
#   adv-L        the other adversaries
# Every model is `attend g2p train --dict DICT` with the recipe's options and
# --patience 0 (the best epoch by dev WER is kept; a frozen-attention model,
# whose own attention is untrained, is its last epoch), a checkpoint every
# 500 steps (smoke: 20); a rerun resumes a model from WORK/NAME.ckpt when
# WORK/NAME.done is not there, and skips finished ones (the trainer resumes
# bit for bit, so an interrupted run ends with the same files). After each:
#   WORK/NAME.eval   `attend g2p eval --beam 0` (greedy dev and test PER/WER; not for
#                    frozen models: their attention is the reference's)
#   WORK/NAME.cmp    `attend compare REF NAME --dict DICT` on the dev words (REF: base,
#                    or the frozen model's reference with --frozen), and .cmp.jsonl
# and at the end of every run WORK/summary.tsv, one row per finished model.
# Everything runs on one thread. SIGTERM / SIGINT stop after the training
# step in progress with the checkpoint written (exit 143 / 130).
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
A=${ATTEND:-$here/build/attend}
W='' DICT='' BASE='' ADVS='' SMOKE=0 ONLY=''
usage() {
    sed -n '8,23p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
while [ $# -gt 0 ]; do
    case $1 in
    --work) [ $# -ge 2 ] || usage; W=$2; shift 2 ;;
    --dict) [ $# -ge 2 ] || usage; DICT=$2; shift 2 ;;
    --base) [ $# -ge 2 ] || usage; BASE=$2; shift 2 ;;
    --adversaries) [ $# -ge 2 ] || usage; ADVS=$2; shift 2 ;;
    --smoke) SMOKE=1; shift ;;
    --only) [ $# -ge 2 ] || usage; ONLY=$2; shift 2 ;;
    -h | --help) usage ;;
    *) echo "wp_g2p.sh: unknown option '$1'" >&2; usage ;;
    esac
done
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ATTEND_NUM_THREADS=1 ATTEND_G2P_LEXICON=none
if [ "$SMOKE" = 1 ]; then
    W=${W:-wp-g2p-smoke}
    ADVS=${ADVS:-1,10}
    RECIPE="--emb 8 --hidden 16 --dec-hidden 32 --attn 16 --epochs 20 --batch 8 --warmup 10"
    EVERY=20
else
    W=${W:-wp-g2p}
    DICT=${DICT:-$here/data/g2p/cmudict-en-us.dict}
    ADVS=${ADVS:-1,0.1,10}
    # tools/g2p_distill.sh's student: bi-GRU 128, decoder 256, attention 128, embeddings 64
    # (about 0.75 M parameters), its learning rate, 15 epochs
    RECIPE="--emb 64 --hidden 128 --layers 1 --dec-hidden 256 --attn 128 --lr 0.003 --epochs 15"
    EVERY=500
fi
for l in $(echo "$ADVS" | tr ',' ' '); do
    case $l in
    '' | *[!0-9.]* | *.*.* | .) echo "wp_g2p.sh: --adversaries: expected numbers separated by commas, got '$ADVS'" >&2
        exit 2 ;;
    esac
done
L1=$(echo "$ADVS" | cut -d, -f1)
NAMES="base seed2 seed3 uniform frozen-base frozen-uniform frozen-adv $(echo "$ADVS" | tr ',' '\n' | sed 's/^/adv-/' | tr '\n' ' ')"
for n in $(echo "$ONLY" | tr ',' ' '); do
    case " $NAMES " in
    *" $n "*) ;;
    *) echo "wp_g2p.sh: --only: unknown model '$n' (the models: $NAMES)" >&2
        exit 2 ;;
    esac
done
# selected NAME: in --only's list, or every model without it
selected() { [ -z "$ONLY" ] || case ",$ONLY," in *",$1,"*) true ;; *) false ;; esac; }
mkdir -p "$W"
if [ "$SMOKE" = 1 ] && [ -z "$DICT" ]; then
    DICT=$W/smoke.dict
    [ -f "$DICT" ] || head -n 600 "$here/data/g2p/cmudict-sample.dict" >"$DICT"
fi
if [ ! -f "$DICT" ]; then
    echo "wp_g2p.sh: no dictionary '$DICT' (sh tools/get_cmudict.sh fetches CMUdict)" >&2
    exit 1
fi
if [ -n "$BASE" ] && [ ! -f "$BASE" ]; then
    echo "wp_g2p.sh: --base: no model '$BASE'" >&2
    exit 1
fi
trap 'exit 143' TERM
trap 'exit 130' INT
say() { echo "wp_g2p.sh: $*"; }

# the base: given, or trained like the others
if [ -n "$BASE" ]; then
    if [ -f "$W/base.safetensors" ]; then
        cmp -s "$BASE" "$W/base.safetensors" ||
            { echo "wp_g2p.sh: --base $BASE differs from $W/base.safetensors (another base: use another --work)" >&2; exit 1; }
    else
        cp "$BASE" "$W/base.safetensors.tmp"
        mv "$W/base.safetensors.tmp" "$W/base.safetensors"
        say "base: $BASE (copied, not trained)"
    fi
    [ -f "$W/base.done" ] || : >"$W/base.done"
fi

# train NAME SEED [OPTIONS...]: one model, resumed or skipped as above
train() {
    name=$1 seed=$2
    shift 2
    if [ -f "$W/$name.done" ]; then
        say "$name: done (skipped)"
        return 0
    fi
    if ! selected "$name"; then
        say "$name: not in --only (skipped)"
        return 0
    fi
    # the references it is trained against or compared with
    case $name in
    base) refs='' ;;
    frozen-uniform) refs='base uniform' ;;
    frozen-adv) refs="base adv-$L1" ;;
    *) refs=base ;;
    esac
    for r in $refs; do
        [ -f "$W/$r.done" ] || {
            echo "wp_g2p.sh: $name needs $r, which is not finished in $W (train it first, e.g. --only $r)" >&2
            exit 1
        }
    done
    if [ -f "$W/$name.ckpt" ]; then
        resume="--resume $W/$name.ckpt"
        say "$name: resuming from $W/$name.ckpt"
    else
        resume=
        say "$name: training"
    fi
    # shellcheck disable=SC2086
    "$A" g2p train --dict "$DICT" $RECIPE --seed "$seed" --patience 0 --max-minutes 0 "$@" \
        --out "$W/$name.safetensors" --checkpoint "$W/$name.ckpt" --checkpoint-every $EVERY --log-every $EVERY \
        --overwrite $resume >>"$W/$name.log" 2>>"$W/$name.err" || {
        rc=$?
        tail -n 3 "$W/$name.err" >&2
        exit $rc
    }
    : >"$W/$name.done"
    say "$name: $(grep '^trained:' "$W/$name.log" | tail -n 1)"
}

# measure NAME REF [--frozen]: the greedy evaluation (not frozen) and the comparison with REF
measure() {
    name=$1 ref=$2
    shift 2
    [ -f "$W/$name.done" ] || return 0 # not trained in this run (--only)
    if [ $# -eq 0 ] && [ ! -f "$W/$name.eval" ]; then
        "$A" g2p eval --model "$W/$name.safetensors" --dict "$DICT" --beam 0 >"$W/$name.eval.tmp"
        mv "$W/$name.eval.tmp" "$W/$name.eval"
    fi
    if [ "$name" != base ] && [ ! -f "$W/$name.cmp" ]; then
        "$A" compare "$W/$ref.safetensors" "$W/$name.safetensors" --dict "$DICT" "$@" \
            --jsonl "$W/$name.cmp.jsonl.tmp" >"$W/$name.cmp.tmp"
        mv "$W/$name.cmp.jsonl.tmp" "$W/$name.cmp.jsonl"
        mv "$W/$name.cmp.tmp" "$W/$name.cmp"
    fi
}

train base 1
measure base base
train seed2 2
measure seed2 base
train seed3 3
measure seed3 base
train uniform 1 --uniform-attention
measure uniform base
train "adv-$L1" 1 --adversarial "$L1" --reference "$W/base.safetensors"
measure "adv-$L1" base
train frozen-base 1 --frozen-attention --reference "$W/base.safetensors"
measure frozen-base base --frozen
train frozen-uniform 1 --frozen-attention --reference "$W/uniform.safetensors"
measure frozen-uniform uniform --frozen
train frozen-adv 1 --frozen-attention --reference "$W/adv-$L1.safetensors"
measure frozen-adv "adv-$L1" --frozen
for l in $(echo "$ADVS" | tr ',' ' ' | cut -d' ' -f2-); do
    [ "$l" = "$L1" ] && continue
    train "adv-$l" 1 --adversarial "$l" --reference "$W/base.safetensors"
    measure "adv-$l" base
done

# the summary: one row per model compared (dev words, teacher-forced; WER greedy)
{
    printf 'model\treference\tfrozen\tpairs\tJSD\tTVD\ttf_token\tref_tf_token\tdev_WER\ttest_WER\n'
    for f in "$W"/*.cmp.jsonl; do
        [ -f "$f" ] || continue
        name=$(basename "$f" .cmp.jsonl)
        wer=$(awk '$1 == "dev" && $2 == "greedy" { d = $5 } $1 == "test" && $2 == "greedy" { t = $5 }
                   END { printf "%s\t%s", (d == "" ? "-" : d), (t == "" ? "-" : t) }' "$W/$name.eval" 2>/dev/null ||
            printf -- '-\t-')
        sed 's/[{}"]//g' "$f" | tr ',' '\n' | awk -F: -v n="$name" -v w="$wer" '
            { v[$1] = $2 }
            END { r = v["base"]; sub(/.*\//, "", r); sub(/\.safetensors$/, "", r)
                  printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", n, r, v["frozen"], v["pairs"], v["jsd"], v["tvd"],
                         v["acc"], v["acc_base"], w }'
    done
} >"$W/summary.tsv.tmp"
mv "$W/summary.tsv.tmp" "$W/summary.tsv"
cat "$W/summary.tsv"
