#!/bin/sh
# Installs the build tree into a scratch prefix and builds tests/install/consumer.c
# against it as a user of the installed library would.
# usage: check.sh BUILD_DIR SOURCE_DIR C_COMPILER [pkgconfig|cmake]
#   pkgconfig (default): with pkg-config only, once against libattend.so
#       (attend.pc; found through the rpath the program is linked with) and
#       once against libattend.a (attend-static.pc, --static: no libattend.so
#       needed at run time, though it is installed beside it); also checks the
#       shared library: soname libattend.so.0, and only attend_* symbols
#       exported (nm -D), and that attend.pc's --libs name nothing but attend.
#   cmake: tests/install/cmake/CMakeLists.txt, find_package(attend 0.1) with
#       attend::attend and attend::attend_static; find_package(attend 1.0)
#       must fail (the version file).
set -eu
build=$1 src=$2 cc=$3 mode=${4:-pkgconfig}
extra=${CONSUMER_EXTRA_FLAGS:-}
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
test -f "$prefix/include/attend.h"
test -x "$prefix/bin/attend"
pc=$(find "$prefix" -name attend.pc | head -n 1)
libdir=$(dirname "$(dirname "$pc")")
test -f "$libdir/libattend.a"
fail() { echo "FAIL: $*"; exit 1; }
needs_attend() { readelf -d "$1" | grep -q 'NEEDED.*\[libattend\.so\.0\]'; }

case $mode in
pkgconfig)
  pcdir=$(dirname "$pc")
  cflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags attend)
  # the shared library (ATTEND_EXPECT_SHARED=1: the build made one, see
  # cmake/shared.cmake): versioned names, soname, exported symbols, a program
  if [ "${ATTEND_EXPECT_SHARED:-0}" = 1 ] || [ -e "$libdir/libattend.so" ]; then
    test -L "$libdir/libattend.so" || fail "no libattend.so link in $libdir"
    test -L "$libdir/libattend.so.0" || fail "no libattend.so.0 link in $libdir"
    real=$(readlink -f "$libdir/libattend.so")
    case $real in */libattend.so.0.1.0) ;; *) fail "libattend.so points at $real";; esac
    readelf -d "$real" | grep -q 'SONAME.*\[libattend\.so\.0\]' || fail "soname is not libattend.so.0"
    n=$(nm -D --defined-only "$real" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -c '^attend_' || true)
    others=$(nm -D --defined-only "$real" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^attend_' || true)
    [ -z "$others" ] || fail "libattend.so exports non-public symbols: $(echo $others | head -c 400)"
    [ "$n" -ge 100 ] || fail "libattend.so exports only $n attend_* symbols"
    echo "libattend.so: soname libattend.so.0, $n symbols exported, all attend_*"
    libs=$(PKG_CONFIG_PATH="$pcdir" pkg-config --libs attend)
    # shellcheck disable=SC2086
    "$cc" -std=c11 -o "$prefix/consumer_shared" "$src/tests/install/consumer.c" $cflags $libs \
        -Wl,-rpath,"$libdir" $extra
    needs_attend "$prefix/consumer_shared" || fail "consumer_shared does not load libattend.so.0"
    "$prefix/consumer_shared"
  else
    echo "libattend.so: not built (ATTEND_SHARED=OFF): the static library only"
  fi
    # OpenBLAS and the threads library are private to attend: a program linking the .so names only attend
    case " $(PKG_CONFIG_PATH="$pcdir" pkg-config --libs attend) " in
    *openblas*|*pthread*) fail "attend.pc's --libs name what libattend.so links privately" ;;
    esac
    # static: attend-static.pc names libattend.a by its path (libattend.so sits beside it)
    sflags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --static --cflags --libs attend-static)
    # shellcheck disable=SC2086
    "$cc" -std=c11 -o "$prefix/consumer_static" "$src/tests/install/consumer.c" $sflags $extra
    # a program with functions named like attend's internal helpers links too (only attend_* is global)
    printf 'int at_gemm(void);\nint at_gemm(void) { return 0; }\nint at_weights_edit = 1;\n' >"$prefix/clash.c"
    # shellcheck disable=SC2086
    "$cc" -std=c11 -o "$prefix/consumer_clash" "$src/tests/install/consumer.c" "$prefix/clash.c" $sflags $extra ||
        fail "a program defining at_gemm clashes with libattend.a"
    needs_attend "$prefix/consumer_static" && fail "consumer_static loads libattend.so.0"
    "$prefix/consumer_static"
    ;;
