#!/bin/sh
# ensemble_test.sh — ensembles and n-best rescoring in `attend decode` (issue
# 14 part 6), end to end:
#
#   sh tests/cli/ensemble_test.sh CASE ATTEND WORK_DIR SOURCE_DIR
#
#   models   trains what the other cases read: two reversal models (seeds 1
#            and 2) and a copy model (the right-to-left model of the reversal
#            task: it scores a reversal's reverse), ~1.5 s each
#   ensemble `decode A A'` (a byte copy) prints exactly what `decode A` prints
#            (greedy; beam n-best with scores); `decode A B` decodes the
#            reversals; jsonl --align gives each member's alignment; a file
#            after the models is the input
#   refuse   members that differ are refused naming the first difference:
#            target vocabulary size, a token, the tokenizer, a pointer model;
#            usage errors of --rescore
#   rescore  --rescore-weight 0 keeps the beam's order and scores; a model
#            rescoring its own n-best with weight 1 gives the same hypotheses
#            scored log p / (len + 1), re-ranked; a copy model with
#            --rescore-reverse ranks the true reversal first
#   g2p      `attend g2p --model M,M'` (a byte copy of the shipped model)
#            prints what --model M prints (greedy, n-best, jsonl --align with
#            each member's alignment); a model with other phoneme ids is
#            refused naming the first; an empty path in the list is a usage error
set -u
CASE=$1
A=$2
WORK=$3
SRC=${4:-}
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
TINY="--symbols 8 --min-len 2 --max-len 8 --count 2000 --dev-count 200 --emb 16 --hidden 32 --dec-hidden 64
      --decoder luong --score general --batch 32 --steps 300 --warmup 30 --decay 270"
R1=$WORK/r1.safetensors
R2=$WORK/r2.safetensors
C1=$WORK/c1.safetensors
printf 'abcdef\nhgf\nabab\n\ncab\nab\n' >in
printf 'fedcba\nfgh\nbaba\n\nbac\nba\n' >want

case $CASE in
models)
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $TINY --seed 1 --out "$R1"
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse $TINY --seed 2 --out "$R2"
    # shellcheck disable=SC2086
    run 0 "$A" train --task copy $TINY --seed 3 --out "$C1"
    ok "trained two reversal models and a copy model"
    ;;

ensemble)
    cp "$R1" same.safetensors
    run 0 "$A" decode "$R1" in
    cp out one
    run 0 "$A" decode "$R1" same.safetensors in
    cmp -s out one || fail "greedy: an ensemble of a model and its copy differs from the model"
    run 0 "$A" decode "$R1" --nbest 3 --format tsv in
    cp out one
    run 0 "$A" decode "$R1" same.safetensors --nbest 3 --format tsv in
    cmp -s out one || fail "beam: an ensemble of a model and its copy differs from the model"
    ok "an ensemble of two copies prints what the model prints (greedy, beam n-best with scores)"
    run 0 "$A" decode "$R1" "$R2" in
    cmp -s out want || { diff out want >&2; fail "the ensemble's outputs are not the reversals"; }
    run 0 "$A" decode "$R1" "$R2" --beam 3 - <in
    cmp -s out want || fail "the ensemble's beam outputs are not the reversals"
    ok "an ensemble of two reversal models decodes the reversals (greedy and beam, file and stdin)"
    run 0 "$A" decode "$R1" "$R2" --format jsonl --align in
    python3 - <<'PY' || fail "jsonl alignments of the members"
import json
for line in open("out"):
    o = json.loads(line)
    for h in o["hypotheses"]:
        al = h["alignments"]
        assert len(al) == 2 and al[0] == h["alignment"] and al[1] != al[0], line
        assert all(len(a) == len(h["output"]) for a in al), line
PY
    run 0 "$A" decode "$R1" "$R2" --align in
    [ "$(grep -c '^model 1 (' out)" -eq 5 ] && [ "$(grep -c '^model 2 (' out)" -eq 5 ] ||
        fail "text --align: one heatmap per member and output"
    ok "--align shows each member's alignment (jsonl \"alignments\", text one heatmap each)"
    ;;

