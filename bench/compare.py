#!/usr/bin/python3
"""compare.py — runs attend (bench/bench.c) and PyTorch (tools/torch_peer.py)
on the same configurations, alternating, and prints the table of
docs/PERFORMANCE.md. Started by bench/run.sh, which builds the C side first.

    /usr/bin/python3 bench/compare.py --bench BUILD/tests/attend_bench [--reps 3] [--quick]
                                      [--out bench/results]

Every measurement is its own process (one JSON line on stdout); its peak
resident memory comes from wait4(). Each side runs at each thread count of
--threads (attend: OMP_NUM_THREADS; torch: torch.set_num_threads and
OPENBLAS_NUM_THREADS, as torch does not pass its count on to OpenBLAS), the order
of the runs alternating from one case and repetition to the next so that the
machine's load falls on both sides alike; a side's figure is its best thread
count's median over the repetitions. The load average is recorded around every run.
Both sides load the same libopenblas and run with the same OpenBLAS kernel set:
by default the one OpenBLAS picks for this CPU (OPENBLAS_CORETYPE removed from
the environment; --coretype env keeps the environment's, --coretype NAME forces
one); its name is printed with the table.

--isa avx2,avx512 measures each instruction-set level in turn, both sides
restricted to it: attend through ATTEND_ISA (src/core/isa.h), PyTorch through
ATEN_CPU_CAPABILITY, and OpenBLAS (both sides) through OPENBLAS_CORETYPE=Haswell
at avx2 (at avx512 OpenBLAS's own choice, unless --coretype says otherwise);
one table per level. Without --isa each side runs at its default level.

Peak FP32 rate (the "% of peak" columns) is measured, not computed: `attend_bench
peak` times a loop of independent FMA instructions at each instruction-set level,
on one core and on every core at once (GFLOP/s, a fused multiply-add being two
FLOPs). A row's % of peak divides its GFLOP/s by the FMA loop's rate at the level
the row ran at, for the number of cores it used (1 thread: one core's rate).
(A formula from a clock fails on new cores: a chain of dependent integer adds,
which used to give the clock, runs at rename on Golden Cove, at 8.6-11.8 "GHz".)

The transformer rows (greedy batch 1 and 256, issue 27) decode one model file
that `attend_bench export` writes into --out, on both sides (tools/torch_peer.py
loads it into a PyTorch decoder with a key/value cache); each such row's table
line is followed by whether the two sides' greedy tokens are identical
(tokens_fnv, a hash of every output token).

--default-env adds, for every row, attend in the environment a user gets:
ATTEND_NUM_THREADS, OMP_NUM_THREADS and ATTEND_ISA unset (the library's own
thread default and the CPU's best level) and, for an OpenBLAS build
(--bench-openblas), OPENBLAS_CORETYPE=Prescott (the generic kernels an OpenBLAS
older than the CPU picks), against attend's best explicit setting of the row
(ATTEND_NUM_THREADS at each thread count; the OpenBLAS build with its own
kernels), those runs made again beside the default ones so that the two sides
of the ratio meet the same load: the "default / best" column (the median of
the repetitions' ratios) must stay >= 0.90.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
PEER = os.path.join(ROOT, "tools", "torch_peer.py")
PY = "/usr/bin/python3"  # Debian's interpreter: the one with torch

# the transformer rows' model file (attend_bench export writes it into --out; both sides decode it)
TF_MODEL = "<transformer model file>"
# transformer rows: encoder and decoder of 2 layers, width 64, feed-forward 128 (bench.c's defaults)
TL, TD, TF = 2, 64, 128

# model of seed 004 (bench.c and torch_peer.py defaults)
D, H, Hd, A, V = 64, 128, 128, 128, 23
E = 2 * H


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def rss_run(cmd, env_extra):
    """Runs one measurement; returns (json dict, peak RSS in MiB, load before, load after)."""
    env = dict(os.environ)
    env.update(env_extra)
    for k in [k for k, v in env.items() if v is None]:
        del env[k]
    l0 = loadavg()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: stdout to the pipe, stderr inherited
        os.close(r)
        os.dup2(w, 1)
        os.close(w)
        try:
            os.execve(cmd[0], cmd, env)
        finally:
            os._exit(127)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status, ru = os.wait4(pid, 0)
    l1 = loadavg()
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        sys.exit("compare.py: %s failed (status %d)" % (" ".join(cmd), status))
    lines = [ln for ln in b"".join(chunks).decode().splitlines() if ln.startswith("{")]
    return json.loads(lines[-1]), ru.ru_maxrss / 1024.0, l0, l1


def peak_gflops(bench):
    """One core's and every core's FMA throughput (GFLOP/s) at AVX2 and AVX-512, from `attend_bench peak`."""
    cpuinfo = open("/proc/cpuinfo").read()
    model = next(ln for ln in cpuinfo.splitlines() if ln.startswith("model name")).split(":")[1].strip()
    cores = os.cpu_count()
    out = subprocess.run([bench, "peak", "--threads", str(cores)], capture_output=True, text=True, check=True).stdout
    probe = json.loads([ln for ln in out.splitlines() if ln.startswith("{")][-1])
    return dict(model=model, cores=cores, avx2_1t=probe["avx2_1t"], avx2_nt=probe["avx2_nt"],
                avx512_1t=probe["avx512_1t"], avx512_nt=probe["avx512_nt"])


def row_peak(pk, isa, threads):
    """The FMA loop's rate for `threads` cores (1 or all) at the level a row ran at (attend's reported isa)."""
    key = "avx512" if isa == "avx512" and pk["avx512_1t"] > 0 else "avx2"
    one, alln = pk[key + "_1t"], pk[key + "_nt"]
    if threads <= 1:
        return one, key
    # threads < cores: the share of the all-core rate
    return alln * min(threads, pk["cores"]) / pk["cores"], key


def openblas_core(env_extra):
    """The kernel set OpenBLAS selects under env_extra (both sides load the same libopenblas)."""
    env = dict(os.environ)
    env.update(env_extra)
    for k in [k for k, v in env.items() if v is None]:
        del env[k]
    code = ("import ctypes, ctypes.util\n"
            "lib = ctypes.CDLL(ctypes.util.find_library('openblas') or 'libopenblas.so.0')\n"
            "lib.openblas_get_corename.restype = ctypes.c_char_p\n"
            "print(lib.openblas_get_corename().decode())\n")
    try:
        return subprocess.run([PY, "-c", code], env=env, capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def model_flops(decoder, N, S, T, train):
    """FLOPs of one batch (multiply-add = 2; tanh/exp = 1), forward; training x3."""
    if decoder == "transformer":  # greedy with the key/value cache: step t attends over t + 1 positions
        f = TL * N * S * (2 * (4 * TD * TD + 2 * TD * TF) + 4 * S * TD)  # encoder layers
        f += TL * N * S * 2 * 2 * TD * TD  # cross-attention keys and values, once
        for t in range(T):
            f += TL * N * (2 * (6 * TD * TD + 2 * TD * TF) + 4 * (t + 1 + S) * TD)
            f += N * 2 * TD * V  # output layer
        return 3 * f if train else f
    G = 3
    f = 2 * (N * S * D * G * H * 2 + N * S * H * G * H * 2)  # encoder, both directions
    f += N * E * Hd * 2  # bridge
    if decoder == "bahdanau":
        f += N * S * E * A * 2  # keys
        step = N * D * G * Hd * 2 + N * E * G * Hd * 2 + N * Hd * G * Hd * 2  # input (emb, context), hidden
        step += N * Hd * A * 2 + N * S * A * 3 + 5 * N * S + N * S * E * 2  # query, scores, softmax, context
        step += N * (Hd + E) * V * 2  # output
    else:  # luong, general score
        f += N * S * E * Hd * 2
        step = N * D * G * Hd * 2 + N * Hd * G * Hd * 2 + N * Hd * G * Hd * 2  # emb, input feeding, hidden
        step += N * S * Hd * 2 + 5 * N * S + N * S * E * 2 + N * (E + Hd) * Hd * 2 + N * Hd * V * 2
    f += T * step
    return 3 * f if train else f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", required=True, help="path of attend_bench")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="fewer steps and iterations (a rough table)")
    ap.add_argument("--threads", default="1",
                    help="thread counts to try per side, e.g. 1,2 (default 1: on a shared machine the 2-thread runs "
                         "of both sides collapse whenever another process holds a core)")
    ap.add_argument("--coretype", default="auto",
                    help="OpenBLAS kernels for both sides: auto (default: OPENBLAS_CORETYPE unset, OpenBLAS picks "
                         "for this CPU), env (keep the environment's OPENBLAS_CORETYPE), or a core name "
                         "(Haswell, SkylakeX, ...)")
    ap.add_argument("--isa", default="default",
                    help="instruction-set levels to measure, e.g. avx2,avx512 (both sides restricted to each in turn: "
                         "ATTEND_ISA, ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE=Haswell at avx2); default: each side's "
                         "own default")
    ap.add_argument("--quant", action="store_true",
                    help="add the quantized-weight rows: greedy batch 1 with attend's int8 and fp16 weights "
                         "(attend_model_quantize) against PyTorch float32, and attend int8 against PyTorch's dynamic "
                         "int8 (torch.quantization.quantize_dynamic of nn.Linear, nn.GRU, nn.GRUCell)")
    ap.add_argument("--cases", default="",
                    help="only the rows whose name contains one of these comma-separated strings")
    ap.add_argument("--default-env", action="store_true",
                    help="also run attend in a user's default environment (no thread or level variables) and "
                         "report default / best per row (the gate: >= 0.90)")
    ap.add_argument("--gate-only", action="store_true",
                    help="with --default-env: only the gate's block (no PyTorch, no main table), for more "
                         "repetitions in the same time")
    ap.add_argument("--bench-openblas", default="",
                    help="with --default-env: an OpenBLAS build's attend_bench (-DATTEND_BLAS=ON), run in the default "
                         "environment with OPENBLAS_CORETYPE=Prescott (generic kernels)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build-bench", "results"))
    a = ap.parse_args()
    levels = a.isa.split(",")
    for lv in levels:
        if lv not in ("default", "baseline", "avx2", "avx512"):
            sys.exit("compare.py: --isa: unknown level %r (baseline, avx2, avx512)" % lv)
    # per level: (attend env, torch env, OpenBLAS env for both, OpenBLAS kernel name, how it was chosen)
    a.level_env = {}
    for lv in levels:
        coretype = a.coretype
        if coretype == "auto" and lv in ("avx2", "baseline"):
            coretype = "Haswell" if lv == "avx2" else "Prescott"
        if coretype == "auto":
            core_env = {"OPENBLAS_CORETYPE": None}
        elif coretype == "env":
            core_env = {}
        else:
            core_env = {"OPENBLAS_CORETYPE": coretype}
        how = {"auto": "OPENBLAS_CORETYPE unset: OpenBLAS's own choice for this CPU",
               "env": "OPENBLAS_CORETYPE from the environment: %s" % os.environ.get("OPENBLAS_CORETYPE", "unset")
               }.get(coretype, "OPENBLAS_CORETYPE=%s" % coretype)
        ours = {} if lv == "default" else {"ATTEND_ISA": lv}
        torch_env = {} if lv == "default" else {"ATEN_CPU_CAPABILITY": "default" if lv == "baseline" else lv}
        core = openblas_core(core_env)
        a.level_env[lv] = (ours, torch_env, core_env, core, how)
        print("level %s: OpenBLAS kernels for both sides: %s (%s)" % (lv, core, how), file=sys.stderr)
    q = a.quick
    thread_counts = [int(t) for t in a.threads.split(",")]
    st = (4, 1) if q else (10, 2)   # training steps, warm-up
    it = (5, 2) if q else (20, 3)   # decode/kernel iterations, warm-up
    # name, common args, (steps/iters args), label, kind
    cases = [
        ("train L=20 bahdanau", ["train", "--len", "20"], st, "train"),
        ("train L=10 bahdanau", ["train", "--len", "10"], st, "train"),
        ("train L=50 bahdanau", ["train", "--len", "50"], (max(2, st[0] // 2), 1), "train"),
        ("train L=20 luong", ["train", "--len", "20", "--decoder", "luong"], st, "train"),
        ("greedy batch 1", ["greedy", "--batch", "1"], it, "latency"),
        ("greedy batch 256", ["greedy", "--batch", "256"], (max(3, it[0] // 4), 1), "greedy256"),
        ("greedy batch 1 luong", ["greedy", "--batch", "1", "--decoder", "luong"], it, "latency"),
        ("beam 5 batch 1", ["beam", "--width", "5"], it, "latency"),
        ("greedy batch 1 transformer", ["greedy", "--batch", "1", "--decoder", "transformer", "--model", TF_MODEL],
         it, "latency"),
        ("greedy batch 256 transformer", ["greedy", "--batch", "256", "--decoder", "transformer", "--model", TF_MODEL],
         (max(3, it[0] // 4), 1), "greedy256"),
        ("kernel additive", ["kernel", "--name", "additive"], (max(3, it[0] // 4), 1), "kernel"),
        ("kernel scaled_dot", ["kernel", "--name", "scaled_dot"], (max(3, it[0] // 4), 1), "kernel"),
        ("kernel mha self-attention", ["kernel", "--name", "mha"], (max(3, it[0] // 4), 1), "kernel"),
    ]
    # name, args, iterations, kind, extra args per side
    cases = [c + ({},) for c in cases]
    if a.quant:
        q8, f16, tq8 = ["--quant", "int8"], ["--quant", "f16"], ["--quant", "int8"]
        cases += [
            ("greedy batch 1, attend int8 vs PyTorch float32", ["greedy", "--batch", "1"], it, "latency", {"ours": q8}),
            ("greedy batch 1, attend fp16 vs PyTorch float32", ["greedy", "--batch", "1"], it, "latency",
             {"ours": f16}),
            ("greedy batch 1, attend int8 vs PyTorch dynamic int8", ["greedy", "--batch", "1"], it, "latency",
             {"ours": q8, "torch": tq8}),
        ]
    if a.cases:
        cases = [c for c in cases if any(s in c[0] for s in a.cases.split(","))]
    os.makedirs(a.out, exist_ok=True)
    if any(TF_MODEL in c[1] for c in cases):  # the transformer rows' weights, one file for both sides
        tf_path = os.path.join(a.out, "transformer.safetensors")
        subprocess.run([a.bench, "export", "--decoder", "transformer", "--batch", "256", "--len", "20",
                        "--max-len", "22", "--out", tf_path], check=True, stdout=subprocess.DEVNULL)
        cases = [(c[0], [tf_path if x == TF_MODEL else x for x in c[1]]) + tuple(c[2:]) for c in cases]
    raw_path = os.path.join(a.out, "raw.jsonl")
    raw = open(raw_path, "w")
    res = {}  # (level, case, side, threads) -> list of json
    loads = {lv: [] for lv in levels}
    t_start = time.time()
    for rep in range(a.reps):
        for lv in ([] if a.gate_only and a.default_env else levels):
            ours_env, torch_env, core_env, core, _ = a.level_env[lv]
            for ci, (name, args, (n, w), kind, extra) in enumerate(cases):
                cnt = (["--steps", str(n), "--warmup", str(w)] if kind == "train"
                       else ["--iters", str(n), "--warmup", str(w)])
                order = [(side, t) for t in thread_counts for side in ("ours", "torch")]
                if (rep + ci) % 2:
                    order.reverse()
                for side, threads in order:
                    if side == "ours":
                        cmd = [a.bench] + args + extra.get("ours", []) + cnt
                        env = dict(core_env, ATTEND_NUM_THREADS=str(threads), OMP_NUM_THREADS=None,
                                   OPENBLAS_NUM_THREADS="1", **ours_env)
                    else:
                        cmd = [PY, PEER] + args + extra.get("torch", []) + cnt + ["--threads", str(threads)]
                        # torch.set_num_threads does not reach the OpenBLAS under torch's matmuls
                        env = dict(core_env, OPENBLAS_NUM_THREADS=str(threads), **torch_env)
                    j, rss, l0, l1 = rss_run(cmd, env)
                    loads[lv] += [l0, l1]
                    j.update(rep=rep, level=lv, case=name, threads=threads, rss_mib=rss, load_before=l0,
                             load_after=l1, openblas_core=core)
                    raw.write(json.dumps(j) + "\n")
                    raw.flush()
                    res.setdefault((lv, name, side, threads), []).append(j)
                    print("[%4.0fs] rep %d %-7s %-26s %-5s %dt  %s" % (
                        time.time() - t_start, rep, lv, name, side, threads, summary(j)), file=sys.stderr, flush=True)
        if a.default_env:  # attend as a user runs it: nothing set but (OpenBLAS build) generic kernels
            # (name, binary, OPENBLAS_CORETYPE, ATTEND_NUM_THREADS or None): the default build; the OpenBLAS
            # build with the generic kernels an OpenBLAS older than the CPU runs; and, candidates for "best",
            # the OpenBLAS build with its right kernels and the default build at each thread count.
            # Each row's runs follow one another, alternating in order, beside attend's explicit
            # settings ("set-Nt": ATTEND_NUM_THREADS=N, the default build) measured again in the same
            # block: the gate compares runs minutes apart at most, so a change of load between the
            # main table's runs and these cannot pass for a gap (or hide one).
            builds = [("own", a.bench, "Prescott", None)]
            if a.bench_openblas:
                builds += [("openblas", a.bench_openblas, "Prescott", None),
                           ("openblas-native", a.bench_openblas, None, None)]
            builds += [("set-%dt" % t, a.bench, None, t) for t in thread_counts]
            for ci, (name, args, (n, w), kind, extra) in enumerate(cases):
                cnt = (["--steps", str(n), "--warmup", str(w)] if kind == "train"
                       else ["--iters", str(n), "--warmup", str(w)])
                for bname, bench, coretype, threads in (builds if (rep + ci) % 2 == 0 else builds[::-1]):
                    env = {k: None for k in ("ATTEND_NUM_THREADS", "OMP_NUM_THREADS", "ATTEND_ISA",
                                             "OPENBLAS_NUM_THREADS", "ATTEND_GEMM")}
                    env["OPENBLAS_CORETYPE"] = coretype
                    if threads:
                        env.update(ATTEND_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS="1",
                                   **a.level_env[levels[0]][0])
                    j, rss, l0, l1 = rss_run([bench] + args + extra.get("ours", []) + cnt, env)
                    j.update(rep=rep, level="defaultenv", case=name, threads=0, build=bname, rss_mib=rss,
                             load_before=l0, load_after=l1)
                    raw.write(json.dumps(j) + "\n")
                    raw.flush()
                    res.setdefault(("defaultenv", name, bname, 0), []).append(j)
                    print("[%4.0fs] rep %d default environment (%s build) %-26s %s" % (
                        time.time() - t_start, rep, bname, name, summary(j)), file=sys.stderr, flush=True)
    raw.close()
    pk = peak_gflops(a.bench)
    table = "" if a.gate_only and a.default_env else "".join(render(cases, res, pk, loads[lv], a, lv) for lv in levels)
    if a.default_env:
        table += render_default_env(cases, res, a, levels)
    with open(os.path.join(a.out, "table.md"), "w") as f:
        f.write(table)
    print(table)


def summary(j):
    for k in ("samples_per_s", "latency_ms", "gflops"):
        if k in j:
            return "%s=%.4g rss=%.0fMiB" % (k, j[k], j["rss_mib"])
    return ""


def metric(kind):
    # (json key, higher is better, unit)
    return {"train": ("samples_per_s", True, "samples/s"), "latency": ("latency_ms", False, "ms"),
            "greedy256": ("seqs_per_s", True, "seqs/s"), "kernel": ("gflops", True, "GFLOP/s")}[kind]


def best(res, lv, name, side, key, higher, only=None):
    """The side's best thread count by median (or thread count `only`); returns (median, threads, runs)."""
    out = None
    for t in (1, 2, 3, 4, 6, 8, 16, 32, 64):
        runs = res.get((lv, name, side, t), [])
        if not runs or (only is not None and t != only):
            continue
        med = statistics.median(r[key] for r in runs)
        if out is None or (med > out[0] if higher else med < out[0]):
            out = (med, t, runs)
    return out


