#!/bin/sh
# analysis_test.sh — end-to-end tests of `attend align`, `attend intervene`,
# `attend trial`, `attend m2m` and `attend sweep`.
#
#   sh tests/cli/analysis_test.sh CASE ATTEND SOURCE_DIR WORK_DIR
#
# The align, intervene and trial cases read the tiny reverse model that cli_test.sh's
# "train" case leaves in WORK_DIR/model.safetensors (ctest fixture cli_model).
# Each case works in WORK_DIR/analysis-CASE, prints one line per check and fails
# (exit 1) at the first check that does not hold, showing the command's output.
set -u
CASE=$1
A=$2
SRC=$3
WORK=$4
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
SRC=$(abs "$SRC")
WORK=$(abs "$WORK")
MODEL=$WORK/model.safetensors
D=$WORK/analysis-$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0

case $CASE in
align)
    run 0 "$A" align "$MODEL" abcdefg --svg a.svg --html a.html
    has out "^output: gfedcba$"
    # rows "X | ... | argmax=J (tok) w=W": row t attends to 6 - t
    awk '/argmax=/ { n++; split($0, p, "argmax="); split(p[2], q, " "); if (q[1] != 7 - n) bad = 1 }
         END { exit !(n == 7 && !bad) }' out || fail "argmax per step is not the anti-diagonal"
    ok "greedy: 7 rows, argmax on the anti-diagonal"
    [ "$(grep -c '<rect[^>]*data-w=' a.svg)" -eq 49 ] || fail "SVG: expected 49 cells with data-w"
    head -c 200 a.svg | grep -q '<svg' || fail "SVG does not start with <svg"
    tail -c 20 a.svg | grep -q '</svg>' || fail "SVG is not closed"
    grep -q '<!DOCTYPE html>' a.html || fail "HTML has no doctype"
    if grep -Eq '(src|href)="https?:' a.html; then fail "HTML loads from the network"; fi
    has out "^wrote a.svg$"
    ok "SVG with 7x7 cells and a self-contained HTML page"
    run 0 "$A" align "$MODEL" abcdef --beam 4 --nbest 2
    has out "^beam 4, 2 of 2 hypotheses$"
    [ "$(grep -c '^score ' out)" -eq 2 ] || fail "expected two scored hypotheses"
    has out "^score -?[0-9.]+  output: fedcba$"
    awk '/^score / { h++ } /argmax=/ && h == 1 { n++; split($0, p, "argmax="); split(p[2], q, " "); if (q[1] != 6 - n) bad = 1 }
         END { exit !(n == 6 && !bad) }' out || fail "best beam hypothesis: argmax is not the anti-diagonal"
    ok "beam: 2 hypotheses, the best aligned on the anti-diagonal"
    run 2 "$A" align "$MODEL"
    has err "needs MODEL and TEXT"
    run 2 "$A" align "$MODEL" abc --beam 2 --nbest 3
    has err "--nbest 3 exceeds --beam 2"
    run 1 "$A" align missing.safetensors abc
    has err "missing.safetensors"
    ok "usage and missing-file errors"
    ;;

intervene)
    run 0 "$A" intervene "$MODEL" abcde --replace h --per-step
    has out "^baseline greedy output: edcba  \(5 tokens \+ EOS = 6 compared steps\)$"
    [ "$(grep -c ' remove-state ' out)" -eq 5 ] || fail "expected 5 remove-state rows"
    [ "$(grep -c ' delete-token ' out)" -eq 5 ] || fail "expected 5 delete-token rows"
    [ "$(grep -c ' replace-token ' out)" -eq 5 ] || fail "expected 5 replace-token rows"
    for k in uniform permute drop-top; do has out "^all +$k "; done
    # delete-token j: the reversal of the shorter source
    has out "^0 +a +delete-token .* edcb +yes$"
    has out "^4 +e +delete-token .* dcba +yes$"
    # remove-state j: the largest change is at the mirrored step 4 - j
    awk '$3 == "remove-state" { if ($6 != 4 - $1) bad = 1; n++ } END { exit !(n == 5 && !bad) }' out ||
        fail "remove-state: the largest change is not at the mirrored step"
    [ "$(grep -c '^     tv per step:' out)" -eq 18 ] || fail "--per-step: expected 18 lines"
    ok "per-position table: deletions reverse the shorter source, removals hit the mirrored step"
    run 0 "$A" intervene --textbook
    has out "^1   红色   remove-state   \[0.000000, 0.500000, 0.500000\]"
    has out "^2   钥匙   remove-state   \[0.666667, 0.000000, 0.333333\]   \[0.462098, 0.000000\]     0.462098   0.6667"
    has out "^ +delete-token   \[0.500000, 0.000000, 0.500000\]   \[0.693147, 0.000000\]     0.693147   1.0000"
    has out "^3   。     remove-state .* 0.924196   1.3333"
    ok "textbook: Tables 14.2 and 14.3"
    cmp -s out "$SRC/tests/golden/intervene_textbook.txt" || { diff out "$SRC/tests/golden/intervene_textbook.txt" >&2; fail "textbook output differs from tests/golden/intervene_textbook.txt"; }
    ok "textbook output matches the golden file"
    run 2 "$A" intervene "$MODEL" abc --replace zz
    has err "is not one source token"
    run 2 "$A" intervene --textbook "$MODEL"
    run 2 "$A" intervene "$MODEL"
    ok "usage errors"
    ;;

