#!/usr/bin/env python3
"""ab.py — is a change within noise? Runs two builds of attend_bench (A = before,
B = after) on bench/run.sh's cases, alternating A and B in every repetition, and
prints per case the median time of each and B/A. No PyTorch: this compares
attend with itself (bench/run.sh compares it with the peer).

    /usr/bin/python3 bench/ab.py --a OLD/tests/attend_bench --b NEW/tests/attend_bench \
                                 [--reps 5] [--isa avx2|avx512|default] [--threads 1]

Build each side as bench/run.sh does (cmake -DATTEND_BLAS=OFF
-DCMAKE_BUILD_TYPE=Release, target attend_bench; its OpenBLAS rows:
-DATTEND_BLAS=ON), e.g. the old commit from `git archive OLD | tar -x -C
/tmp/old`; tools/byte_identity.sh's builds in $BI_DIR use the same options
(`cmake --build $BI_DIR/<commit>/build --target attend_bench`). Noise: the spread (max/min) of each
side's repetitions is printed beside the medians; a B/A inside both spreads is
noise.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

CASES = [  # name, args, time key (lower is better)
    ("train L=20 bahdanau", ["train", "--len", "20", "--steps", "10", "--warmup", "2"], "step_ms_median"),
    ("train L=20 luong", ["train", "--len", "20", "--decoder", "luong", "--steps", "10", "--warmup", "2"],
     "step_ms_median"),
    ("greedy batch 1", ["greedy", "--batch", "1", "--iters", "20", "--warmup", "3"], "latency_ms"),
    ("greedy batch 1 luong", ["greedy", "--batch", "1", "--decoder", "luong", "--iters", "20", "--warmup", "3"],
     "latency_ms"),
    ("greedy batch 256", ["greedy", "--batch", "256", "--iters", "5", "--warmup", "1"], "latency_ms"),
    ("beam 5 batch 1", ["beam", "--width", "5", "--iters", "20", "--warmup", "3"], "latency_ms"),
    ("kernel additive", ["kernel", "--name", "additive", "--iters", "5", "--warmup", "1"], "ms"),
    ("kernel mha self-attention", ["kernel", "--name", "mha", "--iters", "5", "--warmup", "1"], "ms"),
]


def run(bench, args, env):
    out = subprocess.run([bench] + args, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="attend_bench before the change")
    ap.add_argument("--b", required=True, help="attend_bench after the change")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--isa", default="default", help="ATTEND_ISA for both sides (default: the CPU's)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    env = dict(os.environ, OMP_NUM_THREADS=str(a.threads), OPENBLAS_NUM_THREADS="1")
    if a.isa != "default":
        env["ATTEND_ISA"] = a.isa
        if a.isa == "avx2":
            env["OPENBLAS_CORETYPE"] = "Haswell"
    t = {}
    for rep in range(a.reps):
        for name, args, key in CASES:
            order = ("a", "b") if rep % 2 == 0 else ("b", "a")
            for side in order:
                j = run(a.a if side == "a" else a.b, args, env)
                t.setdefault((name, side), []).append(j[key])
        print("rep %d done" % rep, file=sys.stderr, flush=True)
    print("isa %s, %d thread(s), %d repetitions, load %.2f at the end" % (a.isa, a.threads, a.reps,
                                                                          os.getloadavg()[0]))
    print("| case | A median | A spread | B median | B spread | B/A |")
    print("|---|---|---|---|---|---|")
    for name, _, key in CASES:
        ta, tb = t[(name, "a")], t[(name, "b")]
        ma, mb = statistics.median(ta), statistics.median(tb)
        print("| %s (%s) | %.3f | %.2f | %.3f | %.2f | %.3f |" % (name, key, ma, max(ta) / min(ta), mb,
                                                                 max(tb) / min(tb), mb / ma))


if __name__ == "__main__":
    main()
