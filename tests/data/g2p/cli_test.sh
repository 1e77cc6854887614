#!/bin/sh
# cli_test.sh CASE CLI SRC_DIR WORK_DIR — end-to-end cases of `attend g2p`
# (registered by tests/cmake/g2p.cmake). Uses the shipped model
# (models/g2p-cmudict.safetensors) and the committed sample dictionary.
set -u
case_=$1
cli=$2
src=$3
work=$4/$case_
rm -rf "$work"
mkdir -p "$work"
cd "$work" || exit 1
model=$src/models/g2p-cmudict.safetensors
sample=$src/data/g2p/cmudict-sample.dict
stress_sample=$src/data/g2p/cmudict-stress-sample.dict
unset ATTEND_G2P_MODEL ATTEND_G2P_DICT
fail() {
    echo "FAIL [$case_]: $*" >&2
    exit 1
}
# expect_rc WANT CMD...: runs CMD, stdout to out.txt, stderr to err.txt
expect_rc() {
    want=$1
    shift
    "$@" >out.txt 2>err.txt
    got=$?
    [ "$got" -eq "$want" ] || { cat err.txt >&2; fail "exit $got, want $want: $*"; }
}
export ATTEND_NUM_THREADS=1

case $case_ in
say)
    # the shipped model is found without --model (compile-time source path)
    expect_rc 0 "$cli" g2p hello world
    printf 'hello HH EH L OW\nworld W ER L D\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "g2p hello world"; }
    # --model and $ATTEND_G2P_MODEL give the same
    expect_rc 0 "$cli" g2p --model "$model" hello world
    cmp -s out.txt want.txt || fail "--model"
    ATTEND_G2P_MODEL=$model expect_rc 0 "$cli" g2p hello world
    cmp -s out.txt want.txt || fail "ATTEND_G2P_MODEL"
    # a word spelled like a subcommand, after --
    expect_rc 0 "$cli" g2p -- train
    grep -q '^train T R EY N$' out.txt || fail "-- train: $(cat out.txt)"
    ;;
stdin)
    printf 'Hello\n\n  world \nspeech\n' | "$cli" g2p >out.txt 2>err.txt || fail "stdin mode failed: $(cat err.txt)"
    printf 'Hello HH EH L OW\n\nworld W ER L D\nspeech S P IY CH\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "stdin"; }
    printf 'hello\n' | "$cli" g2p - >out.txt 2>err.txt || fail "g2p -"
    grep -q '^hello HH EH L OW$' out.txt || fail "g2p -"
    ;;
nbest)
    expect_rc 0 "$cli" g2p --nbest 3 hello
    [ "$(wc -l < out.txt)" -eq 3 ] || fail "3 lines expected: $(cat out.txt)"
    head -1 out.txt | grep -q '^hello HH EH L OW  # -[0-9.]*$' || fail "first: $(head -1 out.txt)"
    sed -n 2p out.txt | grep -q '^hello(2) [A-Z ]*  # -[0-9.]*$' || fail "second: $(sed -n 2p out.txt)"
    sed -n 3p out.txt | grep -q '^hello(3) ' || fail "third"
    # scores are best first
    awk '{print $NF}' out.txt > scores.txt
    sort -g -r scores.txt | cmp -s - scores.txt || fail "scores not descending: $(cat scores.txt)"
    # the output is a dictionary again (alternates and comments)
    cp out.txt nbest.dict
    expect_rc 0 "$cli" g2p data --dict nbest.dict
    grep -q '^lines 3: 3 pronunciations of 1 words' out.txt || fail "n-best output does not parse: $(cat out.txt)"
    # beam 1 is greedy
    expect_rc 0 "$cli" g2p --beam 1 hello
    grep -q '^hello HH EH L OW$' out.txt || fail "--beam 1"
    ;;