trial)
    run 0 "$A" trial "$MODEL" abcde --trials importance --report one
    has out "^model: .*model.safetensors \((bahdanau|luong) decoder"
    has out "^0 +abcde +edcba +6 +-?[0-9.]+ +-?[0-9.]+$"
    has out "^  gradient x input +6 "
    has out "^  leave-one-out +6 "
    has out "^wrote one.txt, one.jsonl and one.html$"
    grep -q '<!DOCTYPE html>' one.html || fail "one.html has no doctype"
    [ "$(grep -o '<svg' one.html | wc -l)" -eq 1 ] || fail "one.html: expected the tau plot only"
    if grep -Eq '(src|href)="https?:' one.html; then fail "one.html loads from the network"; fi
    [ "$(grep -c '^  \[' out)" -eq 10 ] || fail "expected 10 histogram bins"
    cmp -s out one.txt || fail "one.txt differs from the printed report"
    # one object per step, then a summary per measure; every tau in [-1, 1] and the
    # summary's mean the mean of the steps'
    python3 - one.jsonl <<'PY' || fail "one.jsonl is not what the report says"
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
assert all(r["trial"] == "importance" for r in rows)
steps = [r for r in rows if not r.get("summary")]
summ = {r["measure"]: r for r in rows if r.get("summary")}
assert len(steps) == 6 and [r["step"] for r in steps] == list(range(6)), steps
assert [r["token"] for r in steps] == ["e", "d", "c", "b", "a", "<eos>"]
for r in steps:
    assert len(r["attention"]) == 5 and abs(sum(r["attention"]) - 1) < 1e-5
    assert all(v >= 0 for v in r["grad"] + r["loo"])
    for k in ("tau_grad", "tau_loo"):
        assert r[k] is None or -1 <= r[k] <= 1
for k in ("grad", "loo"):
    taus = [r["tau_" + k] for r in steps if r["tau_" + k] is not None]
    assert summ[k]["steps"] == len(taus) and sum(summ[k]["bins"]) == len(taus)
    assert abs(summ[k]["tau_mean"] - sum(taus) / len(taus)) < 1e-5
PY
    ok "report: a row per example, the summary, the histogram; JSONL consistent with it"
    run 0 "$A" trial "$MODEL" abcdef --epsilon 0.01,0.1 --max-evals 300 --report two
    has out "^0 +abcdef +fedcba +7 +-?[0-9.]+ +-?[0-9.]+ +[0-9.]+ +[0-9.]+$"
    has out "^  0.01 +7 "
    has out "^  0.1 +7 "
    python3 - two.jsonl <<'PY' || fail "two.jsonl: the adversary's rows are not what the report says"
import json, math, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
adv = [r for r in rows if r["trial"] == "adversary" and not r.get("summary")]
summ = {r["epsilon"]: r for r in rows if r["trial"] == "adversary" and r.get("summary")}
assert sorted(summ) == [0.01, 0.1] and len(adv) == 14, (sorted(summ), len(adv))
for r in adv:
    assert 0 <= r["tvd"] <= r["epsilon"] + 1e-12, r
    assert 0 <= r["jsd"] <= math.log(2) + 1e-9, r
    assert len(r["adversary"]) == 6 and abs(sum(r["adversary"]) - 1) < 1e-5 and min(r["adversary"]) >= 0
for e, s in summ.items():
    js = [r["jsd"] for r in adv if r["epsilon"] == e]
    assert s["steps"] == 7 and sum(s["bins"]) == 7 and abs(s["jsd_mean"] - sum(js) / 7) < 1e-5
    assert abs(s["jsd_max"] - max(js)) < 1e-5
