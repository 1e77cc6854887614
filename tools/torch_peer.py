#!/usr/bin/python3
"""torch_peer.py — the PyTorch side of bench/run.sh: the same measurements as
bench/bench.c, on the same configurations, one measurement per process, one
JSON line on stdout.

    /usr/bin/python3 tools/torch_peer.py train  [--decoder bahdanau|luong] [--len 20] [--batch 64] [--steps 20] [--warmup 3]
    /usr/bin/python3 tools/torch_peer.py greedy [--decoder ..] [--batch 1] [--len 20] [--max-len 22] [--iters 20]
    /usr/bin/python3 tools/torch_peer.py greedy --decoder transformer --model FILE [--batch 1] [...]
    /usr/bin/python3 tools/torch_peer.py beam   [--decoder ..] [--width 5] [--len 20] [--max-len 22] [--iters 20]
    /usr/bin/python3 tools/torch_peer.py kernel --name additive|scaled_dot|mha [--iters 5]

The model is tools/ref_model.py's Seq2Seq (the reference the C tests compare
against: nn.Embedding, a bidirectional nn.GRU over pack_padded_sequence, the
nn.Linear bridge, additive or general attention, nn.GRUCell decoder, nn.Linear
output, F.cross_entropy), so the two sides compute the same function with the
same tensor names. float32, torch.set_num_threads(--threads, default 2: the
machine's cores; Debian's torch 1.13 otherwise starts with one thread).
Training: Adam (lr 1e-3) with clip_grad_norm_(1.0), like attend's trainer in
bench.c. Decoding runs under torch.inference_mode(), batched over rows (greedy)
and over live hypotheses (beam), with the EOS output bias set to -1e4 so
every decode runs exactly --max-len steps, as in bench.c.

--decoder transformer (greedy only) decodes the weights of an attend model
file (--model FILE, written by `attend_bench export --decoder transformer`,
which bench.c's greedy --model FILE reads too): ref_model.py's Seq2Seq with
nn.TransformerEncoder / nn.TransformerDecoder built from the file's config,
its tensors loaded by name. The decoding loop is an explicit pre-norm
Transformer decoder step over those modules' weights that caches every
layer's self-attention keys and values (step t projects only its own token
and attends over the cache's t + 1 positions) and projects the
cross-attention keys and values once per source: the work attend's decoder
does, not nn.Transformer's whole-prefix recomputation. Before timing, its
tokens are checked against ref_model.py's uncached greedy (the whole prefix
through nn.TransformerDecoder at every step) on the first source; both sides
report tokens_fnv, the FNV-1a hash of all output tokens.
"""
import argparse
import json
import math
import os
import statistics
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from ref_model import BOS, EOS, PAD, Seq2Seq  # noqa: E402  (sets 1 thread; main() resets it)


def config(a, max_batch, max_src, max_tgt):
    luong = a.decoder == "luong"
    return dict(cell="gru", decoder=a.decoder, score="general" if luong else "additive",
                src_vocab=4 + a.symbols, tgt_vocab=4 + a.symbols, emb=a.emb, enc_hidden=a.hidden,
                enc_layers=1, dec_hidden=a.dec_hidden, attn=a.attn, max_batch=max_batch,
                max_src_len=max_src, max_tgt_len=max_tgt)


def reversal_batch(rng, N, L, symbols):
    """Every source of length L; tensors in attend_batch's layout."""
    src = rng.integers(4, 4 + symbols, size=(N, L))
    tin = np.full((N, L + 1), PAD, dtype=np.int64)
    tout = np.full((N, L + 1), PAD, dtype=np.int64)
    tin[:, 0] = BOS
    tin[:, 1:] = src[:, ::-1]
    tout[:, :L] = src[:, ::-1]
    tout[:, L] = EOS
    return (torch.from_numpy(src), torch.full((N,), L, dtype=torch.long), torch.from_numpy(tin),
            torch.from_numpy(tout))


def cpu_capability():
    """The ATen kernel level in use (ATEN_CPU_CAPABILITY restricts it)."""
    for ln in torch.__config__.show().splitlines():
        if "CPU capability usage:" in ln:
            return ln.split(":", 1)[1].strip()
    return "unknown"


def emit(**kw):
    kw = dict(side="torch", cpu_capability=cpu_capability(), **kw)
    print(json.dumps(kw), flush=True)