def row_gflops(kind, j, value):
    """A row's GFLOP/s from its measurement (bench/compare.py's FLOP counts), or None."""
    if kind == "kernel":
        return value
    if kind == "train":
        L = j["len"]
        return model_flops(j["decoder"], j["batch"], L, L + 1, True) / j["batch"] * value * 1e-9
    if kind == "greedy256":
        return model_flops(j["decoder"], j["batch"], j["len"], j["max_len"], False) / j["batch"] * value * 1e-9
    if kind == "latency" and j["bench"] == "greedy":
        return model_flops(j["decoder"], 1, j["len"], j["max_len"], False) / (value * 1e-3) * 1e-9
    return None


def render(cases, res, pk, loads, a, lv):
    ours_env, torch_env, core_env, core, how = a.level_env[lv]
    lines = []
    if lv == "default":
        lines.append("### Each side at its default instruction-set level")
    else:
        lines.append("### Instruction-set level %s: ATTEND_ISA=%s, ATEN_CPU_CAPABILITY=%s" % (
            lv, lv, torch_env.get("ATEN_CPU_CAPABILITY")))
    lines.append("")
    caps = sorted({j.get("cpu_capability", "?") for k, v in res.items() if k[0] == lv and k[2] == "torch" for j in v})
    isas = sorted({j.get("isa", "?") for k, v in res.items() if k[0] == lv and k[2] == "ours" for j in v})
    backends = sorted({j.get("backend", "") for k, v in res.items() if k[0] == lv and k[2] == "ours" for j in v} - {""})
    peaks = "; ".join("%s %.0f GFLOP/s on one core, %.0f on all %d" % (
        lvname, pk[key + "_1t"], pk[key + "_nt"], pk["cores"]) for lvname, key in (("AVX2", "avx2"), ("AVX-512", "avx512"))
        if pk[key + "_1t"] > 0)
    lines.append("Machine: %s, %d cores. Peak FP32, measured by an FMA loop (`attend_bench peak`): %s." % (
        pk["model"], pk["cores"], peaks))
    lines.append("attend kernels: %s (products: %s); PyTorch (ATen) kernels: %s; OpenBLAS kernels (PyTorch's): %s (%s)."
                 % (", ".join(isas), ", ".join(backends) or "?", ", ".join(caps), core, how))
    lines.append("Load average during the runs: median %.2f, min %.2f, max %.2f; %d repetitions%s." % (
        statistics.median(loads), min(loads), max(loads), a.reps, " (--quick)" if a.quick else ""))
    lines.append("")
    lines.append("| measurement | attend 1t | PyTorch 1t | ratio 1t | attend 1t GFLOP/s (% of 1 core) | attend best | "
                 "PyTorch best | ratio best (threads attend/torch) | attend best GFLOP/s (% of its cores) |")
    lines.append("|---|---|---|---|---|---|---|---|---|")
    rss = {}
    for name, args, _, kind, _ in cases:
        key, higher, unit = metric(kind)
        o, p = best(res, lv, name, "ours", key, higher), best(res, lv, name, "torch", key, higher)
        o1, p1 = best(res, lv, name, "ours", key, higher, 1), best(res, lv, name, "torch", key, higher, 1)
        if not o or not p:
            continue

        def ratio(x, y):
            return x[0] / y[0] if higher else y[0] / x[0]

        def pct(x):
            if not x:
                return "—"
            j = x[2][0]
            gf = row_gflops(kind, j, x[0])
            if gf is None:
                return "—"
            peak, _ = row_peak(pk, j.get("isa", "avx2"), x[1])
            return "%.1f (%.0f%%)" % (gf, 100 * gf / peak)

        def fmt(x):
            return ("%.1f" if x >= 100 else "%.3g") % x

        word = "faster" if kind != "latency" else "lower"
        one = ("| %s | %s | %.1f× %s | %s" % (fmt(o1[0]), fmt(p1[0]), ratio(o1, p1), word, pct(o1))) if o1 and p1 \
            else "| — | — | — | —"
        lines.append("| %s (%s) %s | %s | %s | %.1f× %s (%d/%d) | %s |" % (
            name, unit, one, fmt(o[0]), fmt(p[0]), ratio(o, p), word, o[1], p[1], pct(o)))
        if name in ("train L=20 bahdanau", "greedy batch 256"):
            rss[name] = (statistics.median(r["rss_mib"] for r in o[2]), statistics.median(r["rss_mib"] for r in p[2]))
    for name, (ro, rp) in rss.items():
        lines.append("| peak RSS, %s process (MiB) | | | | | %.1f | %.1f | %.1f× smaller | — |" % (name, ro, rp, rp / ro))
    lines.append("")
    for name, args, _, kind, _ in cases:  # rows on shared weights: did both sides produce the same tokens?
        hashes = {side: {j.get("tokens_fnv") for k, v in res.items() if k[0] == lv and k[1] == name and k[2] == side
                         for j in v} for side in ("ours", "torch")}
        if hashes["ours"] and hashes["torch"] and None not in hashes["ours"] | hashes["torch"]:
            same = len(hashes["ours"] | hashes["torch"]) == 1
            lines.append("%s: greedy tokens %s on both sides (FNV-1a %s)." % (
                name, "identical" if same else "**differ**", ", ".join(sorted(hashes["ours"] | hashes["torch"]))))
    lines.append("")
    return "\n".join(lines) + "\n"


