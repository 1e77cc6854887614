#!/bin/sh
# symbols.sh LIBRARY... — the global symbols a program sees (ctest library_symbols):
# every global symbol each library defines (libattend.a: nm -g --defined-only;
# libattend.so: the dynamic table, nm -D --defined-only) must start with
# attend_, so nothing of the library can clash with a program's own names in a
# static or a dynamic link. Fails naming the others; prints the counts.
# $NM names nm (default: nm).
set -eu
nm=${NM:-nm}
[ $# -gt 0 ] || { echo "usage: symbols.sh LIBRARY..."; exit 2; }
status=0
for lib in "$@"; do
    [ -f "$lib" ] || { echo "FAIL: no $lib"; status=1; continue; }
    case $lib in
    *.a) syms=$("$nm" -g --defined-only "$lib") ;;
    *) syms=$("$nm" -D --defined-only "$lib") ;;
    esac
    # "ADDRESS TYPE NAME" lines; archive member headers ("x.o:") and blank lines have no type
    names=$(printf '%s\n' "$syms" | awk 'NF == 3 { print $3 }')
    n=$(printf '%s\n' "$names" | grep -c '^attend_' || true)
    others=$(printf '%s\n' "$names" | grep -v '^attend_' | grep -v '^$' || true)
    if [ -n "$others" ]; then
        echo "FAIL: $lib: $(printf '%s\n' "$others" | wc -l) global symbols outside attend_*, e.g.:"
        printf '%s\n' "$others" | head -n 20 | sed 's/^/    /'
        status=1
    elif [ "$n" -lt 100 ]; then
        echo "FAIL: $lib: only $n attend_* symbols (the public API has more)"
        status=1
    else
        echo "$lib: $n global symbols, all attend_*"
    fi
done
exit $status
