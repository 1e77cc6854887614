#!/usr/bin/env bash
# Short fuzzing session over every fuzz target (fuzz/README.md):
#   tools/fuzz.sh [SECONDS] [TARGET ...]      (default: 60 s each, all targets)
# Builds build-fuzz/ with clang (-fsanitize=fuzzer,address,undefined), then
# runs each target for SECONDS from its committed corpus fuzz/corpus/<t>/ (read
# only) plus a scratch corpus build-fuzz/corpus/<t>/ (kept between sessions).
# Inputs that crash or break an invariant are written to build-fuzz/crashes/<t>/;
# add each one, after fixing the bug, to fuzz/corpus/<t>/ so the
# fuzz_regress_<t> ctest test replays it forever. Prints executions per target
# and exits non-zero if any target found something. Environment: FUZZ_JOBS
# (parallel fuzzing processes per target, default 1), FUZZ_ARGS (extra
# libFuzzer flags).
set -u
cd "$(dirname "$0")/.."
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(safetensors model checkpoint tsv args json dict)
command -v clang >/dev/null || { echo "tools/fuzz.sh: clang is needed (apt-get install clang)" >&2; exit 2; }
dir=build-fuzz
san="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -Wno-pass-failed"
if ! cmake -S . -B "$dir" -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DATTEND_BLAS=OFF \
     -DATTEND_WERROR=ON -DATTEND_FUZZ=ON "-DCMAKE_C_FLAGS=$san" >"$dir.configure.log" 2>&1; then
  cat "$dir.configure.log"; exit 2
fi
for t in "${targets[@]}"; do
  if ! cmake --build "$dir" --target "fuzz_$t" -j"$(nproc)" >"$dir.build.log" 2>&1; then
    cat "$dir.build.log"; exit 2
  fi
done
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
printf '%-12s %8s %12s %10s %s\n' target seconds executions exec/s result
for t in "${targets[@]}"; do
  mkdir -p "$dir/corpus/$t" "$dir/crashes/$t"
  dict=()
  [ -f "fuzz/$t.dict" ] && dict=(-dict="fuzz/$t.dict")
  log="$dir/fuzz_$t.log"
  # shellcheck disable=SC2086
  "$dir/fuzz/fuzz_$t" -max_total_time="$secs" -print_final_stats=1 -timeout=10 -rss_limit_mb=4096 \
      -malloc_limit_mb=2048 -artifact_prefix="$dir/crashes/$t/" ${FUZZ_JOBS:+-jobs=$FUZZ_JOBS -workers=$FUZZ_JOBS} \
      "${dict[@]}" ${FUZZ_ARGS:-} "$dir/corpus/$t" "fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  execs=$(grep -h 'stat::number_of_executed_units' "$log" fuzz-*.log 2>/dev/null | awk '{s += $2} END {print s + 0}')
  rm -f fuzz-*.log
  crashes=$(find "$dir/crashes/$t" -type f | wc -l)
  result=ok
  if [ "$rc" -ne 0 ] || [ "$crashes" -gt 0 ]; then
    result="FOUND: $crashes input(s) in $dir/crashes/$t/, log $log"; status=1
  fi
  printf '%-12s %8s %12s %10s %s\n' "$t" "$secs" "$execs" "$((execs / (secs > 0 ? secs : 1)))" "$result"
done
exit $status