PY
    [ "$(grep -o '<svg' two.html | wc -l)" -eq 2 ] || fail "two.html: expected the tau and the JSD plots"
    grep -q 'JSD reachable within TVD epsilon' two.html || fail "two.html: no JSD plot title"
    ok "adversary: two epsilons, every row feasible, summaries consistent; the page has both plots"
    # one candidate row per decoder-step call (unbatched), and 5 (rounds cut unevenly): every row feasible
    for b in 1 5; do
        run 0 "$A" trial "$MODEL" abcdef --epsilon 0.01,0.1 --max-evals 300 --batch $b --report b$b
        python3 - b$b.jsonl <<'PY' || fail "b$b.jsonl: an adversary row is infeasible or missing"
import json, math, sys
adv = [r for r in map(json.loads, open(sys.argv[1])) if r["trial"] == "adversary" and not r.get("summary")]
assert len(adv) == 14, len(adv)
for r in adv:
    assert 0 <= r["tvd"] <= r["epsilon"] + 1e-12 and 0 <= r["jsd"] <= math.log(2) + 1e-9, r
PY
    done
    run 2 "$A" trial "$MODEL" abcdef --batch 0
    has err "batch"
    ok "adversary --batch 1 and 5: every row feasible; --batch 0 refused"
    # --search: each strategy alone; both (the default, two.jsonl) keeps the farther row at every step
    for m in rays follow; do
        run 0 "$A" trial "$MODEL" abcdef --epsilon 0.01,0.1 --max-evals 300 --search $m --report s$m
    done
    python3 - two.jsonl srays.jsonl sfollow.jsonl <<'PY' || fail "--search both is below rays or follow at a step"
import json, sys
def rows(p):
    return {(r["epsilon"], r["step"]): r["jsd"] for r in map(json.loads, open(p))
            if r["trial"] == "adversary" and not r.get("summary")}
both, rays, follow = (rows(p) for p in sys.argv[1:])
assert len(both) == 14 and both.keys() == rays.keys() == follow.keys()
for k in both:
    assert abs(both[k] - max(rays[k], follow[k])) < 1e-6, (k, both[k], rays[k], follow[k])
PY
    run 2 "$A" trial "$MODEL" abcdef --search walk
    has err "both|rays|follow"
    ok "adversary --search rays / follow: both is the farther of the two at every step; an unknown name refused"
    run 0 "$A" trial "$MODEL" --data "$SRC/tests/cli/reverse_dev.tsv" --limit 25 --trials importance
    [ "$(grep -Ec '^[0-9]+ +[a-h]+ ' out)" -eq 25 ] || fail "expected 25 example rows"
    has err "attend trial: 25/25 sources"
    ok "--data with --limit, progress on stderr"
    run 2 "$A" trial "$MODEL"
    has err "give either TEXT or --data TSV, not neither"
    run 2 "$A" trial "$MODEL" abc --data x.tsv
    has err "not both"
    run 1 "$A" trial "$MODEL" abc --report /nonexistent/dir/r
    has err "cannot write /nonexistent/dir/r.txt"
    run 2 "$A" trial "$MODEL" abc --trials nope
    has err "the trials are importance, adversary and alignment"
    run 2 "$A" trial "$MODEL" abc --epsilon 0.1,0.01
    has err "not increasing"
    run 1 "$A" trial missing.safetensors abc
    has err "missing.safetensors"
    run 2 "$A" trial "$MODEL" --textbook
    has err "textbook takes no MODEL"
    run 2 "$A" trial --textbook --epsilon 2
    has err "not a total variation in \[0, 1\]"
    ok "usage and file errors"
    # seed 000's toy through the trials (its numbers: ctest trial_textbook_ref)
    run 0 "$A" trial --textbook
    has out "^step 1, query q1 = \[1, 0\] .*r = 0.693147 = 1.0000 a$"
    has out "^  remove-state |r'-r| .* 0.000000  0.231049  0.231049   -1.0000 "
    [ "$(grep -c '^  adversary eps 0.01 ' out)" -eq 4 ] || fail "textbook: expected a search and an exact row per step"
    ok "--textbook: both steps, tau -1 for state removal at q1, one epsilon by default"
    ;;

