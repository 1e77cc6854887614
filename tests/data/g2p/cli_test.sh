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
# hermetic: no lexicon unless a case gives one (a machine may have CMUdict
# installed; CI does not), and a scratch cache directory
export ATTEND_G2P_LEXICON=none XDG_CACHE_HOME="$work/cache"
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

# interrupt_at_first_step TAG WHAT ARM COMMAND...: runs COMMAND (a resumable
# recipe writing into ./three, its output into three.txt) in its own process
# group, sends the group SIGTERM once three/ARM.err shows a training step, and
# checks the run stopped with 143, ARM's checkpoint written and not marked
# done (or notes that WHAT finished first: resume then not exercised)
interrupt_at_first_step() {
    tag=$1 what=$2 arm=$3
    shift 3
    setsid "$@" > three.txt 2>&1 &
    pid=$!
    i=0
    while [ $i -lt 600 ] && ! grep -q '^step [0-9]*/' "three/$arm.err" 2>/dev/null; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -TERM -$pid || fail "could not signal the run's process group $pid"
    wait $pid
    rc=$?
    if [ $rc -eq 0 ]; then
        echo "note [$tag]: $what finished before the signal; resume not exercised this time" >&2
    else
        [ $rc -eq 143 ] || { cat three.txt; fail "interrupted run: exit $rc, want 143"; }
        [ -f "three/$arm.ckpt" ] && [ ! -f "three/$arm.done" ] || fail "interrupted: no checkpoint, or marked done"
    fi
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
    # issue 29: A's recipe with --keep-stress (2 282 441 parameters; on these 154 dev
    # words 30.52% / 25.97%; the previous, smaller stress model scored 33.12% / 28.57%)
    grep -q '^model: .*(2282441 parameters)$' out.txt || fail "shipped stress model: $(head -n 1 out.txt)"
    awk '$NF == "scored" && $(NF-2) + 0 < 32 { s = 1 } $NF == "ignored" && $(NF-2) + 0 < 27.5 { i = 1 }
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
bench)
    # g2p bench: one model, and an ensemble (issue 29): both report batch 1 and batch 64
    expect_rc 0 "$cli" g2p bench --dict "$sample" --words 20
    grep -q "^model: .*g2p-cmudict.safetensors (2[0-9]* parameters)" out.txt || fail "header: $(cat out.txt)"
    grep -q '^batch 1, greedy: 20 words, wall latency' out.txt || fail "batch 1: $(cat out.txt)"
    grep -q '^batch 64, greedy (with scoring): 20 words in' out.txt || fail "batch 64: $(cat out.txt)"
    p1=$(sed -n 's/.*(\([0-9]*\) parameters).*/\1/p' out.txt)
    expect_rc 0 "$cli" g2p bench --model "$model,$model" --dict "$sample" --words 20
    grep -q "^ensemble of 2 models: $model $model ($((2 * p1)) parameters)" out.txt || fail "ensemble header: $(cat out.txt)"
    grep -q '^batch 1, greedy: 20 words, wall latency' out.txt || fail "ensemble batch 1: $(cat out.txt)"
    grep -q '^batch 64, greedy (with scoring): 20 words in' out.txt || fail "ensemble batch 64: $(cat out.txt)"
    expect_rc 1 "$cli" g2p bench --model "$model,nonexistent.safetensors" --dict "$sample" --words 5
    grep -q 'nonexistent.safetensors' err.txt || fail "missing member: $(cat err.txt)"
    expect_rc 2 "$cli" g2p bench --model "$model," --dict "$sample"
    grep -q 'an empty path in the list' err.txt || fail "empty path: $(cat err.txt)"
    ;;
