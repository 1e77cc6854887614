#!/usr/bin/python3
"""make_sparse_ref.py — reference data for the sparse normalisers
(src/core/sparsemax.c), checked by tests/test_sparse.c.

    /usr/bin/python3 tools/make_sparse_ref.py      (writes tests/ref/sparse_*.txt)

PyTorch 1.13 has neither sparsemax nor entmax, so both are written here from
their papers with torch ops, in float64, row by row over the kept positions:
  sparsemax (Martins & Astudillo 2016, Algorithm 1): sort z decreasing,
    k* = max{k : 1 + k z_(k) > Σ_{i<=k} z_(i)}, τ = (Σ_{i<=k*} z_(i) − 1)/k*,
    w = max(z − τ, 0).
  1.5-entmax (Peters, Niculae & Martins 2019, Algorithm 2, α = 1.5): x = z/2,
    sorted decreasing; for each k the mean μ_k and ss_k = Σ_{i<=k} (x_(i) − μ_k)²
    of the top k, τ_k = μ_k − sqrt(max(0, (1 − ss_k)/k)); the support size is
    #{k : τ_k <= x_(k)}, τ = τ_k*, w = max(x − τ, 0)².
The backward references are autograd through these forwards (τ is a closed
form of the top-k* scores, so its derivative is the map's Jacobian), not the
formulas the C code uses. Masked positions get weight 0 and gradient 0.

Scores are float32 values (the C test computes in float) written exactly;
the cases include key padding and attention masks, a causal row set, ties
inside and at the edge of the support, rows where one score dominates (one
weight 1, the rest exactly 0), all-equal rows and a long row (S = 40, the
heap sort). File format: tests/ref_reader.h.
"""
import os

import torch

torch.set_default_dtype(torch.float64)
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "ref")


def sparsemax_row(z):
    zs, _ = torch.sort(z, descending=True)
    k = torch.arange(1, z.numel() + 1, dtype=z.dtype)
    cs = torch.cumsum(zs, 0)
    cond = 1 + k * zs > cs
    kstar = int(cond.nonzero().max()) + 1
    tau = (cs[kstar - 1] - 1) / kstar
    return torch.clamp(z - tau, min=0), tau


def entmax15_row(z):
    x = z / 2
    xs, _ = torch.sort(x, descending=True)
    n = x.numel()
    k = torch.arange(1, n + 1, dtype=z.dtype)
    mean = torch.cumsum(xs, 0) / k
    mean_sq = torch.cumsum(xs * xs, 0) / k
    ss = k * (mean_sq - mean * mean)
    delta = (1 - ss) / k
    tau = mean - torch.sqrt(torch.clamp(delta, min=0))
    kstar = int((tau <= xs).sum())
    t = tau[kstar - 1]
    return torch.clamp(x - t, min=0) ** 2, t


def normalize(fn, scores, keep):
    """scores [N,T,S], keep [N,T,S] bool -> weights [N,T,S] (differentiable)."""
    N, T, S = scores.shape
    rows = []
    for n in range(N):
        for t in range(T):
            m = keep[n, t]
            w = torch.zeros(S)
            w = w.index_put((m.nonzero().flatten(),), fn(scores[n, t][m])[0])
            rows.append(w)
    return torch.stack(rows).reshape(N, T, S)


def f32(x):
    return x.to(torch.float32).to(torch.float64)


def write(path, comment, tensors):
    with open(path, "w") as f:
        f.write("# %s\n# written by tools/make_sparse_ref.py (torch %s, float64)\n" % (comment, torch.__version__))
        for name, t in tensors:
            t = t.detach().to(torch.float64)
            f.write("%s %d %s\n" % (name, t.dim(), " ".join(str(d) for d in t.shape)))
            flat = t.reshape(-1).tolist()
            for i in range(0, len(flat), 8):
                f.write(" ".join(repr(float(v)) for v in flat[i:i + 8]) + "\n")


def case(idx, comment, scores, valid=None, allowed=None, causal=0, seed=0):
    N, T, S = scores.shape
    scores = f32(scores)
    keep = torch.ones(N, T, S, dtype=torch.bool)
    if valid is not None:
        keep &= valid.bool()[:, None, :]
    if allowed is not None:
        keep &= allowed.bool()[None, :, :]
    if causal:
        keep &= torch.ones(T, S).tril().bool()[None]
    g = torch.Generator().manual_seed(1000 + seed)
    dw = f32(torch.rand(N, T, S, generator=g) * 2 - 1)
    out = [("scores", scores), ("dweights", dw)]
    if valid is not None:
        out.append(("valid", valid.to(torch.float64)))
    if allowed is not None:
        out.append(("allowed", allowed.to(torch.float64)))
    out.append(("causal", torch.tensor([float(causal)])))
    for name, fn in (("sparsemax", sparsemax_row), ("entmax15", entmax15_row)):
        z = scores.clone().requires_grad_(True)
        w = normalize(fn, z, keep)
        (dz,) = torch.autograd.grad((w * dw).sum(), z)
        out.append(("w_" + name, w))
        out.append(("ds_" + name, dz))
    write(os.path.join(OUT, "sparse_%02d.txt" % idx), comment, out)


def main():
    g = torch.Generator().manual_seed(13)
    r = lambda *shape, s=1.0: (torch.rand(*shape, generator=g) * 2 - 1) * s
    case(0, "random scores, no mask", r(3, 2, 6, s=2.0), seed=0)
    valid = torch.tensor([[1, 1, 1, 0, 0, 0, 0], [1, 1, 1, 1, 1, 1, 1], [1, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 1, 0, 0]])
    case(1, "key padding mask (one row keeps a single position)", r(4, 3, 7, s=3.0), valid=valid, seed=1)
    allowed = torch.tensor([[1, 0, 1, 0, 1], [0, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    case(2, "attention mask and key padding", r(2, 3, 5, s=1.5), valid=torch.tensor([[1, 1, 1, 1, 0],
                                                                                     [1, 1, 1, 1, 1]]),
         allowed=allowed, seed=2)
    case(3, "causal", r(2, 4, 4, s=2.0), causal=1, seed=3)
    # (no score exactly at a sparsemax threshold: its derivative is undefined there)
    special = torch.tensor([[[1.0, 1.0, 0.0, -1.0, 0.4, 0.25],        # ties in the support
                             [2.0, 2.0, 2.0, 2.0, 2.0, 2.0],           # all equal: uniform
                             [10.0, 0.0, 0.0, -3.0, 1.0, 0.5],         # one dominates: one-hot
                             [0.75, 0.75, 0.75, -0.5, -0.5, -20.0],    # a tie of three, ties outside
                             [3.0, 1.0, 1.0, 0.0, -2.0, 2.5],          # mixed
                             [-100.0, -100.5, -99.75, -100.0, -101.0, -98.0],  # far from 0
                             [1000.0, 999.0, 998.5, 0.0, -1000.0, 999.75],     # large magnitudes
                             [0.5, 0.0, 0.5, 0.0, 0.5, 0.0]]])         # ties at the edge
    case(4, "ties, all-equal rows, one dominating score, large magnitudes", special, seed=4)
    case(5, "a long row (S = 40: the heap sort) and a short one", r(1, 2, 40, s=4.0), seed=5)


if __name__ == "__main__":
    main()
