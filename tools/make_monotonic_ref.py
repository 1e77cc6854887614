#!/usr/bin/python3
"""Reference data for the monotonic attention kernels (src/core/monotonic.c).

Writes tests/ref/monotonic_NN.txt (read by tests/test_monotonic.c through
tests/ref_reader.h). The expected alignment is computed here in PyTorch with
Raffel et al. 2017's parallel form (cumulative products and
sums over the source, not the C code's recurrence) in float64, its gradients
by autograd; the hard process by a plain loop.

    /usr/bin/python3 tools/make_monotonic_ref.py

(Debian's python3-torch; the first python3 on PATH may lack torch.)
"""
import os
import sys

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref")
# (N, T, S, seed); the last case has positions whose hard choice is exactly tested
CASES = [(1, 1, 1, 1), (2, 3, 4, 2), (3, 4, 6, 3), (2, 5, 3, 4), (1, 6, 7, 5)]


def exclusive_cumprod(x):
    """[..., S] -> [1, x_0, x_0 x_1, ...]."""
    ones = torch.ones_like(x[..., :1])
    return torch.cumprod(torch.cat([ones, x[..., :-1]], dim=-1), dim=-1)


def expected_alignment(e, r, mask):
    """e [N,T,S], r scalar tensor, mask [N,S] bool (True = valid) -> alpha [N,T,S]."""
    N, T, S = e.shape
    p = torch.sigmoid(e + r) * mask[:, None, :].to(e.dtype)
    prev = torch.zeros(N, S, dtype=e.dtype)
    prev[:, 0] = 1
    rows = []
    for t in range(T):
        cp = exclusive_cumprod(1 - p[:, t])
        # the parallel form: q_t = cumprod(1-p) * cumsum(alpha_{t-1} / cumprod(1-p))
        q = cp * torch.cumsum(prev / torch.clamp(cp, min=1e-30), dim=-1)
        a = p[:, t] * q
        rows.append(a)
        prev = a
    return torch.stack(rows, dim=1)


def hard(e, r, lens):
    N, T, S = e.shape
    alpha = torch.zeros(N, T, S, dtype=e.dtype)
    pos = torch.zeros(N, T, dtype=torch.int64)
    for n in range(N):
        at = 0
        for t in range(T):
            found = S
            for j in range(at, S):
                if j < lens[n] and torch.sigmoid(e[n, t, j] + r).item() >= 0.5:
                    found = j
                    break
            if found < S:
                alpha[n, t, found] = 1
            pos[n, t] = found
            at = found
    return alpha, pos


def write_tensor(f, name, x):
    x = x.detach()
    dims = list(x.shape) if x.dim() > 0 else [1]
    f.write("%s %d %s\n" % (name, len(dims), " ".join(str(d) for d in dims)))
    flat = x.reshape(-1).tolist()
    if x.dtype in (torch.int64, torch.int32):
        f.write(" ".join("%d" % v for v in flat) + "\n")
    else:
        f.write(" ".join(repr(float(v)) for v in flat) + "\n")


def main():
    os.makedirs(OUT, exist_ok=True)
    for i, (N, T, S, seed) in enumerate(CASES):
        g = torch.Generator().manual_seed(seed)
        # energies rounded to float32 so the C side reads exactly these inputs
        e = ((torch.rand(N, T, S, generator=g, dtype=torch.float64) * 6 - 3).float().double()).requires_grad_(True)
        r = torch.tensor(float(torch.rand(1, generator=g).item() * 2 - 1), dtype=torch.float64).float().double()
        r.requires_grad_(True)
        lens = torch.randint(1, S + 1, (N,), generator=g)
        lens[0] = S  # one full row in every case
        mask = torch.arange(S)[None, :] < lens[:, None]
        alpha = expected_alignment(e, r, mask)
        u = (torch.rand(N, T, S, generator=g, dtype=torch.float64) * 2 - 1).float().double()
        (alpha * u).sum().backward()
        ha, hpos = hard(e.detach(), r.detach(), lens.tolist())
        path = os.path.join(OUT, "monotonic_%02d.txt" % i)
        with open(path, "w") as f:
            f.write("# monotonic attention reference: tools/make_monotonic_ref.py (torch %s, float64; "
                    "Raffel et al. 2017, parallel form, autograd)\n" % torch.__version__)
            f.write("# case %d: N=%d T=%d S=%d seed %d; loss = sum(dalpha * alpha)\n" % (i, N, T, S, seed))
            write_tensor(f, "e", e)
            write_tensor(f, "r", r)
            write_tensor(f, "len", lens)
            write_tensor(f, "alpha", alpha)
            write_tensor(f, "dalpha", u)
            write_tensor(f, "de", e.grad)
            write_tensor(f, "dr", r.grad)
            write_tensor(f, "hard_alpha", ha)
            write_tensor(f, "hard_pos", hpos)
        print("wrote", os.path.relpath(path))
    return 0


if __name__ == "__main__":
    sys.exit(main())