align)
    expect_rc 0 "$cli" g2p --align speech
    head -1 out.txt | grep -q '^speech S P IY CH$' || fail "first line: $(head -1 out.txt)"
    grep -q '| s      p      e      e      c      h      |' out.txt || fail "letters header: $(cat out.txt)"
    # the first phoneme attends most to the first letter, the last to 'c' or 'h'
    grep -q '^S  *|.*argmax=0 (s)' out.txt || fail "S not aligned to s: $(cat out.txt)"
    grep -q '^CH *|.*argmax=[45] ([ch])' out.txt || fail "CH not aligned to c/h: $(cat out.txt)"
    expect_rc 0 "$cli" g2p --align --nbest 2 cat
    [ "$(grep -c 'argmax=' out.txt)" -ge 6 ] || fail "two alignments expected"
    ;;
eval)
    expect_rc 0 "$cli" g2p eval --dict "$sample" --split dev,test --beam 3
    grep -q '^dev    greedy ' out.txt || fail "dev greedy row: $(cat out.txt)"
    grep -q '^test   beam 3 ' out.txt || fail "test beam row: $(cat out.txt)"
    # WER column below 50% on every row
    awk 'NR > 3 && $5 + 0 >= 50 { bad = 1 } END { exit bad }' out.txt || fail "WER too high: $(cat out.txt)"
    expect_rc 0 "$cli" g2p eval --dict "$sample" --split train --beam 0 --max-words 50
    awk '$1 == "train" && $2 == "greedy" && $3 == 50 { ok = 1 } END { exit !ok }' out.txt ||
        fail "--max-words: $(cat out.txt)"
    ;;
data)
    expect_rc 0 "$cli" g2p data --dict "$sample" --out parts
    grep -q '^lines 3642: 3639 pronunciations of 3404 words, 3 comment, 0 blank, 0 skipped, 0 duplicate$' out.txt ||
        fail "counts: $(cat out.txt)"
    cat parts/train.dict parts/dev.dict parts/test.dict | sed 's/([0-9]*) / /' | sort > union.txt
    grep -v '^;;;' "$sample" | sed 's/([0-9]*) / /' | sort > want.txt
    cmp -s union.txt want.txt || fail "the three parts are not the sample"
    # deterministic: a second run writes the same files
    expect_rc 0 "$cli" g2p data --dict "$sample" --out parts2
    for p in train dev test; do cmp -s parts/$p.dict parts2/$p.dict || fail "$p differs between runs"; done
    # no word in two parts
    for p in train dev test; do sed 's/[( ].*//' parts/$p.dict | sort -u; done | sort | uniq -d > dup.txt
    [ ! -s dup.txt ] || fail "words in two parts: $(head -3 dup.txt)"
    ;;
train)
    # a tiny model on the sample: saved when dev WER improves, checkpoints, loadable, resumable
    expect_rc 0 "$cli" g2p train --dict "$sample" --epochs 2 --warmup 10 --emb 8 --hidden 16 --dec-hidden 32 \
        --attn 16 --out tiny.safetensors --checkpoint tiny.ckpt --checkpoint-every 10 --log-every 20
    grep -q '^epoch 1 step 51: dev PER' out.txt || fail "epoch line: $(cat out.txt)"
    grep -q '^saved: tiny.safetensors$' out.txt || fail "not saved: $(cat out.txt)"
    grep -q '^step 20/102 epoch 1 loss' err.txt || fail "log lines: $(cat err.txt)"
    [ -f tiny.ckpt ] || fail "no checkpoint"
    expect_rc 0 "$cli" g2p --model tiny.safetensors cat
    grep -q '^cat' out.txt || fail "tiny model does not pronounce"
    expect_rc 0 "$cli" g2p train --dict "$sample" --epochs 2 --warmup 10 --emb 8 --hidden 16 --dec-hidden 32 \
        --attn 16 --out tiny.safetensors --checkpoint tiny.ckpt --resume tiny.ckpt
    grep -q '^resumed: tiny.ckpt at step 102$' out.txt || fail "resume: $(cat out.txt)"
    ;;