cmake)
    test -f "$libdir/cmake/attend/attendConfig.cmake" || fail "no attendConfig.cmake"
    test -f "$libdir/cmake/attend/attendConfigVersion.cmake" || fail "no attendConfigVersion.cmake"
    b="$prefix/consumer-build"
    CFLAGS="$extra" LDFLAGS="$extra" cmake -S "$src/tests/install/cmake" -B "$b" -DCMAKE_C_COMPILER="$cc" \
        -DCMAKE_PREFIX_PATH="$prefix" >"$prefix/cmake.log" 2>&1 || { cat "$prefix/cmake.log"; fail "configure"; }
    cmake --build "$b" >"$prefix/build.log" 2>&1 || { cat "$prefix/build.log"; fail "build"; }
    needs_attend "$b/consumer_shared" || fail "attend::attend does not link libattend.so.0"
    needs_attend "$b/consumer_static" && fail "attend::attend_static links libattend.so.0"
    "$b/consumer_shared"
    "$b/consumer_static"
    # a version the package does not provide is refused
    mkdir "$prefix/v1"
    printf 'cmake_minimum_required(VERSION 3.16)\nproject(v LANGUAGES C)\nfind_package(attend 1.0 REQUIRED)\n' \
        >"$prefix/v1/CMakeLists.txt"
    if cmake -S "$prefix/v1" -B "$prefix/v1/b" -DCMAKE_PREFIX_PATH="$prefix" >"$prefix/v1.log" 2>&1; then
        fail "find_package(attend 1.0) accepted version 0.1.0"
    fi
    grep -q 'attendConfigVersion.cmake' "$prefix/v1.log" || grep -q '0.1.0' "$prefix/v1.log" ||
        { cat "$prefix/v1.log"; fail "find_package(attend 1.0) failed for another reason"; }
    echo "find_package(attend 0.1): attend::attend (shared) and attend::attend_static (static) ok; 1.0 refused"
    # The Python package, installed as `cmake --install build --prefix ~/.local`
    # installs it: PYTHONUSERBASE makes the scratch prefix the user base, so
    # Debian's python3 finds it as it finds ~/.local, and the package must load
    # the installed libattend.so.0 and G2P model with no LD_LIBRARY_PATH. (Not
    # in sanitizer builds: their library cannot load into an unsanitized python.)
    if [ -z "$extra" ] && [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import numpy' 2>/dev/null; then
        env -u LD_LIBRARY_PATH -u PYTHONPATH -u ATTEND_LIBRARY -u ATTEND_G2P_MODEL PYTHONUSERBASE="$prefix" \
            /usr/bin/python3 -c '
import os, sys, attend, attend.g2p
prefix = os.path.realpath(sys.argv[1])
lib = os.path.realpath(attend._lib.lib._name)
assert lib.startswith(prefix + "/"), lib
assert os.path.realpath(attend.__file__).startswith(prefix + "/"), attend.__file__
assert os.path.realpath(attend.g2p.default_model_path()).startswith(prefix + "/share/attend/")
word = attend.g2p.pronounce("hello")
assert word == "HH EH L OW", word
print("python: attend %s from %s, library %s: hello %s" % (attend.version(), os.path.dirname(attend.__file__), lib, word))
' "$prefix" || fail "the installed Python package"
    else
        echo "python: not checked (sanitizer build, or no /usr/bin/python3 with numpy)"
    fi
    ;;
*) fail "unknown mode $mode";;
esac