lexicon)
    # issue 29: the lexicon first, the model for the rest; the source marked
    expect_rc 0 "$cli" g2p --lexicon "$sample" ai hello AEROMAR
    printf 'ai AY\nhello HH EH L OW\nAEROMAR EH R AH M AA R\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "lexicon first"; }
    ls cache/attend/lexicon-*.bin >/dev/null 2>&1 || fail "no cached lexicon in \$XDG_CACHE_HOME/attend"
    # --nbest lists the lexicon's entries in its order
    expect_rc 0 "$cli" g2p --lexicon "$sample" --nbest 3 ai
    printf 'ai AY  # lexicon\nai(2) EY AY  # lexicon\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "lexicon n-best"; }
    # tsv: a SOURCE column; jsonl: a "source" key
    expect_rc 0 "$cli" g2p --lexicon "$sample" --format tsv ai hello
    printf '1\t1\t\tai\tAY\tlexicon\n' > want.txt
    head -1 out.txt | cmp -s - want.txt || fail "tsv lexicon row: $(head -1 out.txt)"
    sed -n 2p out.txt | grep -q "^2	1	-[0-9.]*	hello	HH EH L OW	model\$" || fail "tsv model row: $(sed -n 2p out.txt)"
    expect_rc 0 "$cli" g2p --lexicon "$sample" --format jsonl ai hello
    head -1 out.txt | grep -q '"word":"ai","source":"lexicon",.*"phonemes":"AY","score":null' || fail "jsonl: $(cat out.txt)"
    sed -n 2p out.txt | grep -q '"word":"hello","source":"model"' || fail "jsonl model: $(cat out.txt)"
    # the cached copy: the same answers; a changed text is read again; a damaged copy is rebuilt
    cp "$sample" my.dict
    expect_rc 0 "$cli" g2p --lexicon my.dict ai zyzzogeton
    grep -q '^ai AY$' out.txt || fail "my.dict: $(cat out.txt)"
    n0=$(ls cache/attend | wc -l)
    expect_rc 0 "$cli" g2p --lexicon my.dict ai zyzzogeton
    [ "$(ls cache/attend | wc -l)" -eq "$n0" ] || fail "a second run wrote another cache file"
    printf 'zyzzogeton Z IH Z AH G EH T AH N\n' >> my.dict
    expect_rc 0 "$cli" g2p --lexicon my.dict zyzzogeton
    [ "$(cat out.txt)" = "zyzzogeton Z IH Z AH G EH T AH N" ] || fail "a changed lexicon was not read again: $(cat out.txt)"
    for f in cache/attend/lexicon-*.bin; do head -c 100 "$f" > cut.bin && cat cut.bin > "$f"; done
    expect_rc 0 "$cli" g2p --lexicon my.dict zyzzogeton ai
    printf 'zyzzogeton Z IH Z AH G EH T AH N\nai AY\n' > want.txt
    cmp -s out.txt want.txt || fail "a damaged cache was not rebuilt: $(cat out.txt) $(cat err.txt)"
    # the file form itself as --lexicon; a damaged one is refused, naming it
    # (the newest: the copy of my.dict just rebuilt; the others are still the damaged ones, and the
    # order of their names is a hash of the path, so `head -1` of ls picked one by chance)
    cp "$(ls -t cache/attend/lexicon-*.bin | head -1)" lex.bin
    expect_rc 0 "$cli" g2p --lexicon lex.bin ai
    [ "$(cat out.txt)" = "ai AY" ] || fail "file form: $(cat out.txt)"
    head -c 200 lex.bin > bad.bin
    expect_rc 1 "$cli" g2p --lexicon bad.bin ai
    grep -q "bad.bin.*truncated or damaged" err.txt || fail "damaged file form: $(cat err.txt)"
    # no cache directory: in memory, the same answer
    XDG_CACHE_HOME=/nonexistent/dir HOME=/nonexistent expect_rc 0 "$cli" g2p --lexicon "$sample" ai
    [ "$(cat out.txt)" = "ai AY" ] || fail "no cache directory: $(cat out.txt)"
    # malformed lines: refused with path:line, or skipped
    printf 'ok OW K EY\nbad(x) B AE D\n' > bad.dict
    expect_rc 1 "$cli" g2p --lexicon bad.dict ok
    grep -q 'bad.dict:2: .*--skip-malformed' err.txt || fail "malformed lexicon: $(cat err.txt)"
    [ ! -s out.txt ] || fail "output despite a refused lexicon: $(cat out.txt)"
    expect_rc 0 "$cli" g2p --lexicon bad.dict --skip-malformed ok
    [ "$(cat out.txt)" = "ok OW K EY" ] || fail "--skip-malformed: $(cat out.txt)"
    grep -q 'skipped 1 malformed line (first: bad.dict:2:' err.txt || fail "skip note: $(cat err.txt)"
    # the model's phoneme set: an unknown phoneme is refused; stress stripped for a stress-free model
    printf 'ok OW K EY\nodd XQ D\n' > phones.dict
    expect_rc 1 "$cli" g2p --lexicon phones.dict ok
    grep -q "phoneme 'XQ' (first in 'odd') is not one of the model's" err.txt || fail "phoneme set: $(cat err.txt)"
    expect_rc 0 "$cli" g2p --lexicon "$stress_sample" aardvark
    [ "$(cat out.txt)" = "aardvark AA R D V AA R K" ] || fail "stress stripped: $(cat out.txt)"
    stress_model=$src/models/g2p-cmudict-stress.safetensors
    expect_rc 0 "$cli" g2p --model "$stress_model" --lexicon "$stress_sample" aardvark
    [ "$(cat out.txt)" = "aardvark AA1 R D V AA2 R K" ] || fail "stress kept: $(cat out.txt)"
    expect_rc 1 "$cli" g2p --model "$stress_model" --lexicon "$sample" ai
    grep -q 'stress digits' err.txt || fail "stress-free lexicon for a stress model: $(cat err.txt)"
    # the environment variable; --no-lexicon; both options together; a missing file
    ATTEND_G2P_LEXICON=$sample expect_rc 0 "$cli" g2p --nbest 1 ai
    [ "$(cat out.txt)" = "ai AY  # lexicon" ] || fail "\$ATTEND_G2P_LEXICON: $(cat out.txt)"
    ATTEND_G2P_LEXICON=$sample expect_rc 0 "$cli" g2p --nbest 1 --no-lexicon ai
    grep -q '^ai [A-Z ]*  # -[0-9.]*$' out.txt || fail "--no-lexicon still looked up: $(cat out.txt)"
    expect_rc 2 "$cli" g2p --lexicon "$sample" --no-lexicon ai
    expect_rc 1 "$cli" g2p --lexicon nonexistent.dict ai
    grep -q 'nonexistent.dict' err.txt || fail "missing lexicon: $(cat err.txt)"
    # no lexicon anywhere (an attend outside its build directory, nothing installed): a note, the model
    if [ ! -f /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict ]; then
        mkdir -p moved && cp "$cli" moved/attend
        (unset ATTEND_G2P_LEXICON; ATTEND_G2P_MODEL=$model expect_rc 0 moved/attend g2p ai)
        grep -q 'note: no lexicon found (looked in /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict' err.txt ||
            fail "no-lexicon note: $(cat err.txt)"
        grep -q '^ai ' out.txt || fail "no lexicon: $(cat out.txt)"
    fi
    # g2p eval measures the model: the lexicon variable changes nothing, and it takes no --lexicon
    expect_rc 0 "$cli" g2p eval --dict "$sample" --split dev --beam 0
    cp out.txt eval1.txt
    ATTEND_G2P_LEXICON=$sample expect_rc 0 "$cli" g2p eval --dict "$sample" --split dev --beam 0
    cut -c1-41 out.txt | cmp -s - "$(cut -c1-41 eval1.txt > e1.txt; echo e1.txt)" || fail "eval used the lexicon"
    expect_rc 2 "$cli" g2p eval --lexicon "$sample" --dict "$sample"
    ;;
