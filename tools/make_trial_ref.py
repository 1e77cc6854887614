#!/usr/bin/python3
"""make_trial_ref.py -- the trials' statistics against SciPy (python3-scipy):
Kendall's tau-b with its two-sided p-value (scipy.stats.kendalltau, variant
'b', method 'auto') and the total variation / KL / Jensen-Shannon divergences
(scipy.spatial.distance.jensenshannon squared, base e; scipy.stats.entropy),
on fixed inputs: tests/ref/trial_kendall.txt and tests/ref/trial_divergence.txt
(ref_reader.h's format), read by tests/test_trial.c.

    /usr/bin/python3 tools/make_trial_ref.py [--out DIR]

The test trial_ref_current (tests/cmake/trial.cmake) writes them again into a
scratch directory and requires the committed files to be the same bytes, so
the references are what the installed SciPy says (.ci/run installs it).
"""
import argparse
import os

import numpy as np
from scipy.spatial.distance import jensenshannon
from scipy.stats import entropy, kendalltau

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "ref")


def put(f, name, values):
    values = np.asarray(values, dtype=np.float64).ravel()
    f.write("%s 1 %d\n" % (name, len(values)))
    f.write(" ".join(repr(float(v)) for v in values) + "\n")


def kendall_cases():
    rng = np.random.default_rng(31)
    cases = []
    # hand cases: perfect, reversed, one-hot against one-hot, ties in both
    cases.append(([1, 2, 3, 4, 5], [2, 4, 6, 8, 10]))
    cases.append(([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]))
    cases.append(([0, 0, 1, 0, 0], [0, 0, 3.5, 0, 0]))          # tau-b = 1 (tau-a would be 0.4)
    cases.append(([0, 0, 1, 0, 0], [0, 2.0, 0, 0, 0]))          # tau-b = -1/4
    cases.append(([1, 1, 2, 2, 3, 3, 4], [1, 2, 1, 3, 3, 4, 4]))
    cases.append(([0.1, 0.7, 0.2], [0.3, 0.1, 0.9]))            # n = 3
    cases.append(([3, 1, 2, 5, 4, 6, 8, 7], [1, 2, 3, 4, 5, 6, 7, 8]))  # exact, a few discordant
    # random: untied n = 12, 33 (exact), 34 and 60 (asymptotic), tied n = 20, 40
    for n in (12, 33):
        x = rng.normal(size=n)
        cases.append((x, x + rng.normal(scale=1.0, size=n)))
    for n in (34, 60):
        x = rng.normal(size=n)
        cases.append((x, x + rng.normal(scale=2.0, size=n)))
    for n in (20, 40):
        cases.append((rng.integers(0, 4, size=n), rng.integers(0, 5, size=n)))
    # 40 untied with a single discordant pair: scipy's exact closed form
    x = np.arange(40.0)
    y = x.copy()
    y[[10, 11]] = y[[11, 10]]
    cases.append((x, y))
    # attention-like rows: a softmax row against importances with a zero block
    a = np.exp(rng.normal(size=9))
    a /= a.sum()
    g = np.abs(rng.normal(size=9))
    g[[2, 5, 7]] = 0
    cases.append((a, g))
    return cases


def divergence_cases():
    rng = np.random.default_rng(32)
    cases = [([0.5, 0.5], [0.9, 0.1]),
             ([1.0, 0.0, 0.0], [0.0, 0.5, 0.5]),          # disjoint: JSD = ln 2, TV = 1
             ([0.2, 0.3, 0.5], [0.2, 0.3, 0.5])]
    for n in (5, 17):
        p = rng.dirichlet(np.ones(n))
        q = rng.dirichlet(np.ones(n) * 0.3)
        cases.append((p, q))
    p = rng.dirichlet(np.ones(6))
    q = p.copy()
    q[0], q[1] = 0.0, q[0] + q[1]                         # q has a zero where p has mass
    cases.append((p, q))
    return cases


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=OUT, help="directory for the two files (tests/ref)")
    out = ap.parse_args().out
    with open(os.path.join(out, "trial_kendall.txt"), "w") as f:
        f.write("# Kendall tau-b and two-sided p-value from scipy.stats.kendalltau (variant 'b', method 'auto');\n")
        f.write("# written by tools/make_trial_ref.py, read by tests/test_trial.c\n")
        for i, (x, y) in enumerate(kendall_cases()):
            res = kendalltau(x, y)
            put(f, "k%d_x" % i, x)
            put(f, "k%d_y" % i, y)
            put(f, "k%d_out" % i, [res.correlation, res.pvalue])
    with open(os.path.join(out, "trial_divergence.txt"), "w") as f:
        f.write("# total variation, KL(p||q) (scipy.stats.entropy) and Jensen-Shannon divergence in nats\n")
        f.write("# (scipy.spatial.distance.jensenshannon squared); tools/make_trial_ref.py, tests/test_trial.c\n")
        for i, (p, q) in enumerate(divergence_cases()):
            p = np.asarray(p, dtype=np.float64)
            q = np.asarray(q, dtype=np.float64)
            tv = 0.5 * np.abs(p - q).sum()
            kl = entropy(p, q)
            js = jensenshannon(p, q) ** 2
            put(f, "d%d_p" % i, p)
            put(f, "d%d_q" % i, q)
            put(f, "d%d_out" % i, [tv, kl, js])


if __name__ == "__main__":
    main()
