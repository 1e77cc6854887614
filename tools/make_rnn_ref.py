#!/usr/bin/python3
"""make_rnn_ref.py — PyTorch reference data for tests/test_rnn_ref.c.

A one-layer bidirectional nn.GRU and nn.LSTM (batch_first, float64) run over
a padded batch with per-sequence lengths through pack_padded_sequence
(enforce_sorted=False, lengths deliberately unsorted, including 1 and S), and
the gradients of a random linear loss
    L = Σ r_out·out + Σ r_h·h_n (+ Σ r_c·c_n)
w.r.t. x, h0 (c0) and every weight. Writes tests/ref/rnn_gru.txt and
tests/ref/rnn_lstm.txt.

    /usr/bin/python3 tools/make_rnn_ref.py

(Debian's interpreter: it has torch and numpy.) Deterministic: every random
number comes from one numpy PCG64 generator with a fixed seed, drawn in
float32 and widened to float64 (so the float32 C library sees exactly the
inputs the float64 reference used); torch only computes, on one thread.
Running the script twice writes identical files.

File format (read by tests/test_rnn_ref.c):
    # comment lines (first lines only)
    <name> <ndim> <d0> ... <d(ndim-1)>
    <values, row-major, one row of the last dimension per line, %.17g>
    ...
Tensors, in order:
    len [N]; x [N,S,I] (padding positions hold random values, which must be
    ignored); h0 [2,N,H]; c0 [2,N,H] (LSTM); the eight PyTorch parameters
    weight_ih_l0 [G*H,I], weight_hh_l0 [G*H,H], bias_ih_l0 [G*H],
    bias_hh_l0 [G*H] and the same with _reverse; r_out [N,S,2H] (nonzero at
    padding too: padded outputs are constant zeros, so it must not matter);
    r_h [2,N,H]; r_c [2,N,H] (LSTM); out [N,S,2H] (zeros at padding); h_n
    [2,N,H]; c_n [2,N,H] (LSTM); then d_<name> for x, h0, c0 and every
    parameter. Index 0 of the leading 2 is the forward direction, 1 reverse.
"""
import os

import numpy as np
import torch
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

SEED = 20261207
N, S, I, H = 4, 7, 5, 3
LENGTHS = [5, 7, 1, 3]  # unsorted; includes len = 1 and len = S
OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))
PARAMS = ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]

torch.set_num_threads(1)
torch.set_default_dtype(torch.float64)


def uniform32(rng, shape, scale):
    """Uniform(-scale, scale) values that are exactly float32, as float64."""
    return rng.uniform(-scale, scale, size=shape).astype(np.float32).astype(np.float64)


def fmt_tensor(name, a):
    a = np.asarray(a, dtype=np.float64)
    lines = ["%s %d %s" % (name, a.ndim, " ".join(str(d) for d in a.shape))]
    rows = a.reshape(-1, a.shape[-1]) if a.ndim > 0 else a.reshape(1, 1)
    for row in rows:
        lines.append(" ".join("%.17g" % v for v in row))
    return "\n".join(lines) + "\n"


def make(kind, rng):
    lstm = kind == "lstm"
    G = 4 if lstm else 3
    cls = torch.nn.LSTM if lstm else torch.nn.GRU
    rnn = cls(I, H, num_layers=1, batch_first=True, bidirectional=True).double()
    k = 1.0 / np.sqrt(H)  # PyTorch's default init range, drawn by numpy here
    names = PARAMS + [p + "_reverse" for p in PARAMS]
    values = {}
    for p in names:
        shape = tuple(getattr(rnn, p).shape)
        values[p] = uniform32(rng, shape, k)
        with torch.no_grad():
            getattr(rnn, p).copy_(torch.from_numpy(values[p]))
    assert tuple(getattr(rnn, "weight_ih_l0").shape) == (G * H, I)

    x = torch.tensor(uniform32(rng, (N, S, I), 1.0), requires_grad=True)
    h0 = torch.tensor(uniform32(rng, (2, N, H), 0.5), requires_grad=True)
    c0 = torch.tensor(uniform32(rng, (2, N, H), 0.5), requires_grad=True) if lstm else None
    r_out = torch.tensor(uniform32(rng, (N, S, 2 * H), 1.0))
    r_h = torch.tensor(uniform32(rng, (2, N, H), 1.0))
    r_c = torch.tensor(uniform32(rng, (2, N, H), 1.0)) if lstm else None

    packed = pack_padded_sequence(x, torch.tensor(LENGTHS), batch_first=True, enforce_sorted=False)
    if lstm:
        out_p, (h_n, c_n) = rnn(packed, (h0, c0))
    else:
        out_p, h_n = rnn(packed, h0)
    out, out_len = pad_packed_sequence(out_p, batch_first=True, total_length=S)
    assert out_len.tolist() == LENGTHS
    loss = (out * r_out).sum() + (h_n * r_h).sum()
    if lstm:
        loss = loss + (c_n * r_c).sum()
    loss.backward()
    for n, L in enumerate(LENGTHS):  # padding outputs are zeros, padding inputs unused
        assert (out[n, L:] == 0).all() and (x.grad[n, L:] == 0).all()

    parts = ["# rnn reference: cell=%s N=%d S=%d I=%d H=%d seed=%d bidirectional, "
             "pack_padded_sequence(enforce_sorted=False); tools/make_rnn_ref.py\n"
             % (kind, N, S, I, H, SEED)]
    parts.append(fmt_tensor("len", np.array(LENGTHS, dtype=np.float64)))
    parts.append(fmt_tensor("x", x.detach().numpy()))
    parts.append(fmt_tensor("h0", h0.detach().numpy()))
    if lstm:
        parts.append(fmt_tensor("c0", c0.detach().numpy()))
    for p in names:
        parts.append(fmt_tensor(p, values[p]))
    parts.append(fmt_tensor("r_out", r_out.numpy()))
    parts.append(fmt_tensor("r_h", r_h.numpy()))
    if lstm:
        parts.append(fmt_tensor("r_c", r_c.numpy()))
    parts.append(fmt_tensor("out", out.detach().numpy()))
    parts.append(fmt_tensor("h_n", h_n.detach().numpy()))
    if lstm:
        parts.append(fmt_tensor("c_n", c_n.detach().numpy()))
    parts.append(fmt_tensor("d_x", x.grad.numpy()))
    parts.append(fmt_tensor("d_h0", h0.grad.numpy()))
    if lstm:
        parts.append(fmt_tensor("d_c0", c0.grad.numpy()))
    for p in names:
        parts.append(fmt_tensor("d_" + p, getattr(rnn, p).grad.numpy()))
    return "".join(parts)


def main():
    rng = np.random.default_rng(SEED)
    os.makedirs(OUT_DIR, exist_ok=True)
    for kind in ("gru", "lstm"):
        text = make(kind, rng)
        path = os.path.join(OUT_DIR, "rnn_%s.txt" % kind)
        with open(path, "w") as f:
            f.write(text)
        print("wrote %s" % os.path.relpath(path))


if __name__ == "__main__":
    main()
