#!/bin/sh
# web_test.sh SOURCE_DIR OUT_DIR ATTEND_CLI — builds the G2P page with
# tools/wasm_build.sh into OUT_DIR and checks it in headless Chromium
# (tests/web/web_test.py), then a second page with a transformer model.
# Prints "SKIP: emcc not installed" (exit 0) when
# Emscripten is missing; web_test.py skips the same way without chromium.
set -u
src=$1 out=$2 cli=$3
if ! command -v "${EMCC:-emcc}" >/dev/null 2>&1; then
    echo "SKIP: emcc not installed (apt-get install emscripten)"
    exit 0
fi
start=$(date +%s)
# the lexicon looked up first: the committed sample (the same page everywhere)
lex=$src/data/g2p/cmudict-sample.dict
LEXICON=$lex sh "$src/tools/wasm_build.sh" "$out" || { echo "FAIL: tools/wasm_build.sh"; exit 1; }
echo "wasm build: $(($(date +%s) - start)) s"
/usr/bin/python3 "$src/tests/web/web_test.py" "$out/attend-g2p.html" "$cli" "$lex" || exit 1
# a page with a transformer G2P model (issue 27): the encoder and decoder kinds
# of tools/g2p_transformer.sh, trained here in seconds on the sample
# dictionary, embedded instead of the shipped model (the objects above linked
# again), and the page's phonemes, heatmaps and n-best lists against
# `attend g2p --no-lexicon --model` of the same file
tf=$out/transformer
rm -rf "$tf"
mkdir -p "$tf"
"$cli" --threads 1 g2p train --dict "$lex" --encoder transformer --decoder transformer --emb 16 --heads 2 \
    --hidden 32 --dec-hidden 32 --layers 1 --dec-layers 2 --epochs 12 --batch 32 --lr 0.003 --warmup 10 \
    --min-lr 0.0001 --clip 1 --seed 2 --out "$tf/g2p-tf.safetensors" >"$tf/train.log" 2>&1 ||
    { cat "$tf/train.log"; echo "FAIL: g2p train --encoder transformer --decoder transformer"; exit 1; }
grep '^model:' "$tf/train.log"
OBJ=$out MODEL=$tf/g2p-tf.safetensors LEXICON=none sh "$src/tools/wasm_build.sh" "$tf" ||
    { echo "FAIL: tools/wasm_build.sh with MODEL=$tf/g2p-tf.safetensors"; exit 1; }
exec /usr/bin/python3 "$src/tests/web/web_test.py" "$tf/attend-g2p.html" "$cli" --model "$tf/g2p-tf.safetensors"