def bench_train(a):
    torch.manual_seed(1234)
    model = Seq2Seq(config(a, a.batch, a.len, a.len))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(7)
    batches = [reversal_batch(rng, a.batch, a.len, a.symbols) for _ in range(8)]

    def step(i):
        src, src_len, tin, tout = batches[i % len(batches)]
        opt.zero_grad()
        loss, _, _ = model(src, src_len, tin, tout)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss)

    for i in range(a.warmup):
        step(i)
    dts = []
    t0 = time.perf_counter()
    for i in range(a.steps):
        s = time.perf_counter()
        loss = step(i)
        dts.append(time.perf_counter() - s)
    total = time.perf_counter() - t0
    emit(bench="train", decoder=a.decoder, len=a.len, batch=a.batch, steps=a.steps,
         samples_per_s=a.batch * a.steps / total, step_ms_median=1e3 * statistics.median(dts), loss=loss)


def decode_model(a, max_batch):
    torch.manual_seed(1234)
    model = Seq2Seq(config(a, max_batch, a.len, a.max_len - 1))
    with torch.no_grad():
        model.out.bias[EOS] = -1e4  # no early stop, as in bench.c
    model.eval()
    return model


@torch.inference_mode()
def greedy(model, src, src_len, steps):
    st, ctx = model.encode(src, src_len)
    y = torch.full((src.shape[0],), BOS, dtype=torch.long)
    out = []
    for _ in range(steps):
        logits, st, _ = model.step(y, st, ctx)
        y = logits.argmax(-1)
        out.append(y)
    return torch.stack(out, 1)


@torch.inference_mode()
def beam(model, src, src_len, K, steps):
    """Width-K beam for one source, the algorithm of attend_model_beam: the
    best 2K (parent, token) continuations by total log-probability, EOS ends a
    hypothesis, the first K others continue; states reordered by parent."""
    st, ctx = model.encode(src, src_len)
    V = model.out.out_features
    scores = torch.zeros(1)
    y = torch.full((1,), BOS, dtype=torch.long)
    hist = torch.zeros(1, 0, dtype=torch.long)
    finished = []
    ctxK = {k: (v.expand(K, *v.shape[1:]) if torch.is_tensor(v) else v) for k, v in ctx.items()}
    live_ctx = ctx
    for t in range(steps):
        logits, st, _ = model.step(y, st, live_ctx)
        lp = F.log_softmax(logits, -1) + scores[:, None]
        lp[:, PAD] = -math.inf
        lp[:, BOS] = -math.inf
        top, idx = lp.reshape(-1).topk(2 * K)
        parent, token = idx // V, idx % V
        keep = token != EOS
        for j in torch.nonzero(~keep).flatten().tolist():
            finished.append((float(top[j]), hist[parent[j]].tolist()))
        parent, token, top = parent[keep][:K], token[keep][:K], top[keep][:K]
        st = {k: v.index_select(0, parent) for k, v in st.items()}
        hist = torch.cat([hist.index_select(0, parent), token[:, None]], 1)
        scores, y = top, token
        live_ctx = ctxK if parent.numel() == K else {k: (v[: parent.numel()] if torch.is_tensor(v) else v)
                                                      for k, v in ctxK.items()}
        if len(finished) >= K:
            break
    for i in range(hist.shape[0]):
        finished.append((float(scores[i]), hist[i].tolist()))
    finished.sort(key=lambda f: -f[0])
    return finished[:K]


def read_attend_model(path):
    """An attend model file (safetensors, F32 tensors): (config dict, {name: float32 array})."""
    with open(path, "rb") as f:
        data = f.read()
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    meta = header.pop("__metadata__")
    if meta.get("attend.format") != "model":
        raise SystemExit("torch_peer.py: %s: not an attend model file" % path)
    base, tensors = 8 + n, {}
    for name, t in header.items():
        if t["dtype"] != "F32":
            raise SystemExit("torch_peer.py: %s: tensor %s is %s, only F32 is read" % (path, name, t["dtype"]))
        lo, hi = t["data_offsets"]
        tensors[name] = np.frombuffer(data[base + lo:base + hi], dtype="<f4").reshape(t["shape"])
    return json.loads(meta["attend.config"]), tensors


