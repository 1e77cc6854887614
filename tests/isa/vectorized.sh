#!/bin/sh
# Fails when a hot kernel's vector code silently disappears: disassembles the
# library and requires, in every kernel written with AT_KERNEL (src/core/isa.h),
# at least one ymm instruction in its AVX2 copy (NAME_isa_avx2) and one zmm
# instruction in its AVX-512 copy (NAME_isa_avx512). The copies are found in
# the symbol table (a kernel added later is checked without an edit here);
# the kernels named on the command line must also exist, so a hot loop moved
# off AT_KERNEL is caught. Prints a table: kernel, ymm count, zmm count.
#
# The zmm requirement is for gcc, the compiler of CI's build/ and
# build-portable/: clang 14 prefers 256-bit vectors even at x86-64-v4, so with
# --any-width the AVX-512 copy may hold ymm or zmm (still EVEX code).
#
# Usage: vectorized.sh [--any-width] OBJDUMP LIBRARY KERNEL...
# Exits 0 (all vectorized), 1 (a copy without vectors, or a kernel missing),
# 77 (nothing to check: no dispatch on this architecture).
set -u
width=strict
if [ "${1:-}" = "--any-width" ]; then width=any; shift; fi
objdump=$1 lib=$2
shift 2
dis=$(mktemp) || exit 1
trap 'rm -f "$dis"' EXIT
"$objdump" -d --no-show-raw-insn "$lib" >"$dis" || { echo "vectorized: $objdump -d $lib failed"; exit 1; }

# one line per copy: "kernel level ymm zmm" (a copy gcc split into
# NAME.part.0 / .isra.0 / .constprop.0 pieces counts as one)
table=$(awk '
/^[0-9a-f]+ <[^>]*>:$/ {
    name = $2; sub(/^</, "", name); sub(/>:$/, "", name); sub(/\..*$/, "", name)
    cur = ""
    if (name ~ /_isa_avx2$/) { k = name; sub(/_isa_avx2$/, "", k); cur = k " avx2" }
    else if (name ~ /_isa_avx512$/) { k = name; sub(/_isa_avx512$/, "", k); cur = k " avx512" }
    if (cur != "" && !(cur in seen)) { seen[cur] = 1; order[n++] = cur }
    next
}
cur != "" && /%ymm/ { ymm[cur]++ }
cur != "" && /%zmm/ { zmm[cur]++ }
END { for (i = 0; i < n; i++) print order[i], ymm[order[i]] + 0, zmm[order[i]] + 0 }
' "$dis")

if [ -z "$table" ]; then
    case $(uname -m) in
    x86_64 | amd64) echo "vectorized: no *_isa_avx2 / *_isa_avx512 copies in $lib (built without dispatch?)"; exit 1 ;;
    *) echo "vectorized: no per-ISA copies on $(uname -m): nothing to check"; exit 77 ;;
    esac
fi

fail=0
printf '%-28s %-7s %5s %5s  %s\n' kernel copy ymm zmm verdict
echo "$table" | sort | while read -r k level y z; do
    verdict=ok
    if [ "$level" = avx2 ] && [ "$y" -eq 0 ]; then verdict="FAIL: AVX2 copy without a ymm instruction"; fi
    if [ "$level" = avx512 ]; then
        if [ "$width" = strict ] && [ "$z" -eq 0 ]; then verdict="FAIL: AVX-512 copy without a zmm instruction"; fi
        if [ "$width" = any ] && [ "$z" -eq 0 ] && [ "$y" -eq 0 ]; then verdict="FAIL: AVX-512 copy without vector code"; fi
    fi
    printf '%-28s %-7s %5d %5d  %s\n' "$k" "$level" "$y" "$z" "$verdict"
done
bad=$(echo "$table" | awk -v w="$width" '($2 == "avx2" && $3 == 0) || ($2 == "avx512" && $4 == 0 && (w == "strict" || $3 == 0)) {print $1 "_isa_" $2}')
if [ -n "$bad" ]; then
    echo "vectorized: no vector instruction in: $(echo $bad)"
    fail=1
fi
for k in "$@"; do
    for level in avx2 avx512; do
        if ! echo "$table" | grep -q "^$k $level "; then
            echo "vectorized: required kernel $k has no ${k}_isa_$level copy (moved off AT_KERNEL?)"
            fail=1
        fi
    done
done
n=$(echo "$table" | wc -l)
[ "$fail" -eq 0 ] && echo "vectorized: all $n copies hold vector code"
exit "$fail"