ipa)
    # issue 29: --phones ipa for the model's and the lexicon's pronunciations, in every format
    expect_rc 0 "$cli" g2p --phones ipa hello speech
    printf 'hello hɛloʊ\nspeech spitʃ\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--phones ipa"; }
    expect_rc 0 "$cli" g2p --phones arpabet hello
    [ "$(cat out.txt)" = "hello HH EH L OW" ] || fail "--phones arpabet: $(cat out.txt)"
    stress_model=$src/models/g2p-cmudict-stress.safetensors
    expect_rc 0 "$cli" g2p --model "$stress_model" --phones ipa attention read
    printf 'attention əˈtɛnʃən\nread ˈɹid\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "stress model in IPA"; }
    expect_rc 0 "$cli" g2p --model "$stress_model" --lexicon "$stress_sample" --phones ipa --nbest 2 --format tsv aardvark
    printf '1\t1\t\taardvark\tˈɑɹdˌvɑɹk\tlexicon\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "lexicon in IPA, tsv"; }
    expect_rc 0 "$cli" g2p --phones ipa --format jsonl cat
    grep -q '"phonemes":"kæt"' out.txt || fail "jsonl IPA: $(cat out.txt)"
    expect_rc 2 "$cli" g2p --phones sampa hello
    grep -q "expected arpabet or ipa, got 'sampa'" err.txt || fail "--phones sampa: $(cat err.txt)"
    ;;
text)
    # issue 29 item 2: running text (docs/G2P.md, "Running text"), the lexicon
    # of the table test for words, the shipped model for the rest
    lex=$src/tests/data/g2p/text_lexicon.dict
    expect_rc 0 "$cli" g2p --text --lexicon "$lex" "NASA's OK, b."
    printf "nasa's N AE S AH Z\nok OW K EY\n|\nb B IY\n||\n\n" > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--text: lexicon, suffix, breaks"; }
    expect_rc 0 "$cli" g2p --text --lexicon "$lex" --format tsv FBI x-ray
    printf '1\t1\t\tfbi\tEH F B IY AY\tlexicon\n1\t2\t\tx-ray\tEH K S R EY\tlexicon\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--text tsv"; }
    expect_rc 0 "$cli" g2p --text TV
    printf 'T T IY\nV V IY\n\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--text: letters"; }
    # a word the lexicon lacks is the model's, exactly as `attend g2p WORD`
    expect_rc 0 "$cli" g2p hello world
    printf '\n' >> out.txt
    mv out.txt want.txt
    expect_rc 0 "$cli" g2p --text hello world
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--text: the model's words"; }
    expect_rc 0 "$cli" g2p --text --format jsonl "£2.50"
    grep -q '{"index":1,"position":3,"token":"and","source":"model","phonemes":"' out.txt &&
        [ "$(wc -l < out.txt)" -eq 5 ] || fail "--text jsonl: $(cat out.txt)"
    # standard input: a text per line, an empty line for an empty one
    printf 'Mr. X\n\n' | "$cli" g2p --text --format jsonl - >out.txt 2>err.txt || fail "stdin: $(cat err.txt)"
    grep -q '{"index":1,"position":2,"token":"X","source":"letters","phonemes":"EH K S"}' out.txt &&
        [ "$(wc -l < out.txt)" -eq 2 ] || fail "--text stdin: $(cat out.txt)"
    expect_rc 0 "$cli" g2p --text --lexicon "$lex" --phones ipa OK
    printf 'ok oʊkeɪ\n\n' > want.txt
    cmp -s out.txt want.txt || { diff want.txt out.txt; fail "--text --phones ipa"; }
    # unknown characters: noted once per word with what was done; no control
    # character reaches stdout or stderr, whatever the input holds
    printf 'a\033[31mb\001c \342\200\256evil \344\270\255 caf\303\251 bad\377\n' |
        "$cli" g2p --text --format tsv - >out.txt 2>err.txt || fail "controls: $(cat err.txt)"
    grep -q "<stdin>:1: 'a<U+001B>\[31mb<U+0001>c': U+001B skipped, U+0001 skipped" err.txt &&
        grep -q "<stdin>:1: '<U+202E>evil': U+202E skipped" err.txt &&
        grep -q "<stdin>:1: '中': U+4E2D kept" err.txt &&
        grep -q "<stdin>:1: 'bad<0xFF>': byte 0xFF skipped (not UTF-8)" err.txt &&
        grep -q "4 words noted above (unknown characters, or a word cut)" err.txt || { cat err.txt; fail "notes"; }
    grep -q "$(printf '\tcafe\t')" out.txt || fail "café: $(cat out.txt)"
    for f in out.txt err.txt; do
        od -An -v -tx1 "$f" | tr -s ' ' '\n' | awk '
            /^$/ { next }
            { b = $1 }
            prev == "c2" && b ~ /^[89]/ { bad = 1 }
            b != "09" && b != "0a" && (b < "20" || b == "7f") { bad = 1 }
            { prev = b }
            END { exit bad }' || fail "a control character in $f"
    done
    printf 'a\001b\n' | "$cli" g2p --text --strict - >out.txt 2>err.txt && fail "--strict with a note"
    expect_rc 2 "$cli" g2p --text --nbest 2 hello
    grep -q 'no --nbest' err.txt || fail "--text --nbest: $(cat err.txt)"
    ;;
