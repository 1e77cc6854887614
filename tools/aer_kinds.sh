#!/bin/sh
# aer_kinds.sh — attention against alignments per decoder kind and mechanism
# (issue 31 item 4; docs/RESULTS.md, "Attention on trial", "Per decoder kind
# and mechanism"). With the same data, sizes, seed and budget, trains on the
# G2P training split
#   bahdanau, luong                     softmax attention (additive score)
#   *-sparsemax                         --normalizer sparsemax
#   *-monotonic                         --monotonic
#   *-guided                            --guided-alignment 1 on the EM links
# then scores each model's forced alignment (argmax and weight >= 0.3) against
# the 64 hand-aligned words (data/g2p/hand-alignments.tsv) and the EM links of
# the first 500 dev-split words (`attend trial --trials alignment`), and
# decodes those 500 dev words (greedy token and sequence accuracy, from
# `attend train --dev`).
#
#   sh tools/aer_kinds.sh [WORK_DIR] [STEPS] [JOBS] [DICT]
#   (defaults /tmp/attend-aer, 2000, 4, data/g2p/cmudict-en-us.dict: tools/get_cmudict.sh)
#
# Each model: emb 32, encoder 64 per direction, decoder 128, additive attention
# 64, batch 64, Adam 3e-3 with the default warm-up and cosine decay, seed 1,
# one thread under nice 19; JOBS trainings at a time. Expects build/attend.
# Environment: SEED (default 1; another seed's models are NAME-sSEED) and
# MODELS (default all eight, e.g. MODELS="bahdanau luong") for the seed variance.
# A model already in WORK_DIR is not retrained. Prints the table.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
A=$here/build/attend
W=${1:-/tmp/attend-aer}
steps=${2:-2000}
jobs=${3:-4}
dict=${4:-$here/data/g2p/cmudict-en-us.dict}
hand=$here/data/g2p/hand-alignments.tsv
mkdir -p "$W"
[ -f "$dict" ] || { echo "aer_kinds.sh: $dict missing (sh tools/get_cmudict.sh)" >&2; exit 1; }

# the split (by a hash of the word), as spaced TSV: one pair per pronunciation
"$A" g2p data --dict "$dict" --out "$W" >"$W/split.log"
for s in train dev; do
    awk '{ w = $1; sub(/\([0-9]+\)$/, "", w); gsub(/./, "& ", w); sub(/ $/, "", w); $1 = ""; sub(/^ /, ""); print w "\t" $0 }' \
        "$W/$s.dict" >"$W/$s.tsv"
done
# EM links for both parts at once (unsupervised: the dev pairs' links use no labels)
if [ ! -f "$W/em.tsv" ]; then
    cat "$W/train.tsv" "$W/dev.tsv" >"$W/all.tsv"
    nice -n 19 "$A" --threads 1 m2m "$W/all.tsv" --out "$W/em.tsv" --gold "$hand" 2>"$W/m2m.log"
fi
ntrain=$(wc -l <"$W/train.tsv")
head -n "$ntrain" "$W/em.tsv" >"$W/em-train.tsv"
tail -n +"$((ntrain + 1))" "$W/em.tsv" | awk -F'\t' 'NF == 3' | head -n 500 >"$W/em-dev500.tsv"
cut -f1,2 "$W/em-dev500.tsv" >"$W/dev500.tsv"

seed=${SEED:-1}
sfx=
[ "$seed" = 1 ] || sfx=-s$seed
shape="--emb 32 --hidden 64 --dec-hidden 128 --attn 64 --score additive --batch 64 --steps $steps --seed $seed"
train() { # NAME OPTIONS...
    name=$1
    shift
    name=$name$sfx
    [ -f "$W/$name.safetensors" ] && return 0
    # shellcheck disable=SC2086
    nice -n 19 "$A" --threads 1 train --train "$W/em-train.tsv" --dev "$W/dev500.tsv" --tokenizer space $shape \
        --eval-every 0 "$@" --out "$W/$name.safetensors" >"$W/$name.log" 2>&1 || { cat "$W/$name.log"; exit 1; }
}
names=${MODELS:-bahdanau luong bahdanau-sparsemax luong-sparsemax bahdanau-monotonic luong-monotonic bahdanau-guided luong-guided}
opts() {
    case $1 in
    *-sparsemax) echo "--decoder ${1%%-*} --normalizer sparsemax" ;;
    *-monotonic) echo "--decoder ${1%%-*} --monotonic" ;;
    *-guided) echo "--decoder ${1%%-*} --guided-alignment 1" ;;
    *) echo "--decoder $1" ;;
    esac
}
# $jobs trainings at a time
set -- $names
while [ $# -gt 0 ]; do
    pids=
    i=0
    while [ $# -gt 0 ] && [ $i -lt "$jobs" ]; do
        # shellcheck disable=SC2046
        train "$1" $(opts "$1") &
        pids="$pids $!"
        shift
        i=$((i + 1))
    done
    for p in $pids; do wait "$p"; done
done

score() { # MODEL DATA LIMIT: "P R F1 AER" of argmax then of weight >= 0.3
    nice -n 19 "$A" --threads 1 trial "$1" --data "$2" --limit "$3" --spaced --trials alignment 2>/dev/null |
        awk '/^  argmax / { a = $4 " " $5 " " $6 " " $7 } /^  weight >= / { t = $6 " " $7 " " $8 " " $9 } END { print a, t }'
}
echo "m2m: $(grep 'against' "$W/m2m.log" | sed 's/^attend m2m: //')"
echo "budget: $steps steps of 64 pairs (emb 32, encoder 64x2, decoder 128, attention 64), seed $seed"
printf '%-20s %8s %7s %7s | %-27s %-27s | %-27s %-27s\n' model params dev-tok dev-seq "hand argmax P R F1 AER" \
    "hand >=0.3 P R F1 AER" "EM-dev argmax P R F1 AER" "EM-dev >=0.3 P R F1 AER"
for n in $names; do
    n=$n$sfx
    m=$W/$n.safetensors
    params=$(sed -n 's/^model: .* \([0-9][0-9]*\) parameters.*/\1/p' "$W/$n.log" | head -1)
    dev=$(grep '^dev' "$W/$n.log" | tail -1)
    tok=$(echo "$dev" | sed -n 's/.*greedy-token \([0-9.]*\).*/\1/p')
    seq=$(echo "$dev" | sed -n 's/.*greedy-seq \([0-9.]*\).*/\1/p')
    h=$(score "$m" "$hand" 64)
    e=$(score "$m" "$W/em-dev500.tsv" 500)
    # shellcheck disable=SC2086
    printf '%-20s %8s %7s %7s | %s\n' "$n" "${params:--}" "$tok" "$seq" "$(echo $h $e | awk '{ printf "%s %s %s %s | %s %s %s %s | %s %s %s %s | %s %s %s %s", $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16 }')"
done