stress)
    # --keep-stress: a tiny model on the stressed sample learns AH0/AH1/AH2, and
    # g2p eval sees it from the model and scores it with and without stress
    expect_rc 0 "$cli" g2p train --dict "$stress_sample" --keep-stress --epochs 4 --warmup 10 --emb 16 --hidden 32 \
        --dec-hidden 64 --attn 32 --out stress.safetensors
    grep -q '^data: .* phonemes (stress kept)$' out.txt || fail "data line: $(cat out.txt)"
    grep -q '^saved: stress.safetensors$' out.txt || fail "not saved: $(cat out.txt)"
    expect_rc 0 "$cli" g2p --model stress.safetensors cat
    grep -q '^cat .*[A-Z][012]' out.txt || fail "no stress digit in the output: $(cat out.txt)"
    expect_rc 0 "$cli" g2p eval --model stress.safetensors --dict "$stress_sample" --split dev --beam 2
    grep -q '^dictionary: .*(stress kept' out.txt || fail "eval header: $(cat out.txt)"
    for dec in greedy "beam 2"; do
        for s in scored ignored; do
            grep -q "^dev    $dec .* $s\$" out.txt || fail "row '$dec $s' missing: $(cat out.txt)"
        done
    done
    # ignoring stress never adds errors: WER and PER of "ignored" <= "scored"
    awk '$NF == "scored" { per[$2] = $(NF-3); wer[$2] = $(NF-2) }
         $NF == "ignored" && ($(NF-3) > per[$2] || $(NF-2) > wer[$2]) { bad = 1 } END { exit bad }' out.txt ||
        fail "ignoring stress raised an error rate: $(cat out.txt)"
    # the shipped stress model: stressed phonemes, and rates on the stressed sample
    stress_model=$src/models/g2p-cmudict-stress.safetensors
    expect_rc 0 "$cli" g2p --model "$stress_model" read attention
    printf 'read R IY1 D\nattention AH0 T EH1 N SH AH0 N\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "shipped stress model"; }
    expect_rc 0 "$cli" g2p eval --model "$stress_model" --dict "$stress_sample" --split dev --beam 0
    awk '$NF == "scored" && $(NF-2) + 0 < 45 { s = 1 } $NF == "ignored" && $(NF-2) + 0 < 38 { i = 1 }
         END { exit !(s && i) }' out.txt || fail "shipped stress model rates: $(cat out.txt)"
    # a stress model against a dictionary without stress, and --keep-stress on one
    expect_rc 1 "$cli" g2p eval --model stress.safetensors --dict "$sample" --split dev
    grep -q 'carry stress digits and .*cmudict-sample.dict has none' err.txt || fail "no-stress dict: $(cat err.txt)"
    expect_rc 1 "$cli" g2p train --dict "$sample" --keep-stress --epochs 1 --emb 8 --hidden 8 --dec-hidden 8 \
        --attn 8 --out never.safetensors
    grep -q -- '--keep-stress: .*cmudict-sample.dict has no stress digits' err.txt || fail "keep-stress: $(cat err.txt)"
    [ ! -e never.safetensors ] || fail "a model was written"
    # a stress-free model and a stress model are not one ensemble
    expect_rc 1 "$cli" g2p eval --model "$model,stress.safetensors" --dict "$stress_sample" --split dev
    grep -q 'model 2 (stress.safetensors)' err.txt || fail "mixed ensemble: $(cat err.txt)"
    ;;