distill)
    # g2p distill (issue 29 item 4): the teacher's pronunciations for the train
    # words, the references for the others, in the dictionary's format
    grep -v '^;;;' "$sample" > refs.dict
    expect_rc 0 "$cli" g2p distill --model "$model" --dict "$sample" --targets teacher
    mv out.txt teacher.dict
    grep -q '^attend g2p distill: train words: 3026 pronounced by the teacher in [0-9.]* s: 3018 equal a reference (99.74%), 8 differ, 0 unusable (references kept); targets teacher$' err.txt ||
        fail "teacher counts: $(cat err.txt)"
    expect_rc 0 "$cli" g2p data --dict refs.dict --out refs
    expect_rc 0 "$cli" g2p data --dict teacher.dict --out teacher
    # dev and test words keep their references
    for p in dev test; do cmp -s refs/$p.dict teacher/$p.dict || fail "teacher: the $p words changed"; done
    # a train word has one pronunciation: the teacher's, as `attend g2p WORD` says it
    [ "$(wc -l < teacher/train.dict)" -eq 3026 ] || fail "teacher: $(wc -l < teacher/train.dict) train lines"
    sed 's/ .*//' teacher/train.dict | "$cli" g2p --model "$model" - > said.txt 2>err.txt || fail "g2p -: $(cat err.txt)"
    cmp -s said.txt teacher/train.dict || { diff said.txt teacher/train.dict | head; fail "teacher != attend g2p"; }
    # both: every reference kept in its place, the 8 differing pronunciations added after a word's references
    expect_rc 0 "$cli" g2p distill --model "$model" --dict "$sample"
    grep -q ': 3018 equal a reference (99.74%), 8 differ, 0 unusable (references kept); targets both$' err.txt ||
        fail "both counts: $(cat err.txt)"
    diff refs.dict out.txt > both.diff
    [ "$(grep -c '^<' both.diff)" -eq 0 ] && [ "$(grep -c '^>' both.diff)" -eq 8 ] ||
        { cat both.diff; fail "both: not the references with 8 lines added"; }
    grep '^>' both.diff | sed 's/^> //; s/([0-9]*) / /' > added.txt
    grep -F -x -f added.txt teacher.dict > found.txt
    cmp -s added.txt found.txt || fail "both: the added lines are not the teacher's: $(cat added.txt)"
    # an ensemble teacher says what `attend g2p --model A,B` says
    head -n 400 "$sample" > small.dict
    ens=$src/models/g2p-cmudict-int8.safetensors,$src/models/g2p-cmudict-b-int8.safetensors
    expect_rc 0 "$cli" g2p distill --model "$ens" --dict small.dict --targets teacher
    mv out.txt small-teacher.dict
    expect_rc 0 "$cli" g2p data --dict small-teacher.dict --out small
    sed 's/ .*//' small/train.dict | "$cli" g2p --model "$ens" - > said.txt 2>err.txt || fail "g2p -: $(cat err.txt)"
    cmp -s said.txt small/train.dict || { diff said.txt small/train.dict | head; fail "ensemble teacher"; }
    # --split dev: the dev words are the teacher's, the train words keep theirs
    expect_rc 0 "$cli" g2p distill --model "$model" --dict "$sample" --split dev --targets teacher
    grep -q '^attend g2p distill: dev words: 187 pronounced' err.txt || fail "--split dev: $(cat err.txt)"
    mv out.txt dev-teacher.dict
    expect_rc 0 "$cli" g2p data --dict dev-teacher.dict --out dev
    cmp -s refs/train.dict dev/train.dict || fail "--split dev: the train words changed"
    # bad input
    expect_rc 2 "$cli" g2p distill --dict "$sample"
    grep -q 'model PATH\[,PATH...\] (the teacher) is required' err.txt || fail "no --model: $(cat err.txt)"
    expect_rc 1 "$cli" g2p distill --model nonexistent.safetensors --dict "$sample"
    grep -q 'nonexistent.safetensors' err.txt || fail "missing model: $(cat err.txt)"
    expect_rc 1 "$cli" g2p distill --model "$model,nonexistent.safetensors" --dict "$sample"
    grep -q 'nonexistent.safetensors' err.txt || fail "missing member: $(cat err.txt)"
    expect_rc 1 "$cli" g2p distill --model "$model" --dict nonexistent.dict
    grep -q 'nonexistent.dict' err.txt || fail "missing dictionary: $(cat err.txt)"
    printf 'ok OW K EY\nbad(x) B AE D\ncat K AE T\n' > bad.dict
    expect_rc 1 "$cli" g2p distill --model "$model" --dict bad.dict
    grep -q 'bad.dict:2: word .bad(x).: the alternate marker must be (N)' err.txt || fail "bad line: $(cat err.txt)"
    [ ! -s out.txt ] || fail "bad line: output written: $(cat out.txt)"
    expect_rc 0 "$cli" g2p distill --model "$model" --dict bad.dict --skip-malformed
    [ "$(wc -l < out.txt)" -eq 2 ] && grep -q 'skipped 1 odd line (first: bad.dict:2:' err.txt || fail "--skip-malformed: $(cat out.txt err.txt)"
    # members with different phone sets (the stress model's phonemes carry digits)
    expect_rc 1 "$cli" g2p distill --model "$model,$src/models/g2p-cmudict-stress.safetensors" --dict "$sample"
    grep -q 'model 2 (.*g2p-cmudict-stress.safetensors)' err.txt || fail "phone sets: $(cat err.txt)"
    [ ! -s out.txt ] || fail "phone sets: output written"
    expect_rc 2 "$cli" g2p distill --model "$model" --dict "$sample" --targets soft
    grep -q "targets: expected teacher or both, got 'soft'" err.txt || fail "--targets: $(cat err.txt)"
    expect_rc 2 "$cli" g2p distill --model "$model" --dict "$sample" --split half
    grep -q "split: expected train, dev, test or all, got 'half'" err.txt || fail "--split: $(cat err.txt)"
    ;;