m2m)
    # the CMUdict sample as spaced TSV (letters, phonemes), first pronunciations
    awk '!/^;;;/ && $1 !~ /[(]/ { w = $1; gsub(/./, "& ", w); sub(/ $/, "", w); $1 = ""; sub(/^ /, ""); print w "\t" $0 }' \
        "$SRC/data/g2p/cmudict-sample.dict" >dict.tsv
    run 0 "$A" m2m dict.tsv --out aligned.tsv --gold "$SRC/data/g2p/hand-alignments.tsv"
    [ "$(wc -l <aligned.tsv)" -eq "$(wc -l <dict.tsv)" ] || fail "aligned.tsv: not one line per pair"
    awk -F'\t' 'NF != 3 { bad = 1 } END { exit bad }' aligned.tsv || fail "aligned.tsv: a line without three columns"
    has aligned.tsv "^b a i l s	B EY L Z	0-0 1-1 2-1 3-2 4-3$"
    has err "^attend m2m: against .*hand-alignments.tsv: 64 of its 64 pairs found, precision 0\.9[0-9]+ recall 0\.9[0-9]+ F1 0\.9[0-9]+ AER 0\.0[0-9]+, [0-9]+ aligned exactly$"
    ok "the sample aligned (a third column on every line), F1 >= 0.9 against the hand alignments"
    run 0 "$A" train --train aligned.tsv --tokenizer space --guided-alignment 1 --steps 2 --batch 8 --emb 8 \
        --hidden 8 --dec-hidden 16 --attn 8 --eval-every 2 --out guided.safetensors
    has out "^training: .*guided alignment 1$"
    ok "the aligned TSV trains with --guided-alignment"
    run 0 "$A" m2m dict.tsv --out two.tsv --two-to-two --gold "$SRC/data/g2p/hand-alignments.tsv"
    has err "F1 0\.[0-8][0-9]+ AER"
    ok "--two-to-two: 2-2 pairs take over (F1 below 0.9)"
    # the alignment trial: the shipped G2P model's forced alignments against the hand links
    run 0 "$A" trial "$SRC/models/g2p-cmudict.safetensors" --data "$SRC/data/g2p/hand-alignments.tsv" --spaced \
        --trials alignment --report aln
    has out "^0 +bails +[A-Z ]+ +[0-9]+$"
    has out "^  argmax +[0-9]+ +[0-9]+ +0\.[0-9]+ +0\.[0-9]+ +0\.[0-9]+ +0\.[0-9]+$"
    has out "^  weight >= 0.3 +[0-9]+ "
    python3 - aln.jsonl "$SRC/data/g2p/hand-alignments.tsv" <<'PY' || fail "aln.jsonl: the alignment summaries are not consistent"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
s = {r["links"]: r for r in rows if r["trial"] == "alignment"}
assert sorted(s) == ["argmax", "threshold"]
for r in s.values():
    assert r["pairs"] == 64 and r["ref"] > 0
    assert abs(r["precision"] - r["both"] / r["hyp"]) < 1e-5 and abs(r["recall"] - r["both"] / r["ref"]) < 1e-5
    assert abs(r["aer"] - (1 - 2 * r["both"] / (r["hyp"] + r["ref"]))) < 1e-5
assert s["argmax"]["hyp"] == sum(1 for l in open(sys.argv[2]) for _ in l.split("\t")[1].split())
PY
    ok "alignment trial: argmax and threshold rows, JSONL consistent"
    run 2 "$A" trial "$SRC/models/g2p-cmudict.safetensors" abc --trials alignment
    has err "needs --data"
    run 2 "$A" m2m
    has err "needs a TSV file"
    run 1 "$A" m2m missing.tsv
    has err "missing.tsv"
    run 2 "$A" m2m dict.tsv --max-src 3
    ok "usage and file errors"
    ;;

