#!/usr/bin/env bash
# attend against PyTorch on the same configurations: builds the benchmark
# (the default configuration: own GEMM, threads, -O2, no -march=native) in
# build-bench/ (and, with --default-env, the OpenBLAS opt-in build in
# build-bench-openblas/), then runs
# bench/compare.py, which alternates attend and tools/torch_peer.py runs and
# prints the table of docs/PERFORMANCE.md (also build-bench/results/table.md, raw
# runs in build-bench/results/raw.jsonl).
# Usage: bash bench/run.sh [--reps N] [--quick] [--threads 1,2] [--coretype auto|env|NAME]
#                          [--isa avx2[,avx512]] [--quant] [--cases NAME[,NAME]] [--default-env [--gate-only]]
# --isa LEVEL[,LEVEL]: one table per instruction-set level, both sides
# restricted to it (attend ATTEND_ISA, PyTorch ATEN_CPU_CAPABILITY, OpenBLAS
# OPENBLAS_CORETYPE=Haswell at avx2), so AVX2 can be measured on an AVX-512 CPU.
# --quant adds greedy batch 1 with attend's int8 / fp16 weights against PyTorch
# float32 and PyTorch's dynamic int8; --cases runs only the rows whose name
# contains one of the strings (docs/PERFORMANCE.md, "Quantized weights").
# Needs: cmake, a C compiler, libopenblas-dev, and Debian's python3-torch
# (/usr/bin/python3). Takes about 2 minutes on an idle 2-core machine at the
# default 3 repetitions (about 3 with --threads 1,2), much longer under load.
# docs/PERFORMANCE.md's table is `bash bench/run.sh --threads 1,2`.
set -eu
cd "$(dirname "$0")/.."
dir=build-bench
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$dir" -DATTEND_BLAS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j"$jobs" --target attend_bench >/dev/null
extra=()
case " $* " in
*" --default-env "*) # the OpenBLAS opt-in build too: its default environment must not be slower
  cmake -S . -B "$dir-openblas" -DATTEND_BLAS=ON -DCMAKE_BUILD_TYPE=Release -DATTEND_SHARED=OFF >/dev/null
  cmake --build "$dir-openblas" -j"$jobs" --target attend_bench >/dev/null
  extra=(--bench-openblas "$dir-openblas/tests/attend_bench") ;;
esac
echo "attend_bench built in $dir; uptime: $(uptime)" >&2
exec /usr/bin/python3 bench/compare.py --bench "$dir/tests/attend_bench" --out "$dir/results" "${extra[@]}" "$@"
