#!/usr/bin/python3
"""make_guide_ref.py — PyTorch reference of guided alignment (Chen et al.
2016; Marian's --guided-alignment with the "ce" cost) for tests/test_guide.c.

    /usr/bin/python3 tools/make_guide_ref.py

(Debian's interpreter: torch 1.13 and numpy.) The model is tools/ref_model.py's
Seq2Seq (ordinary torch.nn code), loaded in float64 from the committed
float32 weights tests/ref/model_<name>.safetensors of the attentive token
decoders. For one fixed padded batch with word alignments (links i-j: source
position i, target token j) the loss is

    F.cross_entropy(logits, tgt_out, ignore_index=PAD)
      + LAMBDA * (Σ_{n,t} −Σ_s a_nts log(α_nts + 1e-6)) / count

a_nt uniform over the source positions aligned to target token t of row n
(steps without links, and the EOS step, add nothing), α the attention
weights PyTorch computes, count the counted target tokens (targets + EOS),
written from the formula above and not from src/seq2seq/guide.c. The file
tests/ref/guide_<name>.txt holds (tools/ref_model.py's text format):
    src [N,S], src_len [N], tgt_in [N,T], tgt_out [N,T], tgt_len [N],
    align [N,T,S] (1 = aligned), lambda [1], loss [1] (the total),
    guided [1] (the alignment term per counted token, before lambda),
    grad.<tensor name> for every parameter, in file order.
Deterministic: no random numbers at all.
"""
import json
import os
import struct
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ref_model  # noqa: E402  (the reference encoder-decoder)

torch.set_num_threads(1)
OUT_DIR = ref_model.OUT_DIR
PAD = ref_model.PAD
EPS = 1e-6
LAMBDA = 0.7
NAMES = ["gru_bahdanau_additive", "gru_luong_general", "lstm_bahdanau_scaled_dot"]

# The batch (N = 3, source and target ids of tools/ref_model.py's vocabularies:
# source 4..9, target 4..10). Row 0: a link per token but one (target 1 has two
# source positions, target 2 none); row 1: the longest source, one link; row 2:
# no alignment at all.
SRC = [[4, 7, 5, 9], [6, 5, 4, 8, 9, 7], [9, 4]]
TGT = [[5, 8, 4], [10], [7, 6, 6, 4]]
LINKS = [[(3, 0), (1, 1), (2, 1)], [(5, 0)], []]


def load_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n].decode("utf-8"))
    meta = header.pop("__metadata__")
    base = 8 + n
    tensors = {}
    for name, d in header.items():
        assert d["dtype"] == "F32", (name, d["dtype"])
        a, b = d["data_offsets"]
        tensors[name] = np.frombuffer(raw[base + a:base + b], dtype="<f4").reshape(d["shape"])
    return json.loads(meta["attend.config"]), tensors


def make(name):
    cfg, tensors = load_safetensors(os.path.join(OUT_DIR, "model_%s.safetensors" % name))
    model = ref_model.Seq2Seq(cfg).double()
    with torch.no_grad():
        for pname, p in model.named_parameters():
            p.copy_(torch.from_numpy(tensors[pname].astype(np.float64)))
    N, S = len(SRC), max(len(s) for s in SRC)
    src = np.zeros((N, S), dtype=np.int64)
    for n, row in enumerate(SRC):
        src[n, :len(row)] = row
    src_len = [len(s) for s in SRC]
    tin, tout, tlen = ref_model.make_targets(src, src_len, TGT, False)
    T = tin.shape[1]
    align = np.zeros((N, T, S), dtype=np.int64)
    for n, links in enumerate(LINKS):
        for i, j in links:
            assert i < src_len[n] and j < len(TGT[n])
            align[n, j, i] = 1

    model.zero_grad()
    ce, out, ws = model(torch.from_numpy(src), torch.tensor(src_len), torch.from_numpy(tin), torch.from_numpy(tout))
    count = int(sum(len(y) + 1 for y in TGT))
    term = torch.zeros((), dtype=torch.float64)
    for n in range(N):
        for t in range(T):
            k = int(align[n, t].sum())
            if k == 0:
                continue
            a = torch.from_numpy(align[n, t].astype(np.float64)) / k
            term = term - (a * torch.log(ws[t][n] + EPS)).sum()
    loss = ce + LAMBDA * term / count
    loss.backward()

    parts = [
        "# guided alignment reference: %s; tools/make_guide_ref.py (torch %s, float64 from the float32 weights "
        "of tests/ref/model_%s.safetensors)\n" % (name, torch.__version__.split("+")[0], name),
        "# loss = cross-entropy + lambda * sum_{n,t} -sum_s a_nts log(alpha_nts + %g) / count\n" % EPS,
    ]
    fmt = ref_model.fmt_tensor
    parts.append(fmt("src", src, True))
    parts.append(fmt("src_len", np.array(src_len), True))
    parts.append(fmt("tgt_in", tin, True))
    parts.append(fmt("tgt_out", tout, True))
    parts.append(fmt("tgt_len", tlen, True))
    parts.append(fmt("align", align, True))
    parts.append(fmt("lambda", np.array([LAMBDA])))
    parts.append(fmt("loss", np.array([loss.item()])))
    parts.append(fmt("guided", np.array([term.item() / count])))
    for pname, p in model.named_parameters():
        parts.append(fmt("grad." + pname, p.grad.numpy()))
    return "".join(parts), "%s: cross-entropy %.6f, guided term %.6f per token, loss %.6f" % (
        name, ce.item(), term.item() / count, loss.item())


def main():
    for name in NAMES:
        text, summary = make(name)
        path = os.path.join(OUT_DIR, "guide_%s.txt" % name)
        with open(path, "wb") as f:
            f.write(text.encode("utf-8"))
        print("wrote %s (%d bytes)\n  %s" % (os.path.relpath(path), len(text), summary))


if __name__ == "__main__":
    main()
