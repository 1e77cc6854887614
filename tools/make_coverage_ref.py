#!/usr/bin/python3
"""make_coverage_ref.py — PyTorch reference data for coverage (Tu et al. 2016;
See et al. 2017), read by tests/test_coverage.c.

    /usr/bin/python3 tools/make_coverage_ref.py

(Debian's interpreter: torch 1.13 and numpy.) Builds on tools/ref_model.py's
torch.nn model (same encoder, cells, state_dict names and file writer) and
adds, written from the papers and not from src/seq2seq/coverage.c:
  - the coverage vector cov_t = Σ_{t'<t} α_t' (cov_0 = 0), carried in the
    decoder state from step to step;
  - with coverage=1, the additive score with the coverage input (See et al.
    eq. 11): e_tj = vᵀ tanh(Wq q_t + Wk h_j + b + w_cov cov_tj), parameter
    attention.w_cov [A] registered after attention.v, initialised as
    nn.Linear(1, A)'s weight (U(±1));
  - the coverage loss (See et al. eq. 12) λ Σ_t Σ_j min(α_tj, cov_tj) over the
    counted steps, divided by the counted tokens like the cross-entropy
    (torch.minimum; autograd takes the gradient through every earlier α).
For each model below: PyTorch's default initialisation under a fixed seed, a
few Adam steps in float64 on the reverse task (so the weights are not at
their initial symmetry), every parameter rounded to float32 (the weights the
C library loads, written to tests/ref/coverage_<name>.safetensors in our
model-file format with "coverage":1 in the config when set), then in float64
on one fixed padded batch with random targets: the loss (cross-entropy + the
coverage loss), the gradient of every parameter, and each row's forced
alignment (the attention weights of every step, EOS step included), written
to tests/ref/coverage_<name>.txt in ref_model.py's text format:
    lambda [1], src [N,S], src_len [N], tgt_in [N,T], tgt_out [N,T],
    tgt_len [N], loss [1], tokens [1], grad.<name> per parameter,
    align [N,T,S] (row n's steps t < tgt_len[n]; zero after)
Deterministic: running it twice writes byte-identical files.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model as R  # noqa: E402

torch.set_num_threads(1)

# name, architecture, coverage input, coverage-loss λ, torch seed, Adam steps
MODELS = [
    ("gru_bahdanau", dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7,
                          attn=4), 1, 0.0, 5101, 60),
    ("lstm_luong_loss", dict(cell="lstm", decoder="luong", score="additive", enc_hidden=4, enc_layers=1,
                             dec_hidden=6, attn=5), 1, 0.5, 5102, 60),
    ("gru_bahdanau_lossonly", dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1,
                                   dec_hidden=7, attn=4), 0, 0.8, 5103, 60),
]


class CoverageAttention(R.AdditiveAttention):
    """e_j = vᵀ tanh(Wq q + Wk h_j + b + w_cov cov_j)."""

    def __init__(self, Hd, E, A):
        super().__init__(Hd, E, A)
        self.w_cov = nn.Parameter(torch.empty(A))
        nn.init.uniform_(self.w_cov, -1.0, 1.0)   # nn.Linear(1, A).weight: fan_in 1

    def scores_cov(self, q, kp, cov):   # q [N,Hd], kp [N,S,A], cov [N,S] -> [N,S]
        return torch.tanh(kp + (q @ self.Wq.t())[:, None, :] + cov[:, :, None] * self.w_cov) @ self.v


class CoverageSeq2Seq(R.Seq2Seq):
    def __init__(self, cfg, coverage, lam):
        super().__init__(cfg)
        self.coverage, self.lam = coverage, lam
        if coverage:   # replaces the plain additive module; registration order Wq, Wk, b, v, w_cov
            E, Hd, A = 2 * cfg["enc_hidden"], cfg["dec_hidden"], cfg["attn"]
            state = self.attention.state_dict()
            self.attention = CoverageAttention(Hd, E, A)
            with torch.no_grad():
                for k, v in state.items():
                    getattr(self.attention, k).copy_(v)
            # keep the module order of the file: attention before decoder
            order = ["src_emb", "tgt_emb", "encoder", "bridge", "attention", "decoder", "combine", "out"]
            self._modules = type(self._modules)((k, self._modules[k]) for k in order if k in self._modules)

    def attend(self, q, ctx):
        cov = ctx["cov"]
        if self.coverage:
            e = self.attention.scores_cov(q, ctx["kp"], cov)
        else:
            e = self.attention.scores(q, ctx["kp"])
        e = e.masked_fill(~ctx["valid"], float("-inf"))
        w = torch.softmax(e, dim=-1)
        ctx["step_cov"] = cov                          # cov_t, for the loss
        ctx["cov"] = cov + w                           # cov_{t+1} = cov_t + α_t
        return w, torch.bmm(w[:, None, :], ctx["enc"]).squeeze(1)

    def forward(self, src, src_len, tgt_in, tgt_out):
        st, ctx = self.encode(src, src_len)
        ctx["cov"] = torch.zeros(src.shape, dtype=ctx["enc"].dtype)
        outs, ws, covs = [], [], []
        for t in range(tgt_in.shape[1]):
            o, st, w = self.step(tgt_in[:, t], st, ctx)
            outs.append(o)
            ws.append(w)
            covs.append(ctx["step_cov"])
        out = torch.stack(outs, dim=1)
        counted = tgt_out != R.PAD                     # [N,T]
        tokens = int(counted.sum())
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), tgt_out.reshape(-1), ignore_index=R.PAD)
        if self.lam > 0:
            W, C = torch.stack(ws, dim=1), torch.stack(covs, dim=1)   # [N,T,S]
            loss = loss + self.lam * (torch.minimum(W, C).sum(-1) * counted).sum() / tokens
        return loss, tokens, ws


def make(name, arch, coverage, lam, seed, steps):
    cfg = dict(R.COMMON, **arch)
    torch.manual_seed(seed)
    model = CoverageSeq2Seq(cfg, coverage, lam)
    model.double()
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(model.parameters(), lr=0.02)
    for _ in range(steps):   # the reverse task, a few steps (no greedy here: structure is not needed)
        lengths = [int(v) for v in rng.integers(1, 7, size=16)]
        src = R.symbols_batch(rng, lengths, len(R.SRC_SYMBOLS))
        tin, tout, _ = R.make_targets(src, lengths, R.task_targets(src, lengths, False), False)
        opt.zero_grad()
        loss, _, _ = model(torch.from_numpy(src), torch.tensor(lengths), torch.from_numpy(tin), torch.from_numpy(tout))
        loss.backward()
        opt.step()
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(p.float().double())
    params = list(model.named_parameters())
    names = R.expected_names(cfg)
    if coverage:
        names.insert(names.index("attention.v") + 1, "attention.w_cov")
    assert [n for n, _ in params] == names, [n for n, _ in params]
    tensors = [(n, p.detach().numpy().astype(np.float32)) for n, p in params]
    meta = R.file_metadata(cfg)
    conf = {k: cfg[k] for k in R.CONFIG_FIELDS}
    if coverage:
        conf["coverage"] = 1
    meta["attend.config"] = json.dumps(conf, separators=(",", ":"))
    st_bytes = R.safetensors_bytes(tensors, meta)

    src = R.symbols_batch(rng, R.BATCH_SRC_LEN, len(R.SRC_SYMBOLS))
    ys = [[int(v) for v in rng.integers(4, 4 + len(R.TGT_SYMBOLS), size=L)] for L in R.BATCH_TGT_LEN]
    tin, tout, tlen = R.make_targets(src, R.BATCH_SRC_LEN, ys, False)
    model.zero_grad()
    loss, tokens, ws = model(torch.from_numpy(src), torch.tensor(R.BATCH_SRC_LEN), torch.from_numpy(tin),
                             torch.from_numpy(tout))
    loss.backward()
    N, T, S = src.shape[0], tin.shape[1], src.shape[1]
    align = np.zeros((N, T, S))
    for n in range(N):
        for t in range(int(tlen[n])):
            align[n, t] = ws[t][n].detach().numpy()
    parts = [
        "# coverage reference: %s; tools/make_coverage_ref.py (torch %s, float64 from float32 weights)\n"
        % (name, torch.__version__.split("+")[0]),
        "# config %s, coverage loss lambda %g\n" % (json.dumps(conf, separators=(",", ":")), lam),
        "# torch seed %d, %d Adam steps (lr 0.02) on the reverse task before rounding to float32\n" % (seed, steps),
    ]
    parts.append(R.fmt_tensor("lambda", np.array([lam])))
    parts.append(R.fmt_tensor("src", src, True))
    parts.append(R.fmt_tensor("src_len", np.array(R.BATCH_SRC_LEN), True))
    parts.append(R.fmt_tensor("tgt_in", tin, True))
    parts.append(R.fmt_tensor("tgt_out", tout, True))
    parts.append(R.fmt_tensor("tgt_len", tlen, True))
    parts.append(R.fmt_tensor("loss", np.array([loss.item()])))
    parts.append(R.fmt_tensor("tokens", np.array([tokens]), True))
    for n, p in params:
        parts.append(R.fmt_tensor("grad." + n, p.grad.numpy()))
    parts.append(R.fmt_tensor("align", align))
    return st_bytes, "".join(parts), "%s: loss %.6f over %d tokens" % (name, loss.item(), tokens)


def main():
    for name, arch, coverage, lam, seed, steps in MODELS:
        st_bytes, text, summary = make(name, arch, coverage, lam, seed, steps)
        R.write(os.path.join(R.OUT_DIR, "coverage_%s.safetensors" % name), st_bytes)
        R.write(os.path.join(R.OUT_DIR, "coverage_%s.txt" % name), text.encode("utf-8"))
        print("  " + summary)


if __name__ == "__main__":
    main()