recipe)
    # tools/g2p_distill.sh --smoke: every stage, deterministic, finished stages
    # skipped on a rerun, an interrupted student resumed to the same model
    recipe=$src/tools/g2p_distill.sh
    ATTEND=$cli sh "$recipe" --smoke --work one > one.txt 2>&1 || { cat one.txt; fail "smoke run"; }
    head -n 1 one/summary.tsv | grep -q '^arm	parameters	int8_bytes	dev_PER	dev_WER	test_PER	test_WER$' ||
        fail "summary header: $(cat one/summary.tsv)"
    [ "$(cut -f1 one/summary.tsv | tr '\n' ' ')" = "arm both refs teacher extra " ] ||
        fail "arms: $(cat one/summary.tsv)"
    # the extra arm: both.dict, then the teacher's pronunciations of new train-part words
    nb=$(wc -l < one/both.dict)
    head -n "$nb" one/extra.dict | cmp -s - one/both.dict || fail "extra.dict does not start with both.dict"
    tail -n +"$((nb + 1))" one/extra.dict > added.dict
    [ -s added.dict ] || fail "extra: no words added"
    awk '{ print $1 }' added.dict > added.words
    LC_ALL=C sort -c -u added.words || fail "extra: added words not sorted or repeated"
    ! grep -qvx '[a-z]\{1,20\}' added.words || fail "extra: a word outside a-z / 1-20: $(grep -vx '[a-z]\{1,20\}' added.words)"
    first=$(awk '$1 ~ /^[a-z]+$/ { print $1; exit }' one/smoke.dict)
    ! grep -qx "$first" added.words || fail "extra: '$first' (in the dictionary, listed in capitals) was added"
    [ "$(grep -c '^zygote$' one/extra.words)" = 1 ] || fail "extra: Zygote/zygote not folded into one word"
    ! awk '{ sub(/\(.*/, "", $1); print $1 }' one/smoke.dict | grep -qxFf - added.words ||
        fail "extra: a dictionary word was added"
    "$cli" g2p data --dict added.dict > data.txt 2>&1 || fail "extra: g2p data: $(cat data.txt)"
    grep -q '^dev  *0 words' data.txt && grep -q '^test  *0 words' data.txt || fail "extra: not all train: $(cat data.txt)"
    teacher=$src/models/g2p-cmudict-int8.safetensors,$src/models/g2p-cmudict-b-int8.safetensors
    "$cli" g2p --no-lexicon --model "$teacher" - < added.words > taught.dict 2> taught.err ||
        fail "extra: teacher: $(cat taught.err)"
    cmp -s taught.dict added.dict || { diff taught.dict added.dict | head; fail "extra: not the teacher's pronunciations"; }
    # every new word is in one part of the split; the teacher pronounced the train part's
    [ "$(($(wc -l < added.words) + $(grep -c . one/extra-parts/dev.dict) + $(grep -c . one/extra-parts/test.dict)))" = \
        "$(wc -l < one/extra.words)" ] || fail "extra: train + dev + test != the new words"
    awk -F'\t' 'NR > 1 && !($2 > 0 && $3 > 0 && $4 != "" && $7 != "") { exit 1 }' one/summary.tsv ||
        fail "summary rows: $(cat one/summary.tsv)"
    grep -q 'targets both$' one.txt || fail "no teacher stage: $(cat one.txt)"
    # a second run in another directory writes the same files
    ATTEND=$cli sh "$recipe" --smoke --work two > two.txt 2>&1 || { cat two.txt; fail "second run"; }
    for f in teacher.dict both.dict extra.dict both.safetensors refs.safetensors teacher.safetensors \
        extra.safetensors both-int8.safetensors summary.tsv; do
        cmp -s one/$f two/$f || fail "not deterministic: $f"
    done
    # a rerun skips every finished stage
    ATTEND=$cli sh "$recipe" --smoke --work one > rerun.txt 2>&1 || { cat rerun.txt; fail "rerun"; }
    grep -q 'teacher.dict: there (skipped)' rerun.txt && ! grep -q 'training on' rerun.txt ||
        fail "rerun did work again: $(cat rerun.txt)"
    cmp -s one/summary.tsv two/summary.tsv || fail "rerun changed the summary"
    # interrupted: the both student stopped (SIGTERM to the run's process group)
    # once its log shows a step, then the same command resumes it
    interrupt_at_first_step recipe "the student" both env ATTEND="$cli" sh "$recipe" --smoke --work three --arms both
    ATTEND=$cli sh "$recipe" --smoke --work three --arms both > three2.txt 2>&1 || { cat three2.txt; fail "resume run"; }
    [ $rc -eq 0 ] || grep -q 'both: resuming from three/both.ckpt' three2.txt || fail "not resumed: $(cat three2.txt)"
    [ $rc -eq 0 ] || grep -q '^resumed: three/both.ckpt at step' three/both.log || fail "trainer: $(cat three/both.log)"
    cmp -s one/both.safetensors three/both.safetensors || fail "the resumed student differs from the uninterrupted one"
    [ "$(tail -n +3 one/both.eval | cut -c1-41)" = "$(tail -n +3 three/both.eval | cut -c1-41)" ] ||
        fail "eval differs: $(cat one/both.eval three/both.eval)"
    # usage errors
    ATTEND=$cli sh "$recipe" --smoke --work four --arms both,soft > four.txt 2>&1
    [ $? -eq 2 ] && grep -q "unknown arm 'soft'" four.txt || fail "bad arm: $(cat four.txt)"
    ATTEND=$cli sh "$recipe" --dict "$sample" --work six --arms refs,extra > six.txt 2>&1
    [ $? -eq 2 ] && grep -q "the extra arm needs --extra FILE" six.txt || fail "extra without a list: $(cat six.txt)"
    ATTEND=$cli sh "$recipe" --dict "$sample" --work seven --extra nonexistent.words > seven.txt 2>&1
    [ $? -eq 1 ] && grep -q "no word list 'nonexistent.words'" seven.txt || fail "missing list: $(cat seven.txt)"
    ATTEND=$cli sh "$recipe" --dict nonexistent.dict --work five > five.txt 2>&1
    [ $? -eq 1 ] && grep -q "no dictionary 'nonexistent.dict'" five.txt || fail "no dictionary: $(cat five.txt)"
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
wp)
    # issue 31: Wiegreffe & Pinter's training options on `g2p train` (the same
    # implementation as `attend train`'s: cli/options.c) and `compare --dict`
    # on the sample dictionary's dev words
    T="--dict $sample --epochs 2 --warmup 10 --emb 8 --hidden 16 --dec-hidden 32 --attn 16 --log-every 1000 --patience 0"
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --out base.safetensors
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --seed 2 --out seed2.safetensors
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --uniform-attention --out uniform.safetensors
    grep -q '^model: .*additive attention 16, uniform weights, emb 8' out.txt || fail "uniform: $(cat out.txt)"
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --adversarial 1 --reference base.safetensors --out adv.safetensors
    grep -q ', adversarial 1 (TVD - 1 JSD to the reference)$' out.txt || fail "adversarial: $(cat out.txt)"
    grep -q '^saved: adv.safetensors$' out.txt || fail "adversarial not saved: $(cat out.txt)"
    # a frozen-attention run: no evaluation during training, the last model saved, its
    # teacher-forced dev score under the reference's attention at the end
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --frozen-attention --reference base.safetensors --out frozen.safetensors \
        --checkpoint frozen.ckpt
    grep -q ', attention frozen to the reference.s$' out.txt || fail "frozen: $(cat out.txt)"
    ! grep -q '^epoch [0-9]* step' out.txt || fail "frozen: evaluated its own attention: $(cat out.txt)"
    line=$(grep "^dev with the reference's attention (teacher-forced): pairs 195 " out.txt) ||
        fail "frozen: no dev line: $(cat out.txt)"
    grep -q '^saved: frozen.safetensors (the last model: ' out.txt || fail "frozen not saved: $(cat out.txt)"
    ok_train=$(echo "$line" | sed 's/.*  tf-token \([0-9.]*\) (the reference.*/\1/')
    # resumed (the reference given again): nothing left to train, the same model
    cp frozen.safetensors frozen-first.safetensors
    # shellcheck disable=SC2086
    expect_rc 0 "$cli" g2p train $T --frozen-attention --reference base.safetensors --out frozen.safetensors \
        --checkpoint frozen.ckpt --resume frozen.ckpt
    grep -q '^resumed: frozen.ckpt at step 102$' out.txt || fail "frozen resume: $(cat out.txt)"
    cmp -s frozen.safetensors frozen-first.safetensors || fail "frozen resume changed the model"
    # compare on the dictionary's dev words (187 words, 195 pronunciations)
    expect_rc 0 "$cli" compare base.safetensors seed2.safetensors uniform.safetensors adv.safetensors --dict "$sample" \
        --jsonl c.jsonl
    grep -q "^base base.safetensors, data $sample (dev words: all pairs)$" out.txt || fail "compare head: $(cat out.txt)"
    [ "$(grep -c '^[a-z0-9]*.safetensors: pairs 195 steps 1399  JSD ' out.txt)" = 3 ] || fail "compare rows: $(cat out.txt)"
    [ "$(grep -c '"model":' c.jsonl)" = 3 ] || fail "compare jsonl: $(cat c.jsonl)"
    # the adversary's attention is far from the base's, farther than another seed's
    jsd() { sed -n "s/^$1.safetensors: .*  JSD \([0-9.]*\) .*/\1/p" out.txt; }
    awk -v a="$(jsd adv)" -v s="$(jsd seed2)" 'BEGIN { exit !(a > s + 0.1) }' ||
        fail "adversary JSD $(jsd adv) not above seed 2's $(jsd seed2) + 0.1"
    # the diagnostic: JSD 0 with the base's attention, the same score as g2p train's last line
    expect_rc 0 "$cli" compare base.safetensors frozen.safetensors --frozen --dict "$sample"
    grep -q "^frozen.safetensors (base's attention): pairs 195 steps 1399  JSD 0.0000 sd 0.0000 max 0.0000 .* tf-token $ok_train " \
        out.txt || fail "compare --frozen (train said tf-token $ok_train): $(cat out.txt)"
    # usage errors, naming both sides
    # shellcheck disable=SC2086
    expect_rc 2 "$cli" g2p train $T --frozen-attention --out x.safetensors
    grep -q -- '--frozen-attention needs --reference MODEL' err.txt || fail "frozen alone: $(cat err.txt)"
    # shellcheck disable=SC2086
    expect_rc 2 "$cli" g2p train $T --reference base.safetensors --out x.safetensors
    grep -q -- '--reference is the base model of --frozen-attention or --adversarial' err.txt || fail "$(cat err.txt)"
    # shellcheck disable=SC2086
    expect_rc 2 "$cli" g2p train $T --uniform-attention --normalizer sparsemax --out x.safetensors
    grep -q -- '--uniform-attention with --normalizer sparsemax' err.txt || fail "uniform sparsemax: $(cat err.txt)"
    # shellcheck disable=SC2086
    expect_rc 2 "$cli" g2p train $T --adversarial 1 --reference base.safetensors --monotonic --out x.safetensors
    grep -q -- '--adversarial with --monotonic' err.txt || fail "adversarial monotonic: $(cat err.txt)"
    expect_rc 2 "$cli" g2p train --dict "$sample" --frozen-attention --reference base.safetensors --patience 2
    grep -q -- '--frozen-attention: the evaluations during training run the model.s own (untrained) attention, so --patience' \
        err.txt || fail "frozen patience: $(cat err.txt)"
    # a reference of other phonemes (the shipped model's vocabulary is in another order)
    # shellcheck disable=SC2086
    expect_rc 1 "$cli" g2p train $T --adversarial 1 --reference "$model" --out x.safetensors
    grep -q "model 2 ($model): target vocabulary id " err.txt || fail "foreign reference: $(cat err.txt)"
    [ ! -e x.safetensors ] || fail "a refused run wrote its --out"
    expect_rc 2 "$cli" compare base.safetensors seed2.safetensors --dict "$sample" --data x.tsv
    grep -q -- '--data and --dict exclude each other' err.txt || fail "compare --data --dict: $(cat err.txt)"
    expect_rc 2 "$cli" compare base.safetensors seed2.safetensors --dict "$sample" --spaced
    grep -q -- '--spaced applies to --data' err.txt || fail "compare --spaced: $(cat err.txt)"
    expect_rc 1 "$cli" compare base.safetensors seed2.safetensors --dict nonexistent.dict
    grep -q 'nonexistent.dict' err.txt || fail "compare missing dict: $(cat err.txt)"
    ;;
