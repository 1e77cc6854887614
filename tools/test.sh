#!/usr/bin/env bash
# Builds and runs every test, in each build configuration CI checks:
#   build/          the default build (attend's own GEMM, threads), -Werror: every
#                   test, the Python package, the web page and the doc test; its
#                   threads_check requires results byte-identical at 1 and 2
#                   threads (the other tests run at 1 thread: ctest runs two
#                   tests at once on the two cores)
#   build-openblas/ -DATTEND_BLAS=ON (OpenBLAS opt-in), -Werror: the tests of the
#                   products and the reference tests, run twice: with OpenBLAS
#                   doing the products, and with OPENBLAS_CORETYPE=Prescott
#                   (generic kernels, what an OpenBLAS older than the CPU runs),
#                   where the own GEMM must take over (test_gemm_backend)
#   build-asan/     clang, AddressSanitizer + UndefinedBehaviorSanitizer, -Werror
#   build-tsan/     gcc, ThreadSanitizer, -Werror: builds and runs only
#                   test_concurrent (one loaded model decoded from 8 threads, each
#                   with its own clone) and test_threads (the worker pool); any
#                   data race fails the run
#   build-mpi/      -DATTEND_MPI=ON, -Werror: builds the command and
#                   test_parallel and runs only those and the mpi tests
#                   (tests/cmake/mpi.cmake: mpirun -np 1/2/4, 4 oversubscribed)
#   valgrind        a fast subset (the file loaders, hostile files, faults, data
#                   and every fuzz corpus replay) of build/ under
#                   valgrind --error-exitcode=1 --leak-check=full: zero reports
# Prints ctest's summary per configuration and, last, one line
# "total: N passed, N failed". Exits non-zero if any test failed.
# Usage: bash tools/test.sh [config ...]   (default: default openblas asan tsan mpi valgrind)
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(default openblas asan tsan mpi valgrind)

passed=0
failed=0
status=0

# valgrind: each entry "name|command" runs from tests/ in build/
valgrind_subset() {
  local b=$1
  local -a cases=(
    "test_safetensors|$b/tests/test_safetensors"
    "test_hostile|$b/tests/test_hostile"
    "test_faults|$b/tests/test_faults"
    "test_data|$b/tests/test_data"
  )
  for t in safetensors model checkpoint tsv args json dict; do
    cases+=("fuzz_regress_$t|$b/fuzz/fuzz_regress_$t ../fuzz/corpus/$t")
  done
  printf '%s\n' "${cases[@]}"
}

run_valgrind() {
  local b=build
  if ! command -v valgrind >/dev/null; then
    echo "valgrind: not installed (apt-get install valgrind)"; failed=$((failed + 1)); status=1; return
  fi
  if [ ! -x "$b/tests/test_hostile" ]; then
    echo "valgrind: build the default configuration first"; failed=$((failed + 1)); status=1; return
  fi
  local log=build-valgrind.log n=0 bad=0
  : >"$log"
  while IFS='|' read -r name cmd; do
    n=$((n + 1))
    # shellcheck disable=SC2086
    if (cd tests && valgrind -q --error-exitcode=99 --leak-check=full ../$cmd) >>"$log" 2>&1; then
      echo "valgrind $name: ok"
    else
      echo "valgrind $name: FAILED (see $log)"; bad=$((bad + 1))
    fi
  done < <(valgrind_subset "$b")
  echo "valgrind: $((n - bad)) of $n passed"
  passed=$((passed + n - bad)); failed=$((failed + bad))
  [ "$bad" -eq 0 ] || status=1
}

