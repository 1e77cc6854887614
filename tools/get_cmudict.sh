#!/bin/sh
# get_cmudict.sh — fetch the CMU Pronouncing Dictionary the way Debian ships it
# (package pocketsphinx-en-us, BSD-2 licence) without installing anything:
# apt-get download + dpkg -x, then copy the dictionary and its licence notice.
#
#   sh tools/get_cmudict.sh [DEST_DIR]      (default: data/g2p under the source tree)
#   sh tools/get_cmudict.sh --stress [DEST_DIR]
#
# Writes DEST_DIR/cmudict-en-us.dict (134 723 lines "word PH1 PH2 ...", no stress
# marks, alternates as "word(2)") and DEST_DIR/cmudict-en-us.copyright. Needs
# apt-get and dpkg-deb (any Debian or Ubuntu); a machine without them can copy
# /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict from one that has them,
# or pass any CMUdict file to `attend g2p ... --dict PATH`.
#
# Debian's copy has no stress digits. --stress fetches CMUdict with them (AH0,
# AH1, AH2: what `attend g2p train --keep-stress` learns) from the npm registry:
# the package cmu-pronouncing-dictionary 3.0.0 (ISC) holds the cmusphinx
# CMUdict (BSD-2) as one JavaScript object, {"word": "PH1 PH2 ...", ...}. It is
# fetched with `npm pack` (nothing is installed) and written as
# DEST_DIR/cmudict-stress.dict in the dictionary's own format (135 155 lines,
# 126 046 words; "# place, danish"-style comments kept, which the parser drops),
# with the package's licence beside it.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
stress=0
if [ "${1:-}" = "--stress" ]; then stress=1; shift; fi
dest=${1:-$here/data/g2p}
mkdir -p "$dest"
dest=$(cd "$dest" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"
if [ "$stress" = 1 ]; then
    npm pack --silent cmu-pronouncing-dictionary@3.0.0 >/dev/null 2>&1 || {
        echo "get_cmudict.sh: 'npm pack cmu-pronouncing-dictionary@3.0.0' failed (npm installed? registry reachable?)" >&2
        exit 1
    }
    tar xzf cmu-pronouncing-dictionary-3.0.0.tgz
    # one entry per line: '  "word": "PH1 PH2 ...",' -> 'word PH1 PH2 ...'
    sed -n 's/^  "\([^"\\]*\)": "\([^"\\]*\)",\{0,1\}$/\1 \2/p' package/index.js > cmudict-stress.dict
    n=$(wc -l < cmudict-stress.dict)
    [ "$n" -gt 100000 ] || { echo "get_cmudict.sh: only $n entries found in the package's index.js" >&2; exit 1; }
    cp cmudict-stress.dict "$dest/cmudict-stress.dict"
    { echo "CMUdict with stress, from the npm package cmu-pronouncing-dictionary 3.0.0"
      echo "(the cmusphinx CMU Pronouncing Dictionary, BSD-2: see LICENSE-cmudict.txt);"
      echo "the package's own licence:"; echo; cat package/license; } > "$dest/cmudict-stress.copyright"
    echo "$dest/cmudict-stress.dict: $n lines"
    exit 0
fi
apt-get download pocketsphinx-en-us >/dev/null 2>&1 || {
    echo "get_cmudict.sh: 'apt-get download pocketsphinx-en-us' failed (run 'apt-get update' first?)" >&2
    exit 1
}
dpkg -x pocketsphinx-en-us_*.deb x
src=x/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict
[ -f "$src" ] || { echo "get_cmudict.sh: $src not in the package" >&2; exit 1; }
cp "$src" "$dest/cmudict-en-us.dict"
cp x/usr/share/doc/pocketsphinx-en-us/copyright "$dest/cmudict-en-us.copyright"
echo "$dest/cmudict-en-us.dict: $(wc -l < "$dest/cmudict-en-us.dict") lines"