ensemble)
    # g2p eval --model A,B: two copies of the shipped model score exactly as one
    expect_rc 0 "$cli" g2p eval --dict "$sample" --split dev --beam 3
    cut -c1-41 out.txt | tail -n +3 > one.txt
    expect_rc 0 "$cli" g2p eval --model "$model,$model" --dict "$sample" --split dev --beam 3
    grep -q '^ensemble of 2 models' out.txt || fail "header: $(cat out.txt)"
    cut -c1-41 out.txt | tail -n +3 > two.txt
    cmp -s one.txt two.txt || fail "an ensemble of two copies differs: $(cat one.txt two.txt)"
    [ "$(wc -l < two.txt)" -eq 3 ] || fail "rows: $(cat two.txt)"
    expect_rc 2 "$cli" g2p eval --model "$model,$model" --dict "$sample" --coverage-penalty 0.2
    grep -q 'coverage-penalty with an ensemble' err.txt || fail "coverage penalty: $(cat err.txt)"
    expect_rc 2 "$cli" g2p eval --model "$model," --dict "$sample"
    grep -q 'an empty path in the list' err.txt || fail "empty path: $(cat err.txt)"
    ;;
errors)
    expect_rc 2 "$cli" g2p --bogus hello
    grep -q "unknown option '--bogus'" err.txt || fail "bogus option: $(cat err.txt)"
    expect_rc 2 "$cli" g2p --nbest 3 --beam 2 hello
    expect_rc 1 "$cli" g2p --model nonexistent.safetensors hello
    grep -q 'nonexistent.safetensors' err.txt || fail "missing model: $(cat err.txt)"
    printf 'ok OW K EY\nbad(x) B AE D\n' > bad.dict
    expect_rc 1 "$cli" g2p data --dict bad.dict
    grep -q 'bad.dict:2: word .bad(x).: the alternate marker must be (N)' err.txt || fail "bad line: $(cat err.txt)"
    expect_rc 0 "$cli" g2p data --dict bad.dict --skip-malformed
    grep -q '1 skipped' out.txt || fail "skip: $(cat out.txt)"
    expect_rc 1 "$cli" g2p ""
    grep -q 'the word is empty' err.txt || fail "empty word: $(cat err.txt)"
    # a model that is not a G2P model (the char-level reversal task: lower-case outputs)
    "$cli" train --task reverse --steps 2 --emb 4 --hidden 4 --dec-hidden 8 --attn 4 --out rev.safetensors >/dev/null 2>&1 ||
        fail "could not train a reversal model"
    expect_rc 1 "$cli" g2p --model rev.safetensors hello
    grep -q 'not a G2P model' err.txt || fail "non-G2P model: $(cat err.txt)"
    expect_rc 2 "$cli" g2p eval --split nope
    ;;
search)
    # issue 30: an installed attend uses the model installed with it, never the
    # build's source tree; the source tree only from the build directory;
    # --help says where it looked
    expect_rc 0 "$cli" g2p --help
    grep -q "models/g2p-cmudict.safetensors  (the source tree: this attend runs from its build directory: found)" \
        out.txt || { cat out.txt; fail "--help from the build directory"; }
    mkdir -p inst/bin inst/share/attend moved
    cp "$cli" inst/bin/attend
    cp "$cli" moved/attend
    # the installed model is another one (with stress digits): the installed one must be used
    cp "$src/models/g2p-cmudict-stress.safetensors" inst/share/attend/g2p-cmudict.safetensors
    expect_rc 0 inst/bin/attend g2p read
    [ "$(cat out.txt)" = "read R IY1 D" ] || fail "installed attend did not use its installed model: $(cat out.txt)"
    expect_rc 0 inst/bin/attend g2p --help
    grep -q "$work/inst/share/attend/g2p-cmudict.safetensors  (installed with this attend: found)" out.txt &&
        grep -q "source tree's models/g2p-cmudict.safetensors  (not searched" out.txt ||
        { cat out.txt; fail "--help of the installed attend"; }
    # moved out of the build directory with nothing installed beside it: no model, and a message saying where
    expect_rc 1 moved/attend g2p hello
    grep -q "no model found (looked in $work/share/attend/g2p-cmudict.safetensors)" err.txt ||
        { cat err.txt; fail "moved attend's message"; }
    ATTEND_G2P_MODEL=$model expect_rc 0 moved/attend g2p hello
    [ "$(cat out.txt)" = "hello HH EH L OW" ] || fail "\$ATTEND_G2P_MODEL"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_]"
