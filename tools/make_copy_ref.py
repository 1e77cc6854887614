#!/usr/bin/python3
"""make_copy_ref.py — PyTorch reference for the copy mechanism (the
pointer-generator of See et al. 2017), read by tests/test_copy.c.

    /usr/bin/python3 tools/make_copy_ref.py

For two models (GRU Bahdanau/additive, LSTM Luong/general), both with copy,
it builds ref_model.py's Seq2Seq plus the copy tensors (copy.w_c [E],
copy.w_s [Hd], copy.w_x [D], copy.b [1], after out.bias), rounds the weights
to float32, and writes
  tests/ref/copy_<name>.safetensors  the weights as an attend model file
                                     (config "copy":1, the vocabularies below)
  tests/ref/copy_<name>.txt          one padded batch whose targets use the
                                     extended vocabulary, the loss, the
                                     teacher-forced statistics, every
                                     parameter's gradient, greedy decodes
                                     (copied ids >= Vt included) and their
                                     alignments (ref_model.py's text format)
The vocabularies differ on purpose: the source's a, b, c are also target
tokens (they copy as target ids 4, 5, 6), d, e, f are not (they copy as
extended ids Vt + j, j the first position holding the token), and <unk>
positions copy as Vt + j. Computed in float64 from the float32 weights.
Deterministic: fixed seeds, one thread; running it twice writes identical files.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model as R  # noqa: E402

PAD, BOS, EOS, UNK = R.PAD, R.BOS, R.EOS, R.UNK
SRC = list("abcdef")            # Vs = 10
TGT = list("abcXY")             # Vt = 9: a b c shared with the source
VS, VT = 4 + len(SRC), 4 + len(TGT)
MAP = [-1] * VS                 # source id -> target id (the four specials: none)
for i, s in enumerate(SRC):
    if s in TGT:
        MAP[4 + i] = 4 + TGT.index(s)
COMMON = dict(src_vocab=VS, tgt_vocab=VT, emb=5, max_batch=4, max_src_len=6, max_tgt_len=7)
MODELS = [
    ("gru_bahdanau_additive",
     dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=4, enc_layers=1, dec_hidden=6, attn=4), 5101),
    ("lstm_luong_general",
     dict(cell="lstm", decoder="luong", score="general", enc_hidden=4, enc_layers=1, dec_hidden=6, attn=4), 5103),
]
# the batch: sources with repeats and an <unk>; targets mix vocabulary ids and copies
BATCH_SRC = [[4, 7, 8, 7], [9, 3, 5, 6, 3, 8], [7, 4]]
# extended ids: row 0 [4, 10, 11, 10], row 1 [9, 10, 5, 6, 13, 14], row 2 [9, 4] (Vt = 9)
BATCH_TGT = [[10, 4, 11], [13, 5, 9, 10, 7], [4, 9, 7, 9, 8]]
GREEDY_SRC = [[7, 4, 8], [3, 9, 5, 7, 6], [8], [4, 5, 6, 7, 8, 9]]
GREEDY_MAX_LEN = 8
MIN_GAP = 1e-4


def ext_row(src):
    """The extended id of each source position (the copy extension's rule, src/seq2seq/extensions/copy.c)."""
    out = []
    for j, s in enumerate(src):
        if s != UNK and MAP[s] >= 0:
            out.append(MAP[s])
        elif s == UNK:
            out.append(VT + j)
        else:
            out.append(VT + src.index(s))
    return out


class CopyParams(nn.Module):
    def __init__(self, E, Hd, D):
        super().__init__()
        bound = 1.0 / np.sqrt(E + Hd + D)
        self.w_c = nn.Parameter(torch.empty(E).uniform_(-bound, bound))
        self.w_s = nn.Parameter(torch.empty(Hd).uniform_(-bound, bound))
        self.w_x = nn.Parameter(torch.empty(D).uniform_(-bound, bound))
        self.b = nn.Parameter(torch.empty(1).uniform_(-bound, bound))


class CopySeq2Seq(R.Seq2Seq):
    def __init__(self, cfg):
        super().__init__(cfg)
        E = 2 * cfg["enc_hidden"]
        self.add_module("copy", CopyParams(E, cfg["dec_hidden"], cfg["emb"]))

    def copy_step(self, y_prev, st, ctx, ext):
        """One step: log P over the extended vocabulary [N, Vt+S], the new state, the weights."""
        y_in = torch.where(y_prev >= VT, torch.full_like(y_prev, UNK), y_prev)   # a copied id reads <unk>
        x = self.tgt_emb(y_in)
        if self.kind == "bahdanau":
            w, c = self.attend(st["s"], ctx)
            new = self.cell(torch.cat([x, c], dim=-1), st)
            logits = self.out(torch.cat([new["s"], c], dim=-1))
        else:
            new = self.cell(torch.cat([x, st["ht"]], dim=-1), st)
            w, c = self.attend(new["s"], ctx)
            new["ht"] = torch.tanh(self.combine(torch.cat([c, new["s"]], dim=-1)))
            logits = self.out(new["ht"])
        cp = self.copy
        g = torch.sigmoid(c @ cp.w_c + new["s"] @ cp.w_s + x @ cp.w_x + cp.b)[:, None]   # p_gen [N,1]
        S = w.shape[1]
        P = torch.cat([g * torch.softmax(logits, dim=-1), torch.zeros(w.shape[0], S)], dim=1)
        P = P.scatter_add(1, ext, (1 - g) * w)        # padding positions: weight 0 into id 0
        return torch.log(P), new, w

    def copy_forward(self, src, src_len, tgt_in, tgt_out, ext):
        st, ctx = self.encode(src, src_len)
        outs, ws = [], []
        for t in range(tgt_in.shape[1]):
            o, st, w = self.copy_step(tgt_in[:, t], st, ctx, ext)
            outs.append(o)
            ws.append(w)
        out = torch.stack(outs, dim=1)               # [N,T,Vt+S]
        mask = tgt_out != PAD
        lp = out.gather(2, tgt_out.clamp(min=0)[:, :, None]).squeeze(2)
        return -(lp * mask).sum() / mask.sum(), out, ws

    @torch.no_grad()
    def copy_greedy(self, rows, max_len):
        M, S2 = len(rows), max(len(r) for r in rows)
        out = np.full((M, max_len), PAD, dtype=np.int64)
        out_len = np.zeros(M, dtype=np.int64)
        align = np.zeros((M, max_len, S2))
        gaps = []
        for n, row in enumerate(rows):
            L = len(row)
            src = torch.tensor([row])
            st, ctx = self.encode(src, torch.tensor([L]))
            ext = torch.tensor([ext_row(row)])
            y = torch.tensor([BOS])
            k = max_len
            for t in range(max_len):
                o, st, w = self.copy_step(y, st, ctx, ext)
                top2 = torch.topk(o[0], 2).values
                gaps.append(float(top2[0] - top2[1]))
                best = int(torch.argmax(o[0]))
                if best == EOS:
                    k = t
                    break
                out[n, t] = best
                align[n, t, :L] = w[0].numpy()
                y = torch.tensor([best])
            out_len[n] = k
        return out, out_len, align, min(gaps)


def batch_arrays():
    N, S = len(BATCH_SRC), max(len(r) for r in BATCH_SRC)
    src = np.zeros((N, S), dtype=np.int64)
    ext = np.zeros((N, S), dtype=np.int64)   # padding: id 0 with weight 0
    ys = []
    for n, row in enumerate(BATCH_SRC):
        src[n, :len(row)] = row
        e = ext_row(row)
        ext[n, :len(row)] = e
        ys.append(BATCH_TGT[n])
    tin, tout, tlen = R.make_targets(src, [len(r) for r in BATCH_SRC], ys, False)
    return src, ext, tin, tout, tlen


def make(name, arch, seed):
    cfg = dict(COMMON, **arch)
    torch.manual_seed(seed)
    model = CopySeq2Seq(cfg)
    model.double()
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(2.0)                     # larger weights: decisive argmaxes
            p.copy_(p.float().double())
        model.src_emb.weight[PAD].zero_()
        model.tgt_emb.weight[PAD].zero_()
    params = list(model.named_parameters())
    names = R.expected_names(cfg) + ["copy.w_c", "copy.w_s", "copy.w_x", "copy.b"]
    assert [n for n, _ in params] == names, [n for n, _ in params]
    tensors = [(n, p.detach().numpy().astype(np.float32)) for n, p in params]
    conf = {k: cfg[k] for k in R.CONFIG_FIELDS}
    conf["copy"] = 1
    meta = {
        "attend.format": "model",
        "attend.config": json.dumps(conf, separators=(",", ":")),
        "attend.tokenizer": "char",
        "attend.src_vocab": json.dumps(R.SPECIALS + SRC, separators=(",", ":")),
        "attend.tgt_vocab": json.dumps(R.SPECIALS + TGT, separators=(",", ":")),
    }
    st_bytes = R.safetensors_bytes(tensors, meta)

    src, ext, tin, tout, tlen = batch_arrays()
    src_len = torch.tensor([len(r) for r in BATCH_SRC])
    model.zero_grad()
    loss, out, ws = model.copy_forward(torch.from_numpy(src), src_len, torch.from_numpy(tin),
                                       torch.from_numpy(tout), torch.from_numpy(ext))
    loss.backward()
    tokens = correct = seqs_ok = 0
    entropy, gap = 0.0, float("inf")
    for n in range(src.shape[0]):
        ok = True
        for t in range(int(tlen[n])):
            row = out[n, t].detach()
            top2 = torch.topk(row, 2).values
            gap = min(gap, float(top2[0] - top2[1]))
            good = int(torch.argmax(row)) == int(tout[n, t])
            tokens += 1
            correct += good
            ok &= good
            w = ws[t][n].detach()
            w = w[w > 0]
            entropy -= float((w * w.log()).sum())
        seqs_ok += ok
    gout, glen, galign, ggap = model.copy_greedy(GREEDY_SRC, GREEDY_MAX_LEN)
    assert gap > MIN_GAP and ggap > MIN_GAP, (name, gap, ggap)
    S2 = max(len(r) for r in GREEDY_SRC)
    gsrc = np.zeros((len(GREEDY_SRC), S2), dtype=np.int64)
    for n, r in enumerate(GREEDY_SRC):
        gsrc[n, :len(r)] = r
    f = R.fmt_tensor
    parts = [
        "# copy reference: %s; tools/make_copy_ref.py (torch %s, float64 from float32 weights)\n"
        % (name, torch.__version__.split("+")[0]),
        "# config %s\n" % json.dumps(conf, separators=(",", ":")),
        "# smallest argmax gap: teacher-forced %.3g, greedy %.3g\n" % (gap, ggap),
        f("src", src, True), f("src_len", np.array([len(r) for r in BATCH_SRC]), True), f("tgt_in", tin, True),
        f("tgt_out", tout, True), f("tgt_len", tlen, True), f("loss", np.array([loss.item()])),
        f("tokens", np.array([tokens]), True), f("correct_tokens", np.array([correct]), True),
        f("correct_seqs", np.array([seqs_ok]), True), f("attn_entropy", np.array([entropy / tokens])),
    ]
    for n, p in params:
        parts.append(f("grad." + n, p.grad.numpy()))
    parts += [f("greedy_src", gsrc, True), f("greedy_src_len", np.array([len(r) for r in GREEDY_SRC]), True),
              f("greedy_max_len", np.array([GREEDY_MAX_LEN]), True), f("greedy_out", gout, True),
              f("greedy_out_len", glen, True), f("greedy_align", galign)]
    print("%s: loss %.6f, %d/%d right, greedy %s" % (name, loss.item(), correct, tokens,
                                                    [list(gout[i, :glen[i]]) for i in range(len(glen))]))
    return st_bytes, "".join(parts)


def main():
    for name, arch, seed in MODELS:
        st_bytes, text = make(name, arch, seed)
        R.write(os.path.join(R.OUT_DIR, "copy_%s.safetensors" % name), st_bytes)
        R.write(os.path.join(R.OUT_DIR, "copy_%s.txt" % name), text.encode("utf-8"))


if __name__ == "__main__":
    main()
