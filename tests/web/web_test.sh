#!/bin/sh
# web_test.sh SOURCE_DIR OUT_DIR ATTEND_CLI — builds the G2P page with
# tools/wasm_build.sh into OUT_DIR and checks it in headless Chromium
# (tests/web/web_test.py). Prints "SKIP: emcc not installed" (exit 0) when
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
exec /usr/bin/python3 "$src/tests/web/web_test.py" "$out/attend-g2p.html" "$cli" "$lex"