for config in "${configs[@]}"; do
  cc=()
  targets=()   # empty: build everything
  only=""      # ctest -R filter; empty: every test
  case "$config" in
    default)  dir=build;          flags=(-DATTEND_BLAS=OFF -DATTEND_WERROR=ON) ;;
    openblas) dir=build-openblas; flags=(-DATTEND_BLAS=ON -DATTEND_WERROR=ON -DATTEND_SHARED=OFF)
              only='^(test_gemm.*|gemm_backend.*|gemm_bench_smoke|test_reference|test_model_ref|test_rnn_ref|test_quant|threads_check|test_threads|isa_check|cli_test_.*)$' ;;
    # -Wno-pass-failed: under the sanitizers clang cannot always honour
    # `#pragma omp simd`; that is an optimizer remark, not a defect in the code
    asan)     dir=build-asan;     cc=(clang)
              flags=(-DCMAKE_C_COMPILER=clang -DCMAKE_C_FLAGS=-Wno-pass-failed -DATTEND_BLAS=OFF -DATTEND_WERROR=ON
                     -DATTEND_SANITIZE=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    tsan)     dir=build-tsan;     cc=(gcc); targets=(--target test_concurrent test_threads); only='^(test_concurrent|test_threads)$'
              flags=(-DCMAKE_C_COMPILER=gcc "-DCMAKE_C_FLAGS=-fsanitize=thread"
                     -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread -DATTEND_BLAS=OFF -DATTEND_WERROR=ON
                     -DCMAKE_BUILD_TYPE=RelWithDebInfo) ;;
    mpi)      dir=build-mpi;      targets=(--target attend_cli test_parallel); only='^(cli_mpi_|cli_grad_shards$|test_parallel$)'
              flags=(-DATTEND_BLAS=OFF -DATTEND_MPI=ON -DATTEND_WERROR=ON) ;;
    valgrind) echo "=== valgrind (build, subset) ==="; run_valgrind; continue ;;
    *) echo "tools/test.sh: unknown configuration '$config' (default, openblas, asan, tsan, mpi, valgrind)" >&2; exit 2 ;;
  esac
  echo "=== $config ($dir) ==="
  if [ ${#cc[@]} -gt 0 ] && ! command -v "${cc[0]}" >/dev/null; then
    echo "$config: ${cc[0]} is not installed"; failed=$((failed + 1)); status=1; continue
  fi
  # a directory configured with another compiler is configured afresh
  if [ -f "$dir/CMakeCache.txt" ] && [ ${#cc[@]} -gt 0 ] &&
     ! grep -q "^CMAKE_C_COMPILER:[A-Z]*=.*${cc[0]}\$" "$dir/CMakeCache.txt"; then
    rm -rf "$dir"
  fi
  if ! cmake -S . -B "$dir" "${flags[@]}" >"$dir.configure.log" 2>&1; then
    cat "$dir.configure.log"; echo "$config: configure failed"; failed=$((failed + 1)); status=1; continue
  fi
  if [ "$config" = default ] && ! grep -q 'attend: threads ON' "$dir.configure.log"; then
    cat "$dir.configure.log"; echo "$config: POSIX threads not found"; failed=$((failed + 1)); status=1
    continue
  fi
  if ! cmake --build "$dir" -j"$jobs" "${targets[@]}" >"$dir.build.log" 2>&1; then
    cat "$dir.build.log"; echo "$config: build failed"; failed=$((failed + 1)); status=1; continue
  fi
  # the OpenBLAS build runs its subset twice: OpenBLAS's own kernels, then the
  # generic ones an OpenBLAS older than the CPU picks (the own GEMM takes over)
  passes=("")
  [ "$config" != openblas ] || passes=("" "OPENBLAS_CORETYPE=Prescott")
  for pass_env in "${passes[@]}"; do
    [ -z "$pass_env" ] || echo "=== $config ($dir) again with $pass_env ==="
    log="$dir.ctest.log"
    filter=()
    [ -z "$only" ] || filter=(-R "$only")
    env $pass_env OMP_NUM_THREADS=1 TSAN_OPTIONS="halt_on_error=1 die_after_fork=0" \
      ctest --test-dir "$dir" --output-on-failure -j"$jobs" "${filter[@]}" 2>&1 | tee "$log"
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
  done
  rm -f "$dir.configure.log" "$dir.build.log"
done
echo "total: $passed passed, $failed failed"
exit $status
