#!/usr/bin/python3
"""table81.py — seed 002's Table 8.1 measured with `attend` (issue 27).

Three sequence encoders at (nearly) equal parameter count, read out per
position (`attend readout`, decoder kind readout):

  rnn          bidirectional GRU, 2 layers of 24 per direction, emb 32
  conv         ConvS2S, 3 layers of kernel 3, emb 32 (GLU)
  transformer  2 layers, 4 heads, width 32, feed-forward 64 (pre-norm)

Measures (one TSV each under --out, SVG plots drawn by the library's own
line-plot writer, attend_render_line_plot_svg, through the Python package):

  seqops.tsv     dependent steps per layer (by construction, as the command
                 prints it), ms per training step and per encode of a batch
                 against T, at 1 and 2 threads: CPU time (the process's, robust
                 to a shared machine's load) and wall time (median, minimum);
                 peak RSS per process
  speedup.tsv    1 -> 2 threads, from the fastest wall times (where the O(1)
                 column shows up as parallelism: only where a second core is free)
  price.tsv      the growth exponents p of time and memory against T (least
                 squares of log y on log T over T >= 50; memory net of the
                 smallest T's), the local exponent between the two largest T,
                 and the share of the T^2 term of y = a + bT + cT^2 (least
                 squares over all T) at the largest T
  path.tsv       accuracy of the labels y_i = x_{i-k} (i >= k) against k, equal
                 training budget (steps x batch) for the three encoders
  positions.tsv  a transformer encoder without positions (and, as the control,
                 with sinusoidal ones) trained by `attend train` on reversal
                 and on the bag task (the sorted symbols), one length for all
                 pairs (see tests/test_readout.c: softmax averages, so without
                 positions only a fixed length tells {a,b} from {a,a,b,b})
  table81.md     the seed's table beside the measured one

Usage:
  /usr/bin/python3 tools/table81.py [--attend build/attend] [--out DIR] [--quick]

Every run is `nice -n 19 attend --threads N ...` (--nice to change it), one
thread unless measuring the speed-up; --path-steps the path runs' budget. The full run costs about 15 CPU-minutes on the machine of
docs/RESULTS.md; --quick (tiny sizes, a few steps: checks the pipeline end to
end, not the numbers) runs in seconds and is the ctest `table81_quick`.
The load average before and after is recorded in meta.tsv.
"""
import argparse
import math
import os
import re
import subprocess
import sys
import time

NICE = "19"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

ENCODERS = [
    ("rnn", ["--encoder", "rnn", "--emb", "32", "--hidden", "24", "--layers", "2"]),
    ("conv", ["--encoder", "conv", "--emb", "32", "--layers", "3", "--kernel", "3"]),
    ("transformer", ["--encoder", "transformer", "--emb", "32", "--hidden", "64", "--layers", "2", "--heads", "4"]),
]