wprecipe)
    # tools/wp_g2p.sh --smoke: every model, deterministic, finished models skipped,
    # --base taken instead of training, an interrupted model resumed to the same one
    wp=$src/tools/wp_g2p.sh
    ATTEND=$cli sh "$wp" --smoke --work one > one.txt 2>&1 || { cat one.txt; fail "smoke run"; }
    names="adv-1 adv-10 frozen-adv frozen-base frozen-uniform seed2 seed3 uniform"
    [ "$(tail -n +2 one/summary.tsv | cut -f1 | tr '\n' ' ')" = "$names " ] || fail "summary rows: $(cat one/summary.tsv)"
    head -n 1 one/summary.tsv | grep -q '^model	reference	frozen	pairs	JSD	TVD	tf_token	ref_tf_token	dev_WER	test_WER$' ||
        fail "summary header: $(cat one/summary.tsv)"
    # the references: the base, or the frozen model's own (JSD 0, its g2p train score)
    awk -F'\t' 'NR > 1 { ref = $1 ~ /^frozen-/ ? ($1 == "frozen-adv" ? "adv-1" : substr($1, 8)) : "base"
                         if ($2 != ref || $3 != ($1 ~ /^frozen-/) || $4 != 28) exit 1
                         if ($1 ~ /^frozen-/ && ($5 != "0.000000" || $9 != "-")) exit 1
                         if ($1 !~ /^frozen-/ && ($5 <= 0 || $9 == "-")) exit 1 }' one/summary.tsv ||
        fail "summary: $(cat one/summary.tsv)"
    for f in frozen-base frozen-uniform frozen-adv; do
        t=$(sed -n "s/^dev with the reference's attention (teacher-forced): pairs 28 .*  tf-token \([0-9.]*\) (the.*/\1/p" one/$f.log)
        awk -F'\t' -v f=$f -v t="$t" '$1 == f { exit !(t != "" && sprintf("%.4f", $7) == t) }' one/summary.tsv ||
            fail "$f: g2p train's tf-token '$t' is not compare's: $(cat one/summary.tsv)"
    done
    grep -q 'adversarial 10 (TVD - 10 JSD to the reference)' one/adv-10.log ||
        fail "adv-10: $(cat one/adv-10.log)"
    grep -q 'attention frozen to the reference' one/frozen-uniform.log || fail "frozen-uniform: $(cat one/frozen-uniform.log)"
    # a rerun skips every model
    ATTEND=$cli sh "$wp" --smoke --work one > rerun.txt 2>&1 || { cat rerun.txt; fail "rerun"; }
    [ "$(grep -c 'done (skipped)' rerun.txt)" = 9 ] && ! grep -q 'training\|resuming' rerun.txt ||
        fail "rerun did work again: $(cat rerun.txt)"
    # --base: copied, not trained; every other model the same bytes (deterministic)
    ATTEND=$cli sh "$wp" --smoke --work two --base one/base.safetensors > two.txt 2>&1 || { cat two.txt; fail "--base run"; }
    grep -q 'base: one/base.safetensors (copied, not trained)' two.txt && [ ! -f two/base.log ] ||
        fail "--base: $(cat two.txt)"
    for n in base seed2 seed3 uniform adv-1 frozen-base frozen-uniform frozen-adv adv-10; do
        cmp -s one/$n.safetensors two/$n.safetensors || fail "not deterministic: $n.safetensors"
    done
    cmp -s one/summary.tsv two/summary.tsv || fail "not deterministic: summary.tsv"
    # interrupted in seed2 (SIGTERM to the run's process group once its log shows a step),
    # then the same command resumes it
    interrupt_at_first_step wprecipe "the run" seed2 env ATTEND="$cli" sh "$wp" --smoke --work three \
        --base one/base.safetensors
    ATTEND=$cli sh "$wp" --smoke --work three --base one/base.safetensors > three2.txt 2>&1 ||
        { cat three2.txt; fail "resume run"; }
    [ $rc -eq 0 ] || grep -q 'seed2: resuming from three/seed2.ckpt' three2.txt || fail "not resumed: $(cat three2.txt)"
    [ $rc -eq 0 ] || grep -q '^resumed: three/seed2.ckpt at step' three/seed2.log || fail "trainer: $(cat three/seed2.log)"
    for n in seed2 seed3 frozen-adv adv-10; do
        cmp -s one/$n.safetensors three/$n.safetensors || fail "the resumed run's $n differs from the uninterrupted one"
    done
    cmp -s one/summary.tsv three/summary.tsv || fail "the resumed run's summary differs"
    # usage errors
    ATTEND=$cli sh "$wp" --smoke --work four --adversaries 1,x > four.txt 2>&1
    [ $? -eq 2 ] && grep -q "adversaries: expected numbers" four.txt || fail "bad lambdas: $(cat four.txt)"
    ATTEND=$cli sh "$wp" --smoke --work five --base nonexistent.safetensors > five.txt 2>&1
    [ $? -eq 1 ] && grep -q "no model 'nonexistent.safetensors'" five.txt || fail "missing base: $(cat five.txt)"
    ATTEND=$cli sh "$wp" --smoke --work one --base two/seed2.safetensors > six.txt 2>&1
    [ $? -eq 1 ] && grep -q "differs from one/base.safetensors" six.txt || fail "another base: $(cat six.txt)"
    ATTEND=$cli sh "$wp" --dict nonexistent.dict --work seven > seven.txt 2>&1
    [ $? -eq 1 ] && grep -q "no dictionary 'nonexistent.dict'" seven.txt || fail "no dictionary: $(cat seven.txt)"
    # --only: those models alone (the same bytes as the whole run's), a missing reference and an unknown name refused
    ATTEND=$cli sh "$wp" --smoke --work eight --base one/base.safetensors --only seed3,uniform > eight.txt 2>&1 ||
        { cat eight.txt; fail "--only run"; }
    grep -q 'seed2: not in --only (skipped)' eight.txt && [ ! -f eight/seed2.safetensors ] && [ ! -f eight/adv-1.log ] ||
        fail "--only trained others: $(cat eight.txt)"
    for n in seed3 uniform; do
        cmp -s one/$n.safetensors eight/$n.safetensors || fail "--only: $n differs from the whole run's"
    done
    [ "$(tail -n +2 eight/summary.tsv | cut -f1 | tr '\n' ' ')" = "seed3 uniform " ] || fail "--only summary: $(cat eight/summary.tsv)"
    ATTEND=$cli sh "$wp" --smoke --work eight --only frozen-adv > nine.txt 2>&1
    [ $? -eq 1 ] && grep -q "frozen-adv needs adv-1, which is not finished" nine.txt || fail "--only reference: $(cat nine.txt)"
    ATTEND=$cli sh "$wp" --smoke --work eight --only seed3,sead2 > ten.txt 2>&1
    [ $? -eq 2 ] && grep -q "unknown model 'sead2'" ten.txt || fail "--only unknown: $(cat ten.txt)"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$case_]"
