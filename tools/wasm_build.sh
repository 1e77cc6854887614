#!/bin/sh
# wasm_build.sh — builds the G2P page: the library (src/, portable GEMM, no
# threads, WebAssembly SIMD) and web/g2p_web.c compiled to WebAssembly with Emscripten (Debian's
# `emscripten` package), the shipped model models/g2p-cmudict.safetensors
# embedded in the module, and the module inlined into web/index.html: one
# self-contained file that needs no server and no network.
#
# usage: sh tools/wasm_build.sh [OUT_DIR]      (default: build-wasm)
# writes OUT_DIR/attend-g2p.html (open it in a browser: file:// works) and
# prints its size. LEXICON=FILE embeds a CMUdict-format lexicon the page looks
# words up in before the model (default: data/g2p/cmudict-en-us.dict when
# tools/get_cmudict.sh fetched it; LEXICON=none: no lexicon). MODEL=FILE embeds
# another G2P model (any encoder/decoder kind `attend g2p` loads, e.g. the
# transformer of tools/g2p_transformer.sh; default models/g2p-cmudict.safetensors).
# OBJ=DIR links the objects an earlier run of this script left in DIR/obj
# instead of compiling (the same sources: tests/web/web_test.sh builds a
# second page so). EMCC=/path/to/emcc chooses the compiler; JOBS=N the
# parallel compiles (default: nproc).
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$src/build-wasm}
emcc=${EMCC:-emcc}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
if ! command -v "$emcc" >/dev/null 2>&1; then
    echo "wasm_build.sh: $emcc not found (apt-get install emscripten)" >&2
    exit 2
fi
# Debian's emscripten runs its JavaScript optimizer with node; Debian keeps
# node's packages (acorn) in /usr/share/nodejs, which a node from elsewhere
# does not search by itself.
export NODE_PATH=/usr/share/nodejs${NODE_PATH:+:$NODE_PATH}
model=${MODEL:-$src/models/g2p-cmudict.safetensors}
if [ ! -f "$model" ]; then
    echo "wasm_build.sh: no model '$model' (MODEL)" >&2
    exit 2
fi
mkdir -p "$out/obj"
# the same warnings and SIMD flags as the native build (CMakeLists.txt:
# `#pragma omp simd` loops, no errno from sqrtf, no FMA contraction), -O2, never
# -ffast-math; -msimd128: WebAssembly SIMD (every current browser; measured by
# tests/web: about half the per-word time of a build without it).
# -Wno-pass-failed: a pragma'd loop clang cannot vectorize is a remark, not an
# error (as in the native clang build). WASM_EXTRA_CFLAGS adds flags.
cflags="-std=c11 -O2 -msimd128 -fopenmp-simd -fno-math-errno -ffp-contract=off -Wno-pass-failed ${WASM_EXTRA_CFLAGS:-} -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror -DATTEND_NO_DEPRECATION_WARNINGS -I$src/include"
for d in $(find "$src/src" -type d | sort); do cflags="$cflags -I$d"; done
# compile every library file under src/ and the page's C side, in parallel
# (always all of them: about 40 s on 2 cores), then link
rm -f "$out/obj/"*.o
if [ -n "${OBJ:-}" ]; then
    ls "$OBJ"/obj/*.o >/dev/null 2>&1 || { echo "wasm_build.sh: no objects in $OBJ/obj (OBJ)" >&2; exit 2; }
    cp "$OBJ"/obj/*.o "$out/obj/"
else
    { find "$src/src" -name '*.c' | sort; echo "$src/web/g2p_web.c"; } >"$out/obj/sources.list"
    xargs -P "$jobs" -I{} sh -c '
        f={}; o="$1/obj/$(echo "${f#$3/}" | tr / _ | sed "s/\.c\$//").o"
        # shellcheck disable=SC2086
        "$2" $4 -c "$f" -o "$o" || exit 255' sh "$out" "$emcc" "$src" "$cflags" <"$out/obj/sources.list"
fi
funcs='["_g2p_web_init","_g2p_web_pronounce","_g2p_web_error","_g2p_web_trained_letters","_g2p_web_letters",'
funcs=$funcs'"_g2p_web_length","_g2p_web_phonemes","_g2p_web_phoneme","_g2p_web_score","_g2p_web_alignment",'
funcs=$funcs'"_g2p_web_lexicon","_g2p_web_lookup","_g2p_web_from_lexicon"]'
# the lexicon the page looks words up in first (issue 29): $LEXICON, else the
# whole CMUdict when tools/get_cmudict.sh fetched it, else none (LEXICON=none:
# none; the page then runs the model on every word)
lexicon=${LEXICON:-$src/data/g2p/cmudict-en-us.dict}
embed_lexicon=
if [ "$lexicon" != none ] && [ -f "$lexicon" ]; then
    embed_lexicon="--embed-file $lexicon@/lexicon.dict"
elif [ "$lexicon" != none ] && [ -n "${LEXICON:-}" ]; then
    echo "wasm_build.sh: no lexicon '$lexicon' (LEXICON)" >&2
    exit 2
fi
# shellcheck disable=SC2086
"$emcc" -O2 "$out"/obj/*.o -o "$out/g2p.js" \
    -sMODULARIZE=1 -sEXPORT_NAME=createAttendG2P -sENVIRONMENT=web -sSINGLE_FILE=1 \
    -sALLOW_MEMORY_GROWTH=1 -sFILESYSTEM=1 -sEXPORTED_FUNCTIONS="$funcs" \
    -sEXPORTED_RUNTIME_METHODS='["cwrap","UTF8ToString","HEAPF32"]' \
    --embed-file "$model@/g2p.safetensors" $embed_lexicon
# the page: web/index.html with the module in place of its marker line
marker='<!-- attend-g2p-module -->'
page="$out/attend-g2p.html"
grep -q "^$marker\$" "$src/web/index.html"
{
    sed "/^$marker\$/,\$d" "$src/web/index.html"
    printf '<script>\n'
    cat "$out/g2p.js"
    printf '\n</script>\n'
    sed "1,/^$marker\$/d" "$src/web/index.html"
} >"$page.tmp"
mv "$page.tmp" "$page"
[ -n "$embed_lexicon" ] || lexicon=none
echo "wasm_build.sh: wrote $page ($(wc -c <"$page") bytes; model: $model; lexicon: $lexicon)"