wp)
    # Wiegreffe & Pinter's tests from the command line: a uniform-attention model, an
    # adversary and a frozen-attention model of the cli_model's base (same task, so the
    # same vocabularies), then `attend compare` against the base
    T="--task reverse --symbols 8 --min-len 2 --max-len 8 --count 200 --dev-count 50 --emb 16 --hidden 32
       --dec-hidden 64 --decoder luong --score general --batch 32 --steps 20"
    DEV=$SRC/tests/cli/reverse_dev.tsv
    # shellcheck disable=SC2086
    run 0 "$A" train $T --uniform-attention --out u.safetensors
    has out "^saved: u.safetensors"
    # shellcheck disable=SC2086
    run 0 "$A" train $T --adversarial 1 --reference "$MODEL" --out adv.safetensors
    has out "adversarial 1 \(TVD - 1 JSD to the reference\)"
    # shellcheck disable=SC2086
    run 0 "$A" train $T --frozen-attention --reference "$MODEL" --out fr.safetensors
    has out "^dev with the reference's attention \(teacher-forced\): pairs 50 "
    ok "train --uniform-attention, --adversarial, --frozen-attention"
    run 0 "$A" compare "$MODEL" u.safetensors adv.safetensors --data "$DEV" --jsonl c.jsonl
    has out "^u.safetensors: pairs 60 steps 335  JSD 0\.[0-9]{4} "
    has out "^mean over 2 models: JSD "
    [ "$(grep -c '"model":' c.jsonl)" -eq 2 ] || fail "c.jsonl: expected 2 objects"
    run 0 "$A" compare "$MODEL" fr.safetensors --frozen --data "$DEV"
    has out "^fr.safetensors \(base's attention\): pairs 60 steps 335  JSD 0.0000 sd 0.0000 max 0.0000 "
    ok "compare (JSD 0 with --frozen)"
    # shellcheck disable=SC2086
    run 2 "$A" train $T --frozen-attention
    has err "--frozen-attention needs --reference MODEL"
    # shellcheck disable=SC2086
    run 2 "$A" train $T --reference "$MODEL"
    has err "--reference is the base model of --frozen-attention or --adversarial"
    # shellcheck disable=SC2086
    run 2 "$A" train $T --uniform-attention --normalizer sparsemax
    has err "--uniform-attention with --normalizer sparsemax"
    # shellcheck disable=SC2086
    run 2 "$A" train $T --frozen-attention --reference "$MODEL" --eval-every 5
    has err "--frozen-attention: the evaluations during training run the model's own"
    run 2 "$A" compare "$MODEL" --data "$DEV"
    has err "at least one model"
    run 1 "$A" compare "$MODEL" "$MODEL" --data missing.tsv
    ok "usage errors"
    ;;

sweep)
    SW="--task reverse --symbols 6 --lengths 3,6 --decoders none,general --train-pairs 400 --dev-pairs 30
        --emb 8 --hidden 8 --attn 8 --steps 40 --warmup 5 --batch 16 --seed 3"
    # shellcheck disable=SC2086
    run 0 "$A" sweep $SW --csv one.csv --svg one.svg
    has out "^wrote one.csv and one.svg$"
    [ "$(wc -l <one.csv)" -eq 5 ] || fail "CSV: expected a header and 4 rows"
    has one.csv "^none,none,,3,3,30,"
    has one.csv "^luong-general,luong,general,6,6,30,"
    grep -q '</svg>' one.svg || fail "SVG not closed"
    grep -q 'luong-general' one.svg || fail "SVG legend lacks luong-general"
    ok "table, CSV and SVG"
    # shellcheck disable=SC2086
    run 0 "$A" sweep $SW --csv two.csv --svg two.svg
    # every column but the three timing ones
    cut -d, -f1-13 one.csv >a
    cut -d, -f1-13 two.csv >b
    cmp -s a b || fail "the same seed gave different numbers"
    ok "same seed, same numbers"
    # shellcheck disable=SC2086
    run 0 "$A" sweep $SW --lengths 6 --csv six.csv --svg six.svg
    # shellcheck disable=SC2086
    run 0 "$A" sweep $SW --lengths 3 --csv three.csv --svg three.svg
    run 0 "$A" sweep --plot six.csv three.csv --csv merged.csv --svg merged.svg
    has out "^wrote merged.csv and merged.svg$"
    cut -d, -f1-13 merged.csv >m
    cmp -s a m || { diff a m >&2; fail "runs split by length and merged with --plot differ from one run"; }
    cmp -s merged.svg one.svg || fail "the merged plot differs from the one-run plot"
    ok "split by length + --plot = one run"
    run 2 "$A" sweep --plot
    has err "--plot needs CSV files"
    printf 'not,a,sweep\n' >bad.csv
    run 1 "$A" sweep --plot bad.csv
    has err "bad.csv:1: not the header"
    run 2 "$A" sweep --lengths 5,3
    has err "not increasing"
    run 2 "$A" sweep --decoders none,pointer
    has err "unknown decoder 'pointer'"
    run 2 "$A" sweep --task sort
    run 2 "$A" sweep --train x.tsv
    has err "--train and --dev go together"
    ok "usage errors"
    ;;

*)
    echo "analysis_test.sh: unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
