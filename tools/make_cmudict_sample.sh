#!/bin/sh
# make_cmudict_sample.sh — the committed test samples of a CMUdict file: every
# word whose first-appearance index (0-based, alternates "word(N)" joining their
# word) is a multiple of 37, with all its lines, in file order, after three
# ";;;" comment lines naming where the dictionary came from (SOURCE).
#
#   sh tools/make_cmudict_sample.sh data/g2p/cmudict-en-us.dict \
#       'Debian package pocketsphinx-en-us 0.8+5prealpha+1-15 (no stress marks)' > data/g2p/cmudict-sample.dict
#   sh tools/make_cmudict_sample.sh data/g2p/cmudict-stress.dict \
#       'npm package cmu-pronouncing-dictionary 3.0.0 (stress marks kept)' > data/g2p/cmudict-stress-sample.dict
#
# The first reproduces the committed sample byte for byte.
set -eu
[ $# -eq 2 ] || { echo "usage: sh tools/make_cmudict_sample.sh DICT SOURCE > SAMPLE" >&2; exit 2; }
echo ";;; A sample of the CMU Pronouncing Dictionary: every word whose first-appearance index is a multiple of 37,"
echo ";;; with all its pronunciations, from $2."
echo ";;; Copyright 1995-2014 Carnegie Mellon University; BSD-2 licence: see LICENSE-cmudict.txt."
awk '{
    w = $1; sub(/\([0-9]+\)$/, "", w)
    if (!(w in idx)) idx[w] = n++
    if (idx[w] % 37 == 0) print
}' "$1"