def transformer_model(path):
    """ref_model.py's Seq2Seq with the file's configuration and weights, EOS forbidden, in eval mode."""
    file_cfg, tensors = read_attend_model(path)
    cfg = dict(dict(cell="gru", score="additive", positions="sinusoidal", post_norm=0), **file_cfg)
    if cfg.get("encoder") != "transformer" or cfg.get("decoder") != "transformer":
        raise SystemExit("torch_peer.py: %s: not a transformer encoder + decoder" % path)
    if cfg.get("post_norm", 0):
        raise SystemExit("torch_peer.py: %s: the cached decoder here is pre-norm only" % path)
    model = Seq2Seq(cfg)
    own = dict(model.named_parameters())
    if set(own) != set(tensors):
        raise SystemExit("torch_peer.py: %s: tensors differ from the model's: %s" % (
            path, sorted(set(tensors) ^ set(own))))
    with torch.no_grad():
        for name, p in own.items():
            p.copy_(torch.from_numpy(tensors[name].copy()).reshape(p.shape))
        model.out.bias[EOS] = -1e4  # no early stop, as in bench.c
    model.eval()
    return model, cfg


@torch.inference_mode()
def greedy_cached(model, cfg, src, src_len, steps):
    """Greedy decoding with a key/value cache (pre-norm nn.TransformerDecoderLayer's computation, written out)."""
    st, ctx = model.encode(src, src_len)
    enc = ctx["enc"]
    N, S, D = enc.shape
    H = cfg["heads"]
    dh = D // H
    scale = 1.0 / math.sqrt(dh)
    layers = model.decoder.layers
    pad = torch.zeros(N, 1, 1, S).masked_fill(~ctx["valid"][:, None, None, :], float("-inf"))
    cross = []
    for layer in layers:  # keys and values of the source, once: [N,H,S,dh]
        w, b = layer.multihead_attn.in_proj_weight, layer.multihead_attn.in_proj_bias
        k = F.linear(enc, w[D:2 * D], b[D:2 * D]).view(N, S, H, dh).transpose(1, 2)
        v = F.linear(enc, w[2 * D:], b[2 * D:]).view(N, S, H, dh).transpose(1, 2)
        cross.append((k, v))
    K = torch.empty(len(layers), N, H, steps, dh)
    V = torch.empty(len(layers), N, H, steps, dh)
    y = torch.full((N,), BOS, dtype=torch.long)
    out = []
    for t in range(steps):
        x = model.tgt_emb(y)
        if model.positions == "sinusoidal":
            x = x + model.pe_dec[t].to(x.dtype)
        elif model.positions == "learned":
            x = x + model.decoder.pos_emb[t]
        for l, layer in enumerate(layers):
            sa, ca = layer.self_attn, layer.multihead_attn
            q, k, v = F.linear(layer.norm1(x), sa.in_proj_weight, sa.in_proj_bias).view(N, 3, H, dh).unbind(1)
            K[l, :, :, t] = k
            V[l, :, :, t] = v
            p = torch.softmax((q[:, :, None, :] @ K[l, :, :, :t + 1].transpose(-1, -2)) * scale, -1)  # [N,H,1,t+1]
            x = x + sa.out_proj((p @ V[l, :, :, :t + 1]).reshape(N, D))
            q = F.linear(layer.norm2(x), ca.in_proj_weight[:D], ca.in_proj_bias[:D]).view(N, H, 1, dh)
            ck, cv = cross[l]
            p = torch.softmax((q @ ck.transpose(-1, -2)) * scale + pad, -1)  # [N,H,1,S]
            x = x + ca.out_proj((p @ cv).reshape(N, D))
            x = x + layer.linear2(F.relu(layer.linear1(layer.norm3(x))))
        y = model.out(model.decoder.norm(x)).argmax(-1)
        out.append(y)
    return torch.stack(out, 1)


def tokens_fnv(tokens):
    """FNV-1a over the tokens [N,T] row by row (bench.c's tokens_fnv)."""
    h = 2166136261
    for v in tokens.reshape(-1).tolist():
        h = ((h ^ v) * 16777619) & 0xFFFFFFFF
    return "%08x" % h


