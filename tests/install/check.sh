#!/bin/sh
# Installs the build tree into a scratch prefix and builds tests/install/consumer.c
# against it with pkg-config only, as a user of the installed library would.
# usage: check.sh BUILD_DIR SOURCE_DIR C_COMPILER
set -eu
build=$1 src=$2 cc=$3
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pcdir=$(dirname "$(find "$prefix" -name attend.pc | head -n 1)")
test -f "$prefix/include/attend.h"
test -x "$prefix/bin/attend"
flags=$(PKG_CONFIG_PATH="$pcdir" pkg-config --cflags --libs --static attend)
# shellcheck disable=SC2086
"$cc" -std=c11 -o "$prefix/consumer" "$src/tests/install/consumer.c" $flags $CONSUMER_EXTRA_FLAGS
"$prefix/consumer"
