#!/bin/sh
# pointer_perm_test.sh — pointer models that decode permutations (issue 13,
# part 6), end to end:
#
#   sh tests/cli/pointer_perm_test.sh CASE ATTEND WORK_DIR
#
#   perm     `attend train --task sort` masks chosen positions by default: greedy
#            and --beam outputs (n-best too) are permutations over many inputs,
#            badcab included; --beam 1 prints what greedy prints; `attend align
#            --beam` shows each hypothesis; --help names --pointer-repeat
#   repeat   --pointer-repeat trains a model without the mask: its file has no
#            "pointer_exclude" key
#   old      a pointer model saved before the setting existed
#            (tests/cli/pointer_old.safetensors, written by bca08d0's
#            `attend train --task sort --symbols 6 --min-len 2 --max-len 6
#            --count 300 --dev-count 20 --steps 30 --emb 8 --hidden 8
#            --dec-hidden 16 --attn 8`) decodes byte for byte as bca08d0 did
#            (pointer_old_decode.tsv: `attend decode --align --align-format tsv
#            pointer_old_in.txt` there), repeats included
set -u
CASE=$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
WORK=$(abs "$WORK")
FIX=$(abs "$(dirname "$0")")
D=$WORK/$CASE
rm -rf "$D"
mkdir -p "$D"
cd "$D" || exit 1
PASSED=0
SMALL="--symbols 6 --min-len 2 --max-len 6 --count 500 --dev-count 50"

# perm_lines FILE FIELD: every line's FIELD (tab-separated) is a permutation of 0..n-1
perm_lines() {
    awk -F '\t' -v f="$2" '{ n = split($f, p, " "); delete seen
        for (i = 1; i <= n; i++) { if (p[i] !~ /^[0-9]+$/ || p[i] >= n || seen[p[i]]++) { print "line " NR ": " $0; exit 1 } } }' "$1"
}

case $CASE in
perm)
    run 0 "$A" train --help
    has out "--pointer-repeat"
    # shellcheck disable=SC2086
    run 0 "$A" train --task sort $SMALL --steps 60 --out sort.safetensors
    has out "pointer decoder"
    # many inputs: badcab, then 300 from a fixed LCG over a..f, lengths 1..6
    awk 'BEGIN { print "badcab"; r = 7; for (i = 0; i < 300; i++) { r = (r * 1103515245 + 12345) % 2147483648
         n = 1 + int(r / 65536) % 6; s = ""; for (j = 0; j < n; j++) { r = (r * 1103515245 + 12345) % 2147483648
         s = s substr("abcdef", 1 + int(r / 65536) % 6, 1) } print s } }' >in
    run 0 "$A" decode sort.safetensors in
    cp out greedy
    [ "$(wc -l <greedy)" -eq 301 ] || fail "expected 301 lines"
    perm_lines greedy 1 >bad || fail "greedy repeats a position: $(cat bad)"
    ok "greedy: 301 permutations, badcab's: $(head -n 1 greedy)"
    run 0 "$A" decode sort.safetensors --beam 1 in
    cmp -s out greedy || fail "--beam 1 differs from greedy"
    ok "--beam 1 = greedy"
    run 0 "$A" decode sort.safetensors --beam 4 --nbest 3 in
    perm_lines out 2 >bad || fail "a beam hypothesis repeats a position: $(cat bad)"
    at_least "$(wc -l <out)" 700
    ok "--beam 4 --nbest 3: $(wc -l <out) hypotheses, all permutations"
    run 0 "$A" align sort.safetensors badcab --beam 3 --nbest 2
    has out "^beam 3, 2 of 2 hypotheses"
    [ "$(grep -c '^score ' out)" -eq 2 ] || fail "expected 2 scored hypotheses"
    ok "align --beam 3 --nbest 2"
    ;;
repeat)
    # shellcheck disable=SC2086
    run 0 "$A" train --task sort $SMALL --steps 5 --pointer-repeat --out rep.safetensors
    ! grep -q pointer_exclude rep.safetensors || fail "a --pointer-repeat file names pointer_exclude"
    # shellcheck disable=SC2086
    run 0 "$A" train --task sort $SMALL --steps 5 --out ex.safetensors
    grep -q pointer_exclude ex.safetensors || fail "the default sort model's file lacks pointer_exclude"
    ok "--pointer-repeat: no key; default: the key"
    run 2 "$A" train --task copy --pointer-repeat --steps 1 --out x.safetensors
    has err "--pointer-repeat applies to --task sort"
    ok "--pointer-repeat without --task sort is refused"
    ;;
old)
    run 0 "$A" decode "$FIX/pointer_old.safetensors" --align --align-format tsv "$FIX/pointer_old_in.txt"
    cmp -s out "$FIX/pointer_old_decode.tsv" || fail "the old pointer model decodes differently"
    grep -q '^1 1 2 2 2 2	' out || fail "the old model's badcab repeat is gone"
    ok "old pointer file: byte-identical decode (repeats kept)"
    ;;
*)
    echo "unknown case $CASE" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