def bench_transformer_greedy(a):
    if not a.model:
        raise SystemExit("torch_peer.py: --decoder transformer needs --model FILE (attend_bench export)")
    model, cfg = transformer_model(a.model)
    N = a.batch
    src = attend_sources(N, a.len, a.symbols)
    src_len = torch.full((N,), a.len, dtype=torch.long)
    # the cache against the uncached reference (whole prefix every step), first source
    ref = model.greedy(src[:1], src_len[:1], a.max_len)[0]
    got = greedy_cached(model, cfg, src[:1], src_len[:1], a.max_len)
    if not torch.equal(ref[0], got[0]):
        raise SystemExit("torch_peer.py: the cached greedy decode differs from the uncached reference: %s vs %s" % (
            got[0].tolist(), ref[0].tolist()))
    dts = []
    for i in range(a.warmup + a.iters):
        s = time.perf_counter()
        res = greedy_cached(model, cfg, src, src_len, a.max_len)
        dt = time.perf_counter() - s
        if i >= a.warmup:
            dts.append(dt)
    med = statistics.median(dts)
    emit(bench="greedy", decoder="transformer", quant="f32", batch=N, len=a.len, max_len=a.max_len,
         latency_ms=1e3 * med, seqs_per_s=N / med, tokens_fnv=tokens_fnv(res))


def attend_sources(N, L, symbols, seed=5):
    """bench.c's random_sources(src, N, L, symbols, 5): attend_rng (xoshiro256**, splitmix64 seeding), so both
    sides decode the same sources: token 4 + next() % symbols, row by row."""
    M = (1 << 64) - 1
    x = seed
    st = []
    for _ in range(4):
        x = (x + 0x9E3779B97F4A7C15) & M
        z = x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
        st.append(z ^ (z >> 31))

    def rotl(v, k):
        return ((v << k) | (v >> (64 - k))) & M

    vals = []
    for _ in range(N * L):
        r = (rotl((st[1] * 5) & M, 7) * 9) & M
        t = (st[1] << 17) & M
        st[2] ^= st[0]
        st[3] ^= st[1]
        st[1] ^= st[2]
        st[0] ^= st[3]
        st[2] ^= t
        st[3] = rotl(st[3], 45)
        vals.append(4 + r % symbols)
    return torch.tensor(vals, dtype=torch.long).view(N, L)


def quantize_dynamic(model):
    """PyTorch's best effort at int8 weights for this model: dynamic
    quantization (int8 weights, activations quantized on the fly per call) of
    the module types it supports here, nn.Linear (bridge, output, Luong's
    combine), nn.GRU (the encoder) and nn.GRUCell (the decoder). The additive
    attention's Wq/Wk and the general score's W are plain parameters
    (tools/ref_model.py), which it leaves in float32."""
    return torch.quantization.quantize_dynamic(model, {nn.Linear, nn.GRU, nn.GRUCell}, dtype=torch.qint8)


def bench_decode(a, use_beam):
    N = 1 if use_beam else a.batch
    model = decode_model(a, a.width if use_beam else N)
    if a.quant == "int8":
        model = quantize_dynamic(model)
    elif a.quant:
        raise SystemExit("torch_peer.py: --quant: only int8 (dynamic quantization)")
    rng = np.random.default_rng(5)
    src = torch.from_numpy(rng.integers(4, 4 + a.symbols, size=(N, a.len)))
    src_len = torch.full((N,), a.len, dtype=torch.long)
    dts = []
    for i in range(a.warmup + a.iters):
        s = time.perf_counter()
        if use_beam:
            res = beam(model, src, src_len, a.width, a.max_len)
        else:
            res = greedy(model, src, src_len, a.max_len)
        dt = time.perf_counter() - s
        if i >= a.warmup:
            dts.append(dt)
    med = statistics.median(dts)
    if use_beam:
        assert all(len(h) == a.max_len for _, h in res), "a hypothesis ended early"
        emit(bench="beam", decoder=a.decoder, quant=a.quant or "f32", width=a.width, len=a.len, max_len=a.max_len, latency_ms=1e3 * med,
             best_score=res[0][0])
    else:
        emit(bench="greedy", decoder=a.decoder, quant=a.quant or "f32", batch=N, len=a.len, max_len=a.max_len, latency_ms=1e3 * med,
             seqs_per_s=N / med)


