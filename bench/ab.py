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
noise. The peak resident memory of each process (wait4) is printed too: the
largest over the repetitions, per side.
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
    ("greedy batch 64", ["greedy", "--batch", "64", "--iters", "10", "--warmup", "2"], "latency_ms"),
    ("greedy batch 256", ["greedy", "--batch", "256", "--iters", "5", "--warmup", "1"], "latency_ms"),
    ("beam 5 batch 1", ["beam", "--width", "5", "--iters", "20", "--warmup", "3"], "latency_ms"),
    ("kernel additive", ["kernel", "--name", "additive", "--iters", "5", "--warmup", "1"], "ms"),
    ("kernel mha self-attention", ["kernel", "--name", "mha", "--iters", "5", "--warmup", "1"], "ms"),
]


def run(bench, args, env):
    """One process: its last JSON line, with its peak resident memory (MiB) as rss_mib."""
    p = subprocess.Popen([bench] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode:
        raise SystemExit("%s %s: exit %d" % (bench, " ".join(args), p.returncode))
    j = json.loads(out.strip().splitlines()[-1])
    j["rss_mib"] = ru.ru_maxrss / 1024.0
    return j


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--a", required=True, help="attend_bench before the change")
    ap.add_argument("--b", required=True, help="attend_bench after the change")
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--isa", default="default", help="ATTEND_ISA for both sides (default: the CPU's)")
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    env = dict(os.environ, ATTEND_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads),
               OPENBLAS_NUM_THREADS="1")
    if a.isa != "default":
        env["ATTEND_ISA"] = a.isa
        if a.isa == "avx2":
            env["OPENBLAS_CORETYPE"] = "Haswell"
    t, rss = {}, {}
    for rep in range(a.reps):
        for name, args, key in CASES:
            order = ("a", "b") if rep % 2 == 0 else ("b", "a")
            for side in order:
                j = run(a.a if side == "a" else a.b, args, env)
                t.setdefault((name, side), []).append(j[key])
                rss[(name, side)] = max(rss.get((name, side), 0), j["rss_mib"])
        print("rep %d done" % rep, file=sys.stderr, flush=True)
    print("isa %s, %d thread(s), %d repetitions, load %.2f at the end" % (a.isa, a.threads, a.reps,
                                                                          os.getloadavg()[0]))
    print("| case | A median | A spread | B median | B spread | B/A | peak RSS A / B (MiB) |")
    print("|---|---|---|---|---|---|---|")
    for name, _, key in CASES:
        ta, tb = t[(name, "a")], t[(name, "b")]
        ma, mb = statistics.median(ta), statistics.median(tb)
        print("| %s (%s) | %.3f | %.2f | %.3f | %.2f | %.3f | %.1f / %.1f |" % (
            name, key, ma, max(ta) / min(ta), mb, max(tb) / min(tb), mb / ma, rss[(name, "a")], rss[(name, "b")]))


if __name__ == "__main__":
    main()
