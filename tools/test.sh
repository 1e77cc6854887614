#!/usr/bin/env bash
# Builds and runs every test, in each build configuration CI checks:
#   build/          OpenBLAS GEMM, -Werror
#   build-portable/ portable GEMM fallback (no BLAS), -Werror
#   build-asan/     portable GEMM with AddressSanitizer + UndefinedBehaviorSanitizer
# Prints ctest's summary per configuration and, last, one line
# "total: N passed, N failed". Exits non-zero if any test failed.
# Usage: bash tools/test.sh [config ...]   (default: all three)
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(openblas portable asan)

passed=0
failed=0
status=0
for config in "${configs[@]}"; do
  case "$config" in
    openblas) dir=build;          flags=(-DATTEND_BLAS=ON  -DATTEND_WERROR=ON) ;;
    portable) dir=build-portable; flags=(-DATTEND_BLAS=OFF -DATTEND_WERROR=ON) ;;
    asan)     dir=build-asan;     flags=(-DATTEND_BLAS=OFF -DATTEND_WERROR=ON -DATTEND_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    *) echo "tools/test.sh: unknown configuration '$config' (openblas, portable, asan)" >&2; exit 2 ;;
  esac
  echo "=== $config ($dir) ==="
  if ! cmake -S . -B "$dir" "${flags[@]}" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"; echo "$config: configure failed"; failed=$((failed + 1)); status=1; continue
  fi
  if ! cmake --build "$dir" -j"$jobs" >"$dir.build.log" 2>&1; then
    cat "$dir.build.log"; echo "$config: build failed"; failed=$((failed + 1)); status=1; continue
  fi
  log="$dir.ctest.log"
  ctest --test-dir "$dir" --output-on-failure -j"$jobs" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || status=1
  # ctest: "100% tests passed, 0 tests failed out of 12"
  line=$(grep -E 'tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -n 1)
  if [ -n "$line" ]; then
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/')
    t=$(echo "$line" | sed -E 's/.* failed out of ([0-9]+).*/\1/')
    passed=$((passed + t - f)); failed=$((failed + f))
  else
    echo "$config: ctest printed no summary"; failed=$((failed + 1)); status=1
  fi
  rm -f "$dir.configure.log" "$dir.build.log"
done
echo "total: $passed passed, $failed failed"
exit $status