refuse)
    # shellcheck disable=SC2086
    run 0 "$A" train --task reverse --symbols 6 --steps 1 --out six.safetensors
    run 1 "$A" decode "$R1" six.safetensors in
    has err "^attend decode: model 2 \(six.safetensors\): target vocabulary has 10 ids, model 1 \($R1\) has 12 \(id 10 is 'g'\)$"
    printf 'hg\tgh\nab\tba\n' >order.tsv
    run 0 "$A" train --train order.tsv --steps 1 --out order.safetensors
    run 1 "$A" decode "$R1" order.safetensors in
    has err "^attend decode: model 2 \(order.safetensors\): target vocabulary id 4 is 'g', model 1 \($R1\) has 'a'$"
    run 0 "$A" train --train order.tsv --tokenizer space --steps 1 --out space.safetensors
    run 1 "$A" decode "$R1" "$R2" space.safetensors in
    has err "^attend decode: model 3 \(space.safetensors\): tokenizer space, model 1 \($R1\) has char$"
    run 0 "$A" train --task sort --symbols 8 --steps 1 --out sort.safetensors
    run 1 "$A" decode "$R1" sort.safetensors in
    has err "^attend decode: model 2 \(sort.safetensors\) is a pointer model \(pointer decoder\) and model 1 \($R1\) is not"
    ok "members with another vocabulary size, token, tokenizer or kind are refused naming the first difference"
    # pointer models make an ensemble of their own: two copies decode as the model alone (greedy, beam n-best)
    run 0 "$A" train --task sort --symbols 8 --steps 60 --out sortA.safetensors
    cp sortA.safetensors sortB.safetensors
    printf 'hgfe\ncadb\n' >ptr.txt
    run 0 "$A" decode sortA.safetensors ptr.txt --beam 3 --nbest 2 --format tsv
    cp out ptr1.tsv
    run 0 "$A" decode sortA.safetensors sortB.safetensors ptr.txt --beam 3 --nbest 2 --format tsv
    cmp -s out ptr1.tsv || fail "an ensemble of two copies of a pointer model (beam) differs from the model alone"
    run 0 "$A" decode sortA.safetensors ptr.txt
    cp out ptrg1.txt
    run 0 "$A" decode sortA.safetensors sortB.safetensors ptr.txt
    cmp -s out ptrg1.txt || fail "an ensemble of two copies of a pointer model (greedy) differs from the model alone"
    ok "an ensemble of pointer models decodes (two copies: the model's own outputs, greedy and beam)"
    run 2 "$A" decode "$R1" --rescore "$R2" in
    has err "--rescore re-ranks an n-best list: give --nbest N"
    run 2 "$A" decode "$R1" --nbest 2 --rescore-weight 0.3 in
    has err "--rescore-weight and --rescore-reverse need --rescore MODEL"
    run 2 "$A" decode "$R1" --nbest 2 --rescore "$R2" --rescore-weight 1.5 in
    ok "usage errors of --rescore"
    ;;

rescore)
    run 0 "$A" decode "$R1" --nbest 4 --format tsv in
    cp out plain
    run 0 "$A" decode "$R1" --nbest 4 --format tsv --rescore "$R2" --rescore-weight 0 in
    cmp -s out plain || fail "--rescore-weight 0 changed the n-best"
    ok "--rescore-weight 0 keeps the beam's n-best and scores"
    run 0 "$A" decode "$R1" --nbest 4 --format tsv --rescore "$R1" --rescore-weight 1 in
    # the same hypotheses, each scored log p / (tokens + 1) (to the printed digits, 2e-6)
    awk -F '\t' 'NR == FNR { s[$1 " " $5] = $3 / (length($5) + 1); next }
                 $2 == 0 { next }
                 !(($1 " " $5) in s) || ($3 - s[$1 " " $5]) > 2e-6 || (s[$1 " " $5] - $3) > 2e-6 { print; bad = 1 }
                 END { exit bad }' plain out || fail "self-rescoring with weight 1 is not log p / (length + 1)"
    [ "$(awk -F '\t' '$2 == 1 { printf "%s ", $5 }' out)" = "fedcba fgh baba bac ba " ] || fail "the best are not the reversals"
    ok "a model rescoring its own n-best with weight 1: the same hypotheses scored log p / (length + 1)"
    printf 'abcdefgh\nhgfedcba\nabcabc\n' >in3
    run 0 "$A" decode "$R1" --nbest 4 --format tsv --rescore "$C1" --rescore-reverse --rescore-weight 1 in3
    [ "$(awk -F '\t' '$2 == 1 { printf "%s ", $5 }' out)" = "hgfedcba abcdefgh cbacba " ] ||
        fail "the copy model did not rank the reversals first"
    awk -F '\t' '$3 + 0 < -0.5 && $2 == 1 { exit 1 }' out || fail "a reversal scored below -0.5 per token"
    run 0 "$A" decode "$R1" --nbest 4 --format tsv --rescore "$C1" --rescore-weight 1 in3
    awk -F '\t' '$2 == 1 && $3 + 0 > -1 { exit 1 }' out ||
        fail "without --rescore-reverse the copy model should score reversals poorly"
    ok "a copy model rescoring reversals with --rescore-reverse ranks the true reversal first (scores near 0; poor without it)"
    ;;
g2p)
    G=$SRC/models/g2p-cmudict.safetensors
    cp "$G" copy.safetensors
    for opts in "" "--nbest 3" "--format jsonl --align --beam 2"; do
        # shellcheck disable=SC2086
        run 0 "$A" g2p --model "$G" $opts hello world attention
        sed 's/"alignment":\(\[\[[0-9.,]*\]\(,\[[0-9.,]*\]\)*\]\)/"alignment":\1,"alignments":[\1,\1]/g' out >one
        # shellcheck disable=SC2086
        run 0 "$A" g2p --model "$G,copy.safetensors" $opts hello world attention
        cmp -s out one || fail "g2p $opts: the ensemble of copies differs"
    done
    ok "g2p --model M,M' prints what --model M prints (greedy, n-best, jsonl alignments of each member)"
    printf 'cat K AE T\ndog D AO G\nbat B AE T\ntoad T OW D\nzebra Z IY B R AH\nquick K W IH K\n' >mini.dict
    run 0 "$A" g2p train --dict mini.dict --epochs 1 --warmup 1 --emb 8 --hidden 8 --dec-hidden 16 --attn 8 \
        --out mini.safetensors
    run 1 "$A" g2p --model "$G,mini.safetensors" cat
    has err "^attend g2p: model 2 \(mini.safetensors\): target vocabulary id 4 is 'K', model 1 \($G\) has 'B'$"
    run 2 "$A" g2p --model "$G," cat
    has err "an empty path in the list"
    ok "g2p: a member with other phoneme ids is refused naming the first; an empty path is a usage error"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