def render_default_env(cases, res, a, levels):
    """attend in the default environment against its best explicit setting of each row, measured in the same
    block of runs (set-Nt; and the OpenBLAS build with OpenBLAS's own kernels): the ratio is the median over
    repetitions of default / best within each repetition, the best being the candidate with the best median."""
    lines = ["### attend in the default environment against its best setting", "",
             "Default environment: ATTEND_NUM_THREADS, OMP_NUM_THREADS, ATTEND_ISA, OPENBLAS_NUM_THREADS unset, "
             "OPENBLAS_CORETYPE=Prescott. Best: the candidate with the best median among attend with "
             "ATTEND_NUM_THREADS set to each thread count%s, run in the same block as the default runs "
             "(one row after another, alternating order). default / best: the median over the %d repetitions of "
             "each repetition's ratio. Gate: default / best >= 0.90." % (
                 " and the OpenBLAS build with OpenBLAS's own kernel choice (default threads)" if a.bench_openblas
                 else "", a.reps), ""]
    builds = ["own"] + (["openblas"] if a.bench_openblas else [])
    lines.append("| measurement | attend best (setting) | " +
                 " | ".join("default, %s build (products; threads) | default / best" % b for b in builds) + " |")
    lines.append("|---|---|" + "---|---|" * len(builds))
    worst = None
    for name, args, _, kind, _ in cases:
        key, higher, unit = metric(kind)
        cand = []
        for bname in sorted({k[2] for k in res if k[0] == "defaultenv" and k[1] == name}):
            if not (bname.startswith("set-") or bname == "openblas-native"):
                continue
            runs = res[("defaultenv", name, bname, 0)]
            what = ("OpenBLAS build, its own kernels" if bname == "openblas-native"
                    else "ATTEND_NUM_THREADS=%s" % bname[4:-1])
            cand.append((statistics.median(r[key] for r in runs), runs[0].get("threads_used", 0), runs, what))
        if not cand:
            continue
        b = max(cand, key=lambda x: x[0]) if higher else min(cand, key=lambda x: x[0])
        by_rep = {r["rep"]: r[key] for r in b[2]}
        cells = []
        for bname in builds:
            runs = res.get(("defaultenv", name, bname, 0), [])
            if not runs:
                cells.append("— | —")
                continue
            med = statistics.median(r[key] for r in runs)
            pairs = [(r[key] / by_rep[r["rep"]] if higher else by_rep[r["rep"]] / r[key])
                     for r in runs if r["rep"] in by_rep and r[key] and by_rep[r["rep"]]]
            r = statistics.median(pairs)
            worst = r if worst is None else min(worst, r)
            cells.append("%.4g (%s; %s) | %.2f%s" % (med, runs[0].get("backend", "?"), runs[0].get("threads_used", "?"),
                                                     r, "" if r >= 0.9 else " **below 0.90**"))
        lines.append("| %s (%s) | %.4g (%s, %d thread%s) | %s |" % (name, unit, b[0], b[3], b[1], "" if b[1] == 1 else "s",
                                                                   " | ".join(cells)))
    lines.append("")
    lines.append("Worst default / best: %s." % ("%.2f" % worst if worst is not None else "n/a"))
    lines.append("")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