def bench_kernel(a):
    """The shapes and FLOP counts of bench.c's kernel mode."""
    torch.manual_seed(3)
    if a.name in ("additive", "scaled_dot"):
        add = a.name == "additive"
        N, T, Dq, Dk, A = (32, 64, 128, 256, 128) if add else (8, 512, 64, 64, 128)
        S, Dv = T, Dk
        q = (torch.rand(N, T, Dq) * 2 - 1).requires_grad_()
        k = (torch.rand(N, S, Dk) * 2 - 1).requires_grad_()
        v = (torch.rand(N, S, Dv) * 2 - 1).requires_grad_()
        dctx = torch.rand(N, T, Dv) * 2 - 1
        Wq = ((torch.rand(A, Dq) * 2 - 1) * 0.1).requires_grad_()
        Wk = ((torch.rand(A, Dk) * 2 - 1) * 0.1).requires_grad_()
        b = ((torch.rand(A) * 2 - 1) * 0.1).requires_grad_()
        vv = ((torch.rand(A) * 2 - 1) * 0.1).requires_grad_()
        scale = 1 / math.sqrt(Dk)

        def run():
            if add:
                kp = k @ Wk.t() + b                       # [N,S,A]
                qp = q @ Wq.t()                           # [N,T,A]
                e = torch.tanh(qp[:, :, None, :] + kp[:, None, :, :]) @ vv   # [N,T,S]
            else:
                e = (q @ k.transpose(1, 2)) * scale
            w = torch.softmax(e, -1)
            ctx = w @ v
            ctx.backward(dctx)

        nts = N * T * S
        flops = 2.0 * nts * Dv * 3 + 9.0 * nts
        if add:
            flops += 3 * 2.0 * N * S * Dk * A + 3 * 2.0 * N * T * Dq * A + nts * A * 10.0
        else:
            flops += 3 * 2.0 * nts * Dk + nts
        shape = "N=%d T=%d S=%d Dq=%d Dk=%d Dv=%d%s" % (N, T, S, Dq, Dk, Dv, " A=128" if add else "")
    elif a.name == "mha":
        N, T, E, H = 4, 512, 256, 8
        mha = nn.MultiheadAttention(E, H, batch_first=True)
        x = (torch.rand(N, T, E) * 2 - 1).requires_grad_()
        dy = torch.rand(N, T, E) * 2 - 1

        def run():
            y, _ = mha(x, x, x, need_weights=False)
            y.backward(dy)

        ntt = N * H * T * T
        flops = 12 * 2.0 * N * T * E * E + 6 * 2.0 * ntt * (E // H) + 10.0 * ntt
        shape = "N=%d T=S=%d E=%d H=%d" % (N, T, E, H)
    else:
        sys.exit("unknown kernel " + a.name)
    dts = []
    for i in range(a.warmup + a.iters):
        s = time.perf_counter()
        run()
        dt = time.perf_counter() - s
        if i >= a.warmup:
            dts.append(dt)
    med = statistics.median(dts)
    emit(bench="kernel", name=a.name, shape=shape, gflop=flops * 1e-9, ms=1e3 * med, gflops=flops * 1e-9 / med)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["train", "greedy", "beam", "kernel"])
    p.add_argument("--decoder", default="bahdanau", choices=["bahdanau", "luong", "transformer"])
    p.add_argument("--model", default=None, help="--decoder transformer: the attend model file to decode with")
    p.add_argument("--name", default="additive")
    p.add_argument("--quant", default=None, choices=["int8"],
                   help="greedy/beam: the model after torch.quantization.quantize_dynamic (int8)")
    for name, default in (("len", 20), ("batch", 64), ("steps", 20), ("warmup", 3), ("iters", 20), ("width", 5),
                          ("max-len", 22), ("threads", 2), ("emb", 64), ("hidden", 128), ("dec-hidden", 128),
                          ("attn", 128), ("symbols", 19)):
        p.add_argument("--" + name, type=int, default=default)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    if a.mode == "train":
        bench_train(a)
    elif a.mode == "greedy" and a.decoder == "transformer":
        bench_transformer_greedy(a)
    elif a.mode in ("greedy", "beam"):
        if a.decoder == "transformer":
            raise SystemExit("torch_peer.py: --decoder transformer: greedy only")
        bench_decode(a, a.mode == "beam")
    else:
        bench_kernel(a)


if __name__ == "__main__":
    main()
