#!/usr/bin/python3
"""make_dropout_ref.py — PyTorch references of dropout and label smoothing
(issue 14) for tests/test_dropout_ref.c.

    /usr/bin/python3 tools/make_dropout_ref.py

(Debian's interpreter: torch 1.13 and numpy.) For each model of
tools/ref_model.py it loads the committed weights tests/ref/model_<name>.safetensors
and the fixed batch of tests/ref/model_<name>.txt (both written by
ref_model.py; read here, never rewritten) into ref_model.Seq2Seq, and computes
in float64, with autograd, the teacher-forced loss and the gradient of every
parameter in two cases:

  ls.*    label smoothing 0.1 alone: the loss is
          F.cross_entropy(logits, y, ignore_index=PAD, label_smoothing=0.1),
          PyTorch's own definition. The pointer model has no PyTorch
          counterpart: its smoothing spreads ε over the positions the step may
          choose (the finite log-probabilities), written out by hand.
  drop.*  dropout 0.3 with key 12345, and label smoothing 0.1: the same
          masks as src/seq2seq/dropout.c, computed here from the same hash
          (splitmix64's mix of key, site, row, position, element; kept when
          u >= p, scaled by 1/(1-p)) and multiplied in at the same sites: the
          source embeddings, the input of every encoder layer above the first
          (the encoder run one layer at a time on the model's own weights),
          the decoder's input embeddings and the output features (the
          vector fed to `out`: [s_t; c_t], or h̃_t for luong, whose input
          feeding keeps the undropped h̃_t).

Format: tools/ref_model.py's text format; per case <case>.p [1],
<case>.label_smoothing [1], <case>.key [1], <case>.loss [1] and
<case>.grad.<tensor> for every parameter in file order. Deterministic:
running the script twice writes byte-identical files.
"""
import json
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import ref_model  # noqa: E402
import torch_convert  # noqa: E402

REF = ref_model.OUT_DIR
PAD, BOS = ref_model.PAD, ref_model.BOS
CASES = [("ls", 0.0, 0.1, 0), ("drop", 0.3, 0.1, 12345)]
SITE_SRC_EMB, SITE_DEC_IN, SITE_FEAT, SITE_ENC_LAYER = 1, 2, 3, 16

torch.set_num_threads(1)

# ------------------------------------------------- the masks of dropout.c

M64 = (1 << 64) - 1


def mix64(z):
    z = (z + 0x9e3779b97f4a7c15) & M64
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M64
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M64
    return z ^ (z >> 31)


def mask(p, key, site, rows, positions, width, rows_first):
    """[A,B,W] factors: A = rows, B = positions when rows_first, else [positions, rows, W]."""
    A, B = (rows, positions) if rows_first else (positions, rows)
    out = np.zeros((A, B, width))
    for a in range(A):
        for b in range(B):
            row, pos = (a, b) if rows_first else (b, a)
            base = mix64(mix64(mix64(key ^ site) ^ row) ^ pos)
            for e in range(width):
                u = (mix64(base ^ e) >> 11) * (1.0 / 9007199254740992.0)
                out[a, b, e] = 1.0 / (1.0 - p) if u >= p else 0.0
    return torch.from_numpy(out)


# ------------------------------------------------------ the model, dropped

class Regularised(ref_model.Seq2Seq):
    """ref_model.Seq2Seq with the masks multiplied in (masks None: plain)."""

    def layer(self, l):
        """A one-layer bidirectional RNN whose parameters ARE layer l's."""
        cfg = self.cfg
        I = cfg["emb"] if l == 0 else 2 * cfg["enc_hidden"]
        r = (nn.LSTM if self.lstm else nn.GRU)(I, cfg["enc_hidden"], num_layers=1, batch_first=True,
                                                bidirectional=True).double()
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            for sfx in ("", "_reverse"):
                setattr(r, "%s_l0%s" % (name, sfx), getattr(self.encoder, "%s_l%d%s" % (name, l, sfx)))
        return r

    def encode(self, src, src_len):
        N, S = src.shape
        x = self.src_emb(src) * self.masks["src"]                        # [N,S,D]
        for l in range(self.cfg["enc_layers"]):
            if l > 0:
                x = x * self.masks["layer%d" % l]                        # [N,S,E]
            packed = pack_padded_sequence(x, src_len, batch_first=True, enforce_sorted=False)
            out, hn = self.layer(l)(packed)
            if self.lstm:
                hn = hn[0]
            x, _ = pad_packed_sequence(out, batch_first=True, total_length=S)
        enc = x
        fin = torch.cat([hn[0], hn[1]], dim=-1)
        s0 = torch.tanh(self.bridge(fin))
        valid = torch.arange(S)[None, :] < src_len[:, None]
        st = {"s": s0}
        if self.lstm:
            st["c"] = torch.zeros_like(s0)
        if self.kind == "luong":
            st["ht"] = torch.zeros_like(s0)
        ctx = {"src": src, "enc": enc, "fin": fin, "valid": valid,
               "kp": self.attention.keys(enc) if self.kind != "none" else None}
        return st, ctx

    def step_t(self, t, y_prev, st, ctx):
        if self.pointer:
            ids = ctx["src"].gather(1, y_prev.clamp(min=0)[:, None]).squeeze(1)
            x = self.src_emb(torch.where(y_prev >= 0, ids, torch.full_like(ids, BOS)))
        else:
            x = self.tgt_emb(y_prev)
        x = x * self.masks["dec"][t]                                     # [N,D]
        feat_mask = self.masks["feat"][:, t] if "feat" in self.masks else None
        if self.kind in ("bahdanau", "none"):
            if self.kind == "bahdanau":
                w, c = self.attend(st["s"], ctx)
            else:
                w, c = None, ctx["fin"]
            new = self.cell(torch.cat([x, c], dim=-1), st)
            return self.out(torch.cat([new["s"], c], dim=-1) * feat_mask), new, w
        if self.kind == "luong":
            new = self.cell(torch.cat([x, st["ht"]], dim=-1), st)
            w, c = self.attend(new["s"], ctx)
            new["ht"] = torch.tanh(self.combine(torch.cat([c, new["s"]], dim=-1)))
            return self.out(new["ht"] * feat_mask), new, w                # input feeding keeps h̃_t undropped
        new = self.cell(x, st)
        logp, _ = self.attend(new["s"], ctx)
        return logp, new, logp.exp()

    def loss(self, src, src_len, tgt_in, tgt_out, ls):
        st, ctx = self.encode(src, src_len)
        outs = []
        for t in range(tgt_in.shape[1]):
            o, st, _ = self.step_t(t, tgt_in[:, t], st, ctx)
            outs.append(o)
        out = torch.stack(outs, dim=1)
        if not self.pointer:
            return F.cross_entropy(out.reshape(-1, out.shape[-1]), tgt_out.reshape(-1), ignore_index=PAD,
                                   label_smoothing=ls)
        lp = out.reshape(-1, out.shape[-1])                               # [N*T,S], -inf where masked
        y = tgt_out.reshape(-1)
        keep = y >= 0
        lp, y = lp[keep], y[keep]
        nll = -lp.gather(1, y[:, None]).squeeze(1)
        fin = torch.isfinite(lp)
        uniform = -torch.where(fin, lp, torch.zeros_like(lp)).sum(1) / fin.sum(1)
        return ((1 - ls) * nll + ls * uniform).mean()