def parse_kv(text):
    """{'train.ms_per_step': '1.2', ...} from the `key: a=b c=d` lines of attend readout."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+): (.*)$", line)
        if not m:
            continue
        for k, v in re.findall(r"(\w+)=(\S+)", m.group(2)):
            out[m.group(1) + "." + k] = v
    return out


def run(cmd):
    p = subprocess.run(["nice", "-n", NICE] + cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True)
    if p.returncode != 0:
        sys.exit("table81: %s failed (%d):\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
    return p.stdout


def readout(attend, threads, enc_args, extra):
    return parse_kv(run([attend, "--threads", str(threads), "readout"] + enc_args + extra))


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "?"


def fit_exponent(xs, ys):
    """Least-squares slope of log y on log x (None with fewer than 2 positive points)."""
    pts = [(math.log(x), math.log(y)) for x, y in zip(xs, ys) if x > 0 and y > 0]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx > 0 else None


def quadratic_share(xs, ys):
    """Least squares y = a + b T + c T^2 over all points; c T^2 / y at the largest T (None: too few points)."""
    if len(xs) < 4:
        return None
    import numpy as np
    X = np.array([[1.0, x, x * x] for x in xs])
    coef = np.linalg.lstsq(X, np.array(ys, dtype=float), rcond=None)[0]
    return float(coef[2] * xs[-1] ** 2 / ys[-1]) if ys[-1] else None


def fmt(v, nd=3):
    return "-" if v is None else ("%.*f" % (nd, v))


def read_tsv(path):
    """The rows (lists of strings) of a TSV written by write_tsv, header dropped."""
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f][1:]


def write_tsv(path, header, rows):
    with open(path, "w") as f:
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")


def plot(path, series, title, xl, yl, ymin=0.0, ymax=0.0, log_x=True):
    try:
        import attend.render  # the library's SVG writer (PYTHONPATH=build/python)
    except ImportError:
        sys.path.insert(0, os.path.join(ROOT, "build", "python"))
        import attend.render
    if not ymin < ymax:  # the writer needs the y range: the data's, with a margin
        ys = [y for _, _, yy in series for y in yy if math.isfinite(y)]
        lo, hi = (min(ys), max(ys)) if ys else (0.0, 1.0)
        pad = 0.05 * (hi - lo) if hi > lo else 0.5
        ymin, ymax = lo - pad, hi + pad
    svg = attend.render.line_plot_svg(series, title=title, x_label=xl, y_label=yl, y_min=ymin, y_max=ymax,
                                      log_x=log_x)
    with open(path, "w") as f:
        f.write(svg)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--attend", default=os.path.join(ROOT, "build", "attend"))
    ap.add_argument("--out", default=os.path.join(ROOT, "docs", "results", "table81"))
    ap.add_argument("--quick", action="store_true", help="tiny sizes: the pipeline, not the numbers")
    ap.add_argument("--path-steps", type=int, default=600, help="training steps of 32 pairs per path run (600)")
    ap.add_argument("--nice", type=int, default=19, help="the niceness of every run (19)")
    ap.add_argument("--from-tsv", action="store_true",
                    help="measure nothing: the plots and the table from the TSVs already in --out (a stopped run's)")
    ap.add_argument("--only", default="seqops,positions,path",
                    help="the measurements to run (seqops, positions, path); the others are read from --out's TSVs")
    a = ap.parse_args()
    only = set() if a.from_tsv else set(x for x in a.only.split(",") if x)
    if only - {"seqops", "positions", "path"}:
        sys.exit("table81: --only takes seqops, positions, path; not %s" % ",".join(sorted(only)))
    global NICE
    NICE = str(a.nice)
    os.makedirs(a.out, exist_ok=True)
    q = a.quick
    Ts = [10, 20] if q else [10, 25, 50, 100, 200, 400]
    ks = [1, 2] if q else [1, 2, 4, 8, 16, 32, 64, 128, 200]
    path_steps = 3 if q else a.path_steps
    pos_steps = 3 if q else 400
    t_begin, load_begin = time.time(), loadavg()
    cpu0 = os.times()

    # ---- sequential operations and the price: time and memory against T, 1 and 2 threads
    seq_rows = []
    if "seqops" not in only:
        seq_rows = [[r[0], int(r[1]), int(r[2])] + r[3:] for r in read_tsv(os.path.join(a.out, "seqops.tsv"))]
        Ts = sorted(set(r[1] for r in seq_rows))
        q = Ts[0] == 10 and Ts[-1] == 20
    for name, enc in ENCODERS if "seqops" in only else []:
        for T in Ts:
            for th in (1, 2):
                r = readout(a.attend, th, enc, ["--shift", "0", "--len", str(T), "--steps", "3" if q else "9",
                                                "--count", "64", "--dev-count", "32", "--encode-reps",
                                                "2" if q else "8"])
                seq_rows.append([name, T, th, r["model.dependent_steps_per_layer"], r["model.params"],
                                 r["train.cpu_ms_per_step"], r["encode.cpu_ms_per_batch"], r["memory.peak_rss_kb"],
                                 r["train.ms_per_step"], r["train.min_ms_per_step"], r["encode.ms_per_batch"],
                                 r["encode.min_ms_per_batch"]])
                print("seqops %-11s T=%-4d threads=%d train %s ms/step (CPU %s) encode %s ms (CPU %s) rss %s kB" %
                      (name, T, th, r["train.min_ms_per_step"], r["train.cpu_ms_per_step"],
                       r["encode.min_ms_per_batch"], r["encode.cpu_ms_per_batch"], r["memory.peak_rss_kb"]),
                      flush=True)
    if "seqops" in only:
        write_tsv(os.path.join(a.out, "seqops.tsv"),
                  ["encoder", "T", "threads", "dependent_steps_per_layer", "params", "train_cpu_ms_per_step",
                   "encode_cpu_ms_per_batch32", "peak_rss_kb", "train_wall_ms_median", "train_wall_ms_min",
                   "encode_wall_ms_median", "encode_wall_ms_min"], seq_rows)

    def col(name, th, i):
        return [float(r[i]) for r in seq_rows if r[0] == name and r[2] == th]

    price_rows, speed = [], {}
    fit_from = 50 if not q else 0
    for name, _ in ENCODERS:
        Tx = [float(T) for T in Ts]
        sel = [j for j, T in enumerate(Ts) if T >= fit_from]
        rss = col(name, 1, 7)
        net = [x - rss[0] for x in rss]
        for what, ys in (("train_cpu_ms_per_step", col(name, 1, 5)), ("encode_cpu_ms_per_batch32", col(name, 1, 6)),
                         ("peak_rss_kb_net", net)):
            p = fit_exponent([Tx[j] for j in sel], [ys[j] for j in sel])
            loc = fit_exponent(Tx[-2:], ys[-2:])
            price_rows.append([name, what, fmt(p), fmt(loc), fmt(quadratic_share(Tx, ys)), "%g" % ys[-1]])
        tr1, tr2 = col(name, 1, 9), col(name, 2, 9)  # the fastest step's wall time: the least disturbed
        en1, en2 = col(name, 1, 11), col(name, 2, 11)
        speed[name] = ([x / y if y > 0 else float("nan") for x, y in zip(tr1, tr2)],
                       [x / y if y > 0 else float("nan") for x, y in zip(en1, en2)])
    write_tsv(os.path.join(a.out, "price.tsv"),
              ["encoder", "quantity", "exponent_T>=%d" % fit_from, "exponent_last_two",
               "quadratic_share_at_T=%d" % Ts[-1], "value_at_T=%d" % Ts[-1]],
              price_rows)
    write_tsv(os.path.join(a.out, "speedup.tsv"), ["encoder", "T", "train_speedup_1to2", "encode_speedup_1to2"],
              [[n, T, "%.3f" % speed[n][0][j], "%.3f" % speed[n][1][j]] for n, _ in ENCODERS
               for j, T in enumerate(Ts)])

    # ---- positions: a transformer encoder without positions, reversal against the bag task
    pos_rows = read_tsv(os.path.join(a.out, "positions.tsv")) if "positions" not in only else []
    for task in ("reverse", "bag") if "positions" in only else []:
        for pos in ("none", "sinusoidal"):
            out = run([a.attend, "--threads", "1", "train", "--task", task, "--symbols", "6", "--min-len", "6",
                       "--max-len", "6", "--encoder", "transformer", "--positions", pos, "--emb", "32",
                       "--hidden", "64", "--layers", "2", "--heads", "4", "--steps", str(pos_steps), "--batch", "32",
                       "--lr", "0.003", "--dev-count", "40" if q else "500", "--count", "200" if q else "8000",
                       "--out", os.path.join(a.out, "pos_%s_%s.safetensors" % (task, pos))])
            os.remove(os.path.join(a.out, "pos_%s_%s.safetensors" % (task, pos)))
            m = re.search(r"^dev: .*greedy-token (\S+)\s+greedy-seq (\S+)", out, re.M)
            if not m:
                sys.exit("table81: no dev line from attend train:\n" + out)
            pos_rows.append([task, pos, pos_steps, m.group(2), m.group(1)])
            print("positions %-8s %-10s greedy-seq %s greedy-token %s" % (task, pos, m.group(2), m.group(1)),
                  flush=True)
    if "positions" in only:
        write_tsv(os.path.join(a.out, "positions.tsv"),
                  ["task", "positions", "steps_of_32", "greedy_seq_acc", "greedy_token_acc"], pos_rows)

    # ---- longest path: accuracy of y_i = x_{i-k} against k
    path_rows = []
    if "path" not in only:
        path_rows = [[r[0], int(r[1])] + r[2:] for r in read_tsv(os.path.join(a.out, "path.tsv"))]
        ks = sorted(set(r[1] for r in path_rows))
    # the transformer first: a run stopped early (--from-tsv then) keeps the most telling rows
    for name, enc in [ENCODERS[2], ENCODERS[0], ENCODERS[1]] if "path" in only else []:
        for k in ks:
            r = readout(a.attend, 1, enc, ["--shift", str(k), "--steps", str(path_steps), "--batch", "32",
                                           "--count", "200" if q else "4000", "--dev-count", "32" if q else "200",
                                           "--encode-reps", "1"])
            path_rows.append([name, k, r["data.len"], r["model.params"], r["model.reach"], path_steps,
                              r["eval.acc_path"], r["eval.chance"], r["train.cpu_ms_per_step"]])
            print("path   %-11s k=%-4d acc %s (chance %s, reach %s)" %
                  (name, k, r["eval.acc_path"], r["eval.chance"], r["model.reach"]), flush=True)
            write_tsv(os.path.join(a.out, "path.tsv"),  # after every run: a stopped run keeps its rows
                      ["encoder", "k", "len", "params", "reach", "steps_of_32", "acc_path", "chance",
                       "train_cpu_ms_per_step"], path_rows)

    # ---- plots
    Tx = [float(T) for T in Ts]
    plot(os.path.join(a.out, "train_time.svg"),
         [(n, Tx, [math.log10(v) for v in col(n, 1, 5)]) for n, _ in ENCODERS],
         "Training step against T (batch 32, 1 thread, CPU time)", "T (source length)", "log10 CPU ms per step")
    plot(os.path.join(a.out, "encode_time.svg"),
         [(n, Tx, [math.log10(v) for v in col(n, 1, 6)]) for n, _ in ENCODERS],
         "Encode of a batch of 32 against T (1 thread, CPU time)", "T (source length)", "log10 CPU ms per batch")
    plot(os.path.join(a.out, "memory.svg"),
         [(n, Tx, [v / 1024 for v in col(n, 1, 7)]) for n, _ in ENCODERS],
         "Peak resident memory of a training process against T", "T (source length)", "MiB")
    plot(os.path.join(a.out, "speedup.svg"),
         [(n + " train", Tx, speed[n][0]) for n, _ in ENCODERS] +
         [(n + " encode", Tx, speed[n][1]) for n, _ in ENCODERS],
         "Speed-up from 1 to 2 threads against T (fastest wall time)", "T (source length)", "time(1) / time(2)")
    kx = [float(k) for k in ks]
    plot(os.path.join(a.out, "path_accuracy.svg"),
         [(n, [float(r[1]) for r in path_rows if r[0] == n], [float(r[6]) for r in path_rows if r[0] == n])
          for n, _ in ENCODERS if any(r[0] == n for r in path_rows)] +
         [("chance", kx, [float(path_rows[0][7])] * len(ks))],
         "Accuracy of y_i = x_{i-k} read out per position, against k", "k (path length)", "accuracy", 0.0, 1.0)

    # ---- the table
    cpu1 = os.times()
    cpu_min = (cpu1.children_user + cpu1.children_system - cpu0.children_user - cpu0.children_system) / 60
    load_end = loadavg()
    if only:
        write_tsv(os.path.join(a.out, "meta%s.tsv" % ("" if len(only) == 3 else "_" + "_".join(sorted(only)))),
                  ["key", "value"],
                  [["quick", int(q)], ["wall_s", "%.0f" % (time.time() - t_begin)], ["cpu_min", "%.1f" % cpu_min],
                   ["loadavg_begin", load_begin], ["loadavg_end", load_end], ["nproc", os.cpu_count()]])

    def acc_at(name, k):
        for r in path_rows:
            if r[0] == name and r[1] == k:
                return r[6]
        return "-"

    def price(name, what):
        for r in price_rows:
            if r[0] == name and r[1] == what:
                return r[2]
        return "-"

    kmid, kmax = ks[len(ks) // 2], ks[-1]
    lines = ["| encoder | seed: sequential ops | seed: longest path | measured: dependent steps per layer at T=%d "
             "| measured: train speed-up 1→2 threads at T=%d | measured: accuracy at k=%d / k=%d "
             "| measured: time exponent (train, encode) | measured: memory exponent |" % (Ts[-1], Ts[-1], kmid, kmax),
             "|---|---|---|---|---|---|---|---|"]
    seed = {"rnn": ("O(T)", "O(T)"), "conv": ("O(1)", "O(T/k)"), "transformer": ("O(1)", "O(1)")}
    for name, _ in ENCODERS:
        dep = [r[3] for r in seq_rows if r[0] == name and r[1] == Ts[-1]][0]
        lines.append("| %s | %s | %s | %s | %.2f× | %s / %s | %s, %s | %s |" %
                     (name, seed[name][0], seed[name][1], dep, speed[name][0][-1], acc_at(name, kmid),
                      acc_at(name, kmax), price(name, "train_cpu_ms_per_step"),
                      price(name, "encode_cpu_ms_per_batch32"),
                      price(name, "peak_rss_kb_net")))
    with open(os.path.join(a.out, "table81.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))
    print("table81: %s, %.1f CPU-minutes, load %s -> %s" % (a.out, cpu_min, load_begin, load_end))


if __name__ == "__main__":
    main()
