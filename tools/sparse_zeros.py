#!/usr/bin/python3
"""sparse_zeros.py — the share of exactly-zero attention weights of trained
models, and their greedy accuracy, on held-out inputs (docs/RESULTS.md,
"Sparse normalisers"; run by tools/sparse_demo.sh).

    PYTHONPATH=build/python /usr/bin/python3 tools/sparse_zeros.py reverse MODEL...
    PYTHONPATH=build/python /usr/bin/python3 tools/sparse_zeros.py g2p DICT MODEL...

reverse: 500 strings of 5-12 symbols over a..j (random.Random(20261201)),
  greedy decoding; exact = the output is the reversed input.
g2p: the first 1000 dev-split words of DICT (attend_g2p_split_of), greedy.
Counts every weight of every output step over the source positions (no
padding enters: alignments are [T, S] of the word itself); a weight counts as
zero only if it is exactly 0.0.
"""
import ctypes
import random
import sys

import numpy as np

import attend
from attend import _lib


def share(alignments):
    """(exact zeros, weights, mean nonzero weights per output step)"""
    z = n = rows = 0
    for a in alignments:
        a = np.asarray(a)
        z += int((a == 0.0).sum())
        n += a.size
        rows += a.shape[0]
    return z, n, (n - z) / max(rows, 1)


def reverse(paths):
    rng = random.Random(20261201)
    srcs = ["".join(rng.choice("abcdefghij") for _ in range(rng.randint(5, 12))) for _ in range(500)]
    print("model\tnormalizer\tzeros\tweights\tzero_share\tnonzero_per_step\texact")
    for p in paths:
        m = attend.Model.load(p)
        hs = m.greedy(srcs)
        z, n, nz = share(h.alignment for h in hs)
        exact = sum(h.text == s[::-1] for h, s in zip(hs, srcs)) / len(srcs)
        print("%s\t%s\t%d\t%d\t%.4f\t%.2f\t%.4f" % (p, m.config.get("normalizer", "softmax"), z, n, z / n, nz,
                                                     exact))
        m.close()


def g2p(dict_path, paths):
    fn = _lib.lib.attend_g2p_split_of
    fn.argtypes, fn.restype = [ctypes.c_char_p, ctypes.c_size_t], ctypes.c_int
    words, seen = [], set()
    with open(dict_path, encoding="utf-8") as f:
        for line in f:
            if not line.strip() or line.startswith((";;;", "#")):
                continue
            w = line.split()[0].split("(")[0].lower()
            if w in seen or not w.isalpha():
                continue
            seen.add(w)
            b = w.encode()
            if fn(b, len(b)) == 1:  # ATTEND_G2P_DEV
                words.append(w)
            if len(words) == 1000:
                break
    print("model\tnormalizer\tzeros\tweights\tzero_share\tnonzero_per_step\twords")
    for p in paths:
        g = attend.g2p.G2P(p)
        al = []
        for w in words:
            try:
                al.append(g.align(w).alignment)
            except attend.AttendError:
                pass
        z, n, nz = share(al)
        print("%s\t%s\t%d\t%d\t%.4f\t%.2f\t%d" % (p, g.model.config.get("normalizer", "softmax"), z, n, z / n, nz,
                                                   len(al)))
        g.close()


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "reverse":
        reverse(sys.argv[2:])
    elif len(sys.argv) >= 4 and sys.argv[1] == "g2p":
        g2p(sys.argv[2], sys.argv[3:])
    else:
        sys.exit(__doc__)
