#!/bin/sh
# get_cmudict.sh — fetch the CMU Pronouncing Dictionary the way Debian ships it
# (package pocketsphinx-en-us, BSD-2 licence) without installing anything:
# apt-get download + dpkg -x, then copy the dictionary and its licence notice.
#
#   sh tools/get_cmudict.sh [DEST_DIR]      (default: data/g2p under the source tree)
#
# Writes DEST_DIR/cmudict-en-us.dict (134 723 lines "word PH1 PH2 ...", no stress
# marks, alternates as "word(2)") and DEST_DIR/cmudict-en-us.copyright. Needs
# apt-get and dpkg-deb (any Debian or Ubuntu); a machine without them can copy
# /usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict from one that has them,
# or pass any CMUdict file to `attend g2p ... --dict PATH`.
set -eu
here=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:-$here/data/g2p}
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"
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
