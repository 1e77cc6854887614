#!/bin/sh
# render_chromium.sh RENDER_PAGE — opens the HTML heatmap in headless Chromium
# with "#t=2" in the URL and checks that the page's #selected element shows
# step 2's weights (tests/render_page.c holds the alignment). Prints
# "SKIP: chromium not installed" and exits 0 when no browser is found
# (set CHROMIUM=/path/to/chromium to choose one).
set -u
helper=$1
browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
    for b in chromium chromium-browser google-chrome; do
        if command -v "$b" >/dev/null 2>&1; then browser=$(command -v "$b"); break; fi
    done
fi
if [ -z "$browser" ]; then
    echo "SKIP: chromium not installed"
    exit 0
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/attend-render.XXXXXX") || exit 1
profile=$(mktemp -d "${TMPDIR:-/tmp}/attend-chromium.XXXXXX") || exit 1
trap 'rm -rf "$dir" "$profile"' EXIT
"$helper" "$dir" || { echo "FAIL: $helper could not write the page"; exit 1; }
expected="t=2 w=0.020000 0.700000 0.150000 0.050000 0.080000"
# The browser has a minute; chromium prints harmless warnings on stderr.
timeout 60 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync \
    --user-data-dir="$profile" --virtual-time-budget=2000 \
    --dump-dom "file://$dir/page.html#t=2" >"$dir/dom.html" 2>"$dir/chromium.log"
rc=$?
if [ $rc -ne 0 ]; then
    echo "FAIL: $browser exited with $rc"
    tail -n 20 "$dir/chromium.log"
    exit 1
fi
got=$(sed -n 's/.*id="selected">\([^<]*\)<.*/\1/p' "$dir/dom.html" | head -n 1)
echo "browser:  $("$browser" --version 2>/dev/null | tail -n 1)"
echo "expected: $expected"
echo "#selected: $got"
if [ "$got" != "$expected" ]; then
    echo "FAIL: #selected does not show step 2's weights"
    exit 1
fi
# the highlighted source tokens and the pressed output token are in the DOM too
if ! grep -q 'data-t="2" aria-pressed="true"' "$dir/dom.html"; then
    echo "FAIL: output token 2 is not marked as selected"
    exit 1
fi
if ! grep -q '&lt;black&gt;' "$dir/dom.html"; then
    echo "FAIL: the escaped token <black> is missing from the DOM"
    exit 1
fi
echo "PASS: #t=2 selects step 2"