# ------------------------------------------------------------------ files

def read_ref(path):
    """name -> numpy array of a ref_model.py text file."""
    out, lines, i = {}, [l for l in open(path).read().split("\n") if l and not l.startswith("#")], 0
    while i < len(lines):
        head = lines[i].split()
        name, nd, dims = head[0], int(head[1]), [int(d) for d in head[2:]]
        rows = int(np.prod(dims[:-1])) if nd > 1 else 1
        vals = [float(v) for l in lines[i + 1:i + 1 + rows] for v in l.split()]
        out[name] = np.array(vals).reshape(dims)
        i += 1 + rows
    return out


def make(name):
    meta, tensors = torch_convert.read_attend(os.path.join(REF, "model_%s.safetensors" % name))
    cfg = json.loads(meta["attend.config"])
    model = Regularised(cfg).double()
    model.load_state_dict({n: torch.from_numpy(a.astype(np.float64)) for n, a in tensors.items()})
    ref = read_ref(os.path.join(REF, "model_%s.txt" % name))
    src = torch.from_numpy(ref["src"].astype(np.int64))
    src_len = torch.from_numpy(ref["src_len"].astype(np.int64))
    tin = torch.from_numpy(ref["tgt_in"].astype(np.int64))
    tout = torch.from_numpy(ref["tgt_out"].astype(np.int64))
    N, S = src.shape
    T = tin.shape[1]
    D, E, Hd = cfg["emb"], 2 * cfg["enc_hidden"], cfg["dec_hidden"]
    Fw = Hd if cfg["decoder"] == "luong" else Hd + E
    parts = ["# dropout and label-smoothing reference: %s; tools/make_dropout_ref.py (torch %s, float64 from the\n"
             "# float32 weights of model_%s.safetensors, the batch of model_%s.txt)\n"
             % (name, torch.__version__.split("+")[0], name, name)]
    summary = []
    # the rewritten encoder and step, with no mask and no smoothing, are ref_model.py's model
    ones = lambda *s: torch.ones(*s, dtype=torch.float64)  # noqa: E731
    model.masks = {"src": ones(N, S, D), "dec": ones(T, N, D), "feat": ones(N, T, Fw)}
    for l in range(1, cfg["enc_layers"]):
        model.masks["layer%d" % l] = ones(N, S, E)
    with torch.no_grad():
        plain = model.loss(src, src_len, tin, tout, 0.0).item()
    assert abs(plain - float(ref["loss"][0])) < 1e-9, (name, plain, float(ref["loss"][0]))
    for case, p, ls, key in CASES:
        if p > 0:
            model.masks = {"src": mask(p, key, SITE_SRC_EMB, N, S, D, True),
                           "dec": mask(p, key, SITE_DEC_IN, N, T, D, False)}
            for l in range(1, cfg["enc_layers"]):
                model.masks["layer%d" % l] = mask(p, key, SITE_ENC_LAYER + l, N, S, E, True)
            if cfg["decoder"] != "pointer":
                model.masks["feat"] = mask(p, key, SITE_FEAT, N, T, Fw, True)
        model.zero_grad()
        loss = model.loss(src, src_len, tin, tout, ls)
        loss.backward()
        parts.append(ref_model.fmt_tensor(case + ".p", np.array([p])))
        parts.append(ref_model.fmt_tensor(case + ".label_smoothing", np.array([ls])))
        parts.append(ref_model.fmt_tensor(case + ".key", np.array([key]), True))
        parts.append(ref_model.fmt_tensor(case + ".loss", np.array([loss.item()])))
        for n, prm in model.named_parameters():
            parts.append(ref_model.fmt_tensor(case + ".grad." + n, prm.grad.numpy()))
        summary.append("%s loss %.6f (plain %.6f)" % (case, loss.item(), float(ref["loss"][0])))
    path = os.path.join(REF, "dropout_%s.txt" % name)
    with open(path, "w") as f:
        f.write("".join(parts))
    print("wrote %s: %s" % (os.path.relpath(path), ", ".join(summary)))


def main():
    for name, _, _, _ in ref_model.MODELS:
        make(name)


if __name__ == "__main__":
    main()
