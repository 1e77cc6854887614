#!/usr/bin/python3
"""make_ref.py — PyTorch reference data for tests/test_reference.c.

Builds the same computations as the attend C API in PyTorch, in float64, and
writes one small text file per case to tests/ref/ plus tests/ref/index.txt
(the list of case files the C test must find).

    /usr/bin/python3 tools/make_ref.py

Deterministic: every random number (shapes, masks, inputs, parameters,
upstream gradients) comes from one numpy PCG64 generator with a fixed seed,
torch only computes, and running the script twice writes identical files.
Inputs are drawn in float32 and widened to float64, so the float32 C library
sees exactly the values the float64 reference was computed from.

File format (docs for the C loader in tests/test_reference.c):
    attend-ref 1
    case <category> key=value key=value ...        (metadata, numbers)
    tensor <name> <ndim> <d0> ... <d(ndim-1)>
    <values, row-major, whitespace separated; repr-exact, -inf for -infinity>
    ...
    end
Masks are stored as 0/1 in the *validity* convention of attend.h (1 = may be
attended to); this script converts to PyTorch's boolean "True = ignore".
Categories: attention, mha, self, pointer, decoder.
"""
import os
import sys

import numpy as np
import torch

SEED = 20261130
OUT_DIR = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "ref"))

DOT, SCALED_DOT, GENERAL, ADDITIVE = 0, 1, 2, 3
KIND_NAMES = {DOT: "dot", SCALED_DOT: "scaled_dot", GENERAL: "general", ADDITIVE: "additive"}

rng = np.random.default_rng(SEED)
torch.set_default_dtype(torch.float64)


# ----------------------------------------------------------------- helpers

def randint(lo, hi):
    """Uniform integer in [lo, hi]."""
    return int(rng.integers(lo, hi + 1))


def randn32(*shape, scale=1.0):
    """Uniform(-scale, scale) values that are exactly float32, as float64."""
    return (rng.uniform(-scale, scale, size=shape).astype(np.float32)).astype(np.float64)


def t64(a, grad=False):
    return torch.tensor(a, dtype=torch.float64, requires_grad=grad)


def included_mask(N, T, S, valid, allowed, causal):
    """bool [N,T,S]: True where position j of row (n,t) takes part (attend.h)."""
    inc = np.ones((N, T, S), dtype=bool)
    if valid is not None:
        inc &= valid.astype(bool)[:, None, :]
    if allowed is not None:
        inc &= allowed.astype(bool)[None, :, :]
    if causal:
        inc &= np.tril(np.ones((T, S), dtype=bool))[None, :, :]
    return inc


def draw_masks(N, T, S, use_valid, use_allowed, causal):
    """Random 0/1 masks such that no row is fully masked and, when a mask is
    requested, it really excludes at least one position."""
    for _ in range(10000):
        valid = (rng.random((N, S)) < 0.7).astype(np.uint8) if use_valid else None
        allowed = (rng.random((T, S)) < 0.7).astype(np.uint8) if use_allowed else None
        inc = included_mask(N, T, S, valid, allowed, causal)
        if not inc.any(axis=2).all():
            continue
        if valid is not None and valid.all():
            continue
        if allowed is not None and allowed.all():
            continue
        return valid, allowed
    raise RuntimeError("could not draw masks for N=%d T=%d S=%d" % (N, T, S))


def masked_softmax(e, inc):
    return torch.softmax(e.masked_fill(~torch.from_numpy(inc), float("-inf")), dim=-1)


def np_of(x):
    return x.detach().numpy().astype(np.float64)


class Case:
    def __init__(self, category, name, **meta):
        self.category = category
        self.name = name
        self.meta = meta
        self.tensors = []

    def add(self, name, arr, integer=False):
        arr = np.asarray(arr)
        if arr.ndim == 0:
            arr = arr.reshape(1)
        if not integer:
            arr = arr.astype(np.float64)
            assert not np.isnan(arr).any(), "%s/%s has NaN" % (self.name, name)
        self.tensors.append((name, arr, integer))

    def write(self, path):
        lines = ["attend-ref 1"]
        meta = " ".join("%s=%s" % (k, fmt_meta(v)) for k, v in self.meta.items())
        lines.append("case %s %s" % (self.category, meta))
        for name, arr, integer in self.tensors:
            lines.append("tensor %s %d %s" % (name, arr.ndim, " ".join(str(d) for d in arr.shape)))
            rows = arr.reshape(-1, arr.shape[-1]) if arr.ndim > 0 else arr.reshape(1, 1)
            for row in rows:
                if integer:
                    lines.append(" ".join(str(int(x)) for x in row))
                else:
                    lines.append(" ".join(repr(float(x)) for x in row))
        lines.append("end")
        with open(path, "w", newline="\n") as f:
            f.write("\n".join(lines) + "\n")


def fmt_meta(v):
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return repr(float(v))


# ---------------------------------------------------- 1. one-shot attention

def attention_case(name, kind, use_valid=False, use_allowed=False, causal=0, dweights=False,
                   bias=0, explicit_scale=False, kv_same=False):
    masked = use_valid or use_allowed or causal
    N, T = randint(1, 3), randint(1, 5)
    S = randint(2 if masked else 1, 7)
    if kind in (DOT, SCALED_DOT):
        Dq = Dk = randint(1, 6)
    else:
        Dq = randint(1, 6)
        Dk = randint(1, 6)
        while Dk == Dq:
            Dk = randint(1, 6)
    if kv_same:
        Dv = Dk
    else:
        Dv = randint(1, 6)
        while Dv == Dk:
            Dv = randint(1, 6)
    A = randint(1, 6) if kind == ADDITIVE else 0
    scale = 0.0
    if kind == SCALED_DOT and explicit_scale:
        scale = float(np.float32(rng.uniform(0.2, 1.5)))
    valid, allowed = draw_masks(N, T, S, use_valid, use_allowed, causal)
    inc = included_mask(N, T, S, valid, allowed, causal)

    q_np = randn32(N, T, Dq)
    k_np = randn32(N, S, Dk)
    v_np = k_np if kv_same else randn32(N, S, Dv)
    params = {}
    if kind == GENERAL:
        params["W"] = randn32(Dq, Dk)
    if kind == ADDITIVE:
        params["Wq"] = randn32(A, Dq)
        params["Wk"] = randn32(A, Dk)
        params["v"] = randn32(A)
        if bias:
            params["b"] = randn32(A)
    dctx_np = randn32(N, T, Dv)
    dw_np = randn32(N, T, S) if dweights else None

    q, k = t64(q_np, True), t64(k_np, True)
    v = k if kv_same else t64(v_np, True)
    P = {key: t64(val, True) for key, val in params.items()}
    if kind == DOT:
        e = q @ k.transpose(1, 2)
    elif kind == SCALED_DOT:
        s = scale if scale > 0 else 1.0 / np.sqrt(Dk)
        e = s * (q @ k.transpose(1, 2))
    elif kind == GENERAL:  # e = qᵀ W k
        e = q @ P["W"] @ k.transpose(1, 2)
    else:  # e = vᵀ tanh(Wq q + Wk k + b)
        pre = (q @ P["Wq"].T)[:, :, None, :] + (k @ P["Wk"].T)[:, None, :, :]
        if bias:
            pre = pre + P["b"]
        e = torch.tanh(pre) @ P["v"]
    w = masked_softmax(e, inc)
    ctx = w @ v
    loss = (ctx * t64(dctx_np)).sum()
    if dweights:
        loss = loss + (w * t64(dw_np)).sum()
    loss.backward()

    c = Case("attention", name, kind=kind, N=N, T=T, S=S, Dq=Dq, Dk=Dk, Dv=Dv, A=A, bias=bias,
             scale=scale, causal=causal, has_valid=int(use_valid), has_allowed=int(use_allowed),
             has_dweights=int(dweights), kv_same=int(kv_same))
    c.add("q", q_np)
    c.add("k", k_np)
    if not kv_same:
        c.add("v", v_np)
    for key in ("W", "Wq", "Wk", "b", "v"):
        if key in params:
            c.add("p_" + key, params[key])
    if use_valid:
        c.add("valid", valid, integer=True)
    if use_allowed:
        c.add("allowed", allowed, integer=True)
    c.add("dctx", dctx_np)
    if dweights:
        c.add("dweights", dw_np)
    c.add("ctx", np_of(ctx))
    c.add("weights", np_of(w))
    c.add("dq", np_of(q.grad))
    c.add("dk", np_of(k.grad))  # when kv_same: the total gradient of the one k = v array
    if not kv_same:
        c.add("dv", np_of(v.grad))
    for key in ("W", "Wq", "Wk", "b", "v"):
        if key in P:
            c.add("g_" + key, np_of(P[key].grad))
    return c


# ------------------------------------------------------ 2. multi-head attention

def causal_bool(T, S):
    """PyTorch convention: True = not allowed (j > t)."""
    return ~np.tril(np.ones((T, S), dtype=bool))


def manual_mha(q, k, v, Wq, Wk, Wv, bq, bk, bv, Wo, bo, H, inc):
    """Straightforward float64 multi-head attention, to cross-check nn.MultiheadAttention."""
    N, T, E = q.shape
    S = k.shape[1]
    dh = E // H
    Q = q @ Wq.T + (bq if bq is not None else 0)
    K = k @ Wk.T + (bk if bk is not None else 0)
    V = v @ Wv.T + (bv if bv is not None else 0)
    Q = Q.reshape(N, T, H, dh).transpose(1, 2)
    K = K.reshape(N, S, H, dh).transpose(1, 2)
    V = V.reshape(N, S, H, dh).transpose(1, 2)
    sc = (Q @ K.transpose(2, 3)) / np.sqrt(dh)
    sc = sc.masked_fill(~torch.from_numpy(inc)[:, None, :, :], float("-inf"))
    Pw = torch.softmax(sc, dim=-1)
    O = (Pw @ V).transpose(1, 2).reshape(N, T, E)
    out = O @ Wo.T + (bo if bo is not None else 0)
    return out, Pw


def mha_case(name, category, E, H, kdim, vdim, bias, use_valid=False, use_allowed=False, causal=0,
             average=1, need_weights=1):
    self_attn = category == "self"
    masked = use_valid or use_allowed or causal
    N, T = randint(1, 3), randint(1, 5)
    if self_attn:
        T = randint(2, 5)  # a causal or padded sequence of one position tests nothing
        S = T
        kdim = vdim = E
        use_allowed = False
    else:
        S = randint(2 if masked else 1, 7)
    valid, allowed = draw_masks(N, T, S, use_valid, use_allowed, causal)
    inc = included_mask(N, T, S, valid, allowed, causal)

    mha = torch.nn.MultiheadAttention(embed_dim=E, num_heads=H, bias=bool(bias), kdim=kdim, vdim=vdim,
                                      batch_first=True, dropout=0.0, dtype=torch.float64)
    Wq_np, Wk_np, Wv_np = randn32(E, E), randn32(E, kdim), randn32(E, vdim)
    Wo_np = randn32(E, E)
    bq_np = bk_np = bv_np = bo_np = None
    if bias:
        bq_np, bk_np, bv_np, bo_np = randn32(E), randn32(E), randn32(E), randn32(E)
    with torch.no_grad():
        if mha._qkv_same_embed_dim:
            mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([Wq_np, Wk_np, Wv_np], axis=0)))
        else:
            mha.q_proj_weight.copy_(torch.from_numpy(Wq_np))
            mha.k_proj_weight.copy_(torch.from_numpy(Wk_np))
            mha.v_proj_weight.copy_(torch.from_numpy(Wv_np))
        mha.out_proj.weight.copy_(torch.from_numpy(Wo_np))
        if bias:
            mha.in_proj_bias.copy_(torch.from_numpy(np.concatenate([bq_np, bk_np, bv_np])))
            mha.out_proj.bias.copy_(torch.from_numpy(bo_np))
        else:
            assert mha.in_proj_bias is None and mha.out_proj.bias is None

    if self_attn:
        x_np = randn32(N, T, E)
        x = t64(x_np, True)
        q = k = v = x
    else:
        q_np, k_np, v_np = randn32(N, T, E), randn32(N, S, kdim), randn32(N, S, vdim)
        q, k, v = t64(q_np, True), t64(k_np, True), t64(v_np, True)
    dout_np = randn32(N, T, E)

    kpm = torch.from_numpy(~valid.astype(bool)) if use_valid else None  # True = ignore
    am = None
    if use_allowed or causal:
        am_np = np.zeros((T, S), dtype=bool)
        if use_allowed:
            am_np |= ~allowed.astype(bool)  # True = not allowed
        if causal:
            am_np |= causal_bool(T, S)
        am = torch.from_numpy(am_np)
    out, w = mha(q, k, v, key_padding_mask=kpm, need_weights=True, attn_mask=am,
                 average_attn_weights=bool(average))
    (out * t64(dout_np)).sum().backward()

    # Cross-check the module against a plain implementation (same parameters).
    with torch.no_grad():
        ref_out, ref_P = manual_mha(q, k, v, t64(Wq_np), t64(Wk_np), t64(Wv_np),
                                    t64(bq_np) if bias else None, t64(bk_np) if bias else None,
                                    t64(bv_np) if bias else None, t64(Wo_np),
                                    t64(bo_np) if bias else None, H, inc)
        ref_w = ref_P.mean(dim=1) if average else ref_P
        assert torch.allclose(out, ref_out, atol=1e-12, rtol=0), name
        assert torch.allclose(w, ref_w, atol=1e-12, rtol=0), name

    if mha._qkv_same_embed_dim:
        gWq, gWk, gWv = mha.in_proj_weight.grad.split(E, dim=0)
    else:
        gWq, gWk, gWv = mha.q_proj_weight.grad, mha.k_proj_weight.grad, mha.v_proj_weight.grad

    c = Case(category, name, N=N, T=T, S=S, E=E, H=H, kdim=kdim, vdim=vdim, bias=bias, causal=causal,
             has_valid=int(use_valid), has_allowed=int(use_allowed), average=average,
             need_weights=need_weights)
    if self_attn:
        c.add("x", x_np)
    else:
        c.add("q", q_np)
        c.add("k", k_np)
        c.add("v", v_np)
    c.add("p_Wq", Wq_np)
    c.add("p_Wk", Wk_np)
    c.add("p_Wv", Wv_np)
    c.add("p_Wo", Wo_np)
    if bias:
        c.add("p_bq", bq_np)
        c.add("p_bk", bk_np)
        c.add("p_bv", bv_np)
        c.add("p_bo", bo_np)
    if use_valid:
        c.add("valid", valid, integer=True)
    if use_allowed:
        c.add("allowed", allowed, integer=True)
    c.add("dout", dout_np)
    c.add("out", np_of(out))
    if need_weights:
        c.add("weights", np_of(w))
    if self_attn:
        c.add("dx", np_of(x.grad))
    else:
        c.add("dq", np_of(q.grad))
        c.add("dk", np_of(k.grad))
        c.add("dv", np_of(v.grad))
    c.add("g_Wq", np_of(gWq))
    c.add("g_Wk", np_of(gWk))
    c.add("g_Wv", np_of(gWv))
    c.add("g_Wo", np_of(mha.out_proj.weight.grad))
    if bias:
        gbq, gbk, gbv = mha.in_proj_bias.grad.split(E)
        c.add("g_bq", np_of(gbq))
        c.add("g_bk", np_of(gbk))
        c.add("g_bv", np_of(gbv))
        c.add("g_bo", np_of(mha.out_proj.bias.grad))
    return c


# ---------------------------------------------------------- 3. pointer NLL

def pointer_case(name, use_valid=False, use_allowed=False, causal=0, ignore_frac=0.0, all_ignored=False):
    masked = use_valid or use_allowed or causal
    N, T = randint(1, 3), randint(1, 5)
    S = randint(2 if masked else 1, 7)
    valid, allowed = draw_masks(N, T, S, use_valid, use_allowed, causal)
    inc = included_mask(N, T, S, valid, allowed, causal)
    scores_np = randn32(N, T, S, scale=3.0)
    targets = np.empty((N, T), dtype=np.int64)
    for n in range(N):
        for t in range(T):
            choices = np.flatnonzero(inc[n, t])
            targets[n, t] = int(choices[rng.integers(len(choices))])
            if all_ignored or rng.random() < ignore_frac:
                targets[n, t] = -1
    scores = t64(scores_np, True)
    logp = torch.log_softmax(scores.masked_fill(~torch.from_numpy(inc), float("-inf")), dim=-1)
    count = int((targets >= 0).sum())
    if count > 0:
        loss = torch.nn.functional.nll_loss(logp.reshape(-1, S), torch.from_numpy(targets.reshape(-1)),
                                            ignore_index=-1, reduction="mean")
        loss.backward()
        dscores = np_of(scores.grad)
        loss_v = float(loss)
    else:  # attend.h: no counted row gives loss 0 (torch's mean would be NaN)
        dscores = np.zeros((N, T, S))
        loss_v = 0.0
    lp = np_of(logp)
    assert np.array_equal(np.isneginf(lp), ~inc)
    c = Case("pointer", name, N=N, T=T, S=S, causal=causal, has_valid=int(use_valid),
             has_allowed=int(use_allowed), count=count)
    c.add("scores", scores_np)
    if use_valid:
        c.add("valid", valid, integer=True)
    if use_allowed:
        c.add("allowed", allowed, integer=True)
    c.add("targets", targets, integer=True)
    c.add("logp", lp)
    c.add("loss", np.array([loss_v]))
    c.add("dscores", dscores)
    return c


# ------------------------------------------- 4. decoder: one key projection, T steps

def decoder_case(name, bias):
    N, T, S = randint(1, 3), randint(2, 5), randint(2, 7)
    Dq, Dk, A = randint(1, 6), randint(1, 6), randint(1, 6)
    q_np, k_np = randn32(N, T, Dq), randn32(N, S, Dk)
    Wq_np, Wk_np, v_np = randn32(A, Dq), randn32(A, Dk), randn32(A)
    b_np = randn32(A) if bias else None
    ds_np = randn32(N, T, S)
    q, k = t64(q_np, True), t64(k_np, True)
    Wq, Wk, vv = t64(Wq_np, True), t64(Wk_np, True), t64(v_np, True)
    b = t64(b_np, True) if bias else None
    kp = k @ Wk.T
    if bias:
        kp = kp + b
    kp.retain_grad()
    scores = torch.tanh((q @ Wq.T)[:, :, None, :] + kp[:, None, :, :]) @ vv
    (scores * t64(ds_np)).sum().backward()
    c = Case("decoder", name, kind=ADDITIVE, N=N, T=T, S=S, Dq=Dq, Dk=Dk, A=A, bias=bias)
    c.add("q", q_np)
    c.add("k", k_np)
    c.add("p_Wq", Wq_np)
    c.add("p_Wk", Wk_np)
    c.add("p_v", v_np)
    if bias:
        c.add("p_b", b_np)
    c.add("dscores", ds_np)
    c.add("kp", np_of(kp))
    c.add("scores", np_of(scores))
    c.add("dkp", np_of(kp.grad))
    c.add("dq", np_of(q.grad))
    c.add("dk", np_of(k.grad))
    c.add("g_Wq", np_of(Wq.grad))
    c.add("g_Wk", np_of(Wk.grad))
    c.add("g_v", np_of(vv.grad))
    if bias:
        c.add("g_b", np_of(b.grad))
    return c


# ------------------------------------------------------------------ main

def build_cases():
    cases = []
    A = lambda *a, **kw: cases.append(attention_case("attention_%02d" % len(cases), *a, **kw))
    A(DOT)
    A(DOT, use_valid=True, dweights=True)
    A(DOT, kv_same=True, use_valid=True)
    A(SCALED_DOT, causal=1)
    A(SCALED_DOT, explicit_scale=True, use_allowed=True)
    A(SCALED_DOT, explicit_scale=True, dweights=True)
    A(SCALED_DOT, use_valid=True, use_allowed=True, causal=1, dweights=True)
    A(GENERAL)
    A(GENERAL, use_valid=True, dweights=True)
    A(GENERAL, use_valid=True, causal=1)
    A(GENERAL, use_allowed=True, kv_same=True)
    A(ADDITIVE, bias=0)
    A(ADDITIVE, bias=1, use_valid=True)
    A(ADDITIVE, bias=1, use_allowed=True, causal=1, dweights=True)
    A(ADDITIVE, bias=0, use_valid=True, dweights=True)
    A(ADDITIVE, bias=1, kv_same=True, causal=1)
    A(ADDITIVE, bias=1, use_valid=True, use_allowed=True)

    n0 = len(cases)
    M = lambda *a, **kw: cases.append(mha_case("mha_%02d" % (len(cases) - n0), "mha", *a, **kw))
    #  E  H  kdim vdim bias
    M(4, 2, 4, 4, 1)
    M(6, 3, 6, 6, 0, use_valid=True, average=0)
    M(4, 1, 3, 5, 1, use_allowed=True)
    M(6, 2, 2, 6, 0, use_valid=True, use_allowed=True, average=0)
    M(2, 2, 2, 2, 1, use_valid=True, causal=1)
    M(6, 6, 5, 1, 1, causal=1, need_weights=0)
    M(3, 1, 6, 2, 0, use_allowed=True, causal=1, average=0)
    M(1, 1, 1, 1, 1, use_valid=True)
    M(4, 4, 4, 3, 1, use_valid=True, use_allowed=True, causal=1)

    n0 = len(cases)
    SA = lambda *a, **kw: cases.append(mha_case("self_%02d" % (len(cases) - n0), "self", *a, **kw))
    SA(4, 2, 4, 4, 1, causal=1)
    SA(6, 3, 6, 6, 0, causal=1, use_valid=True, average=0)
    SA(2, 1, 2, 2, 1, use_valid=True)
    SA(6, 2, 6, 6, 1, causal=1, use_valid=True)

    n0 = len(cases)
    PT = lambda *a, **kw: cases.append(pointer_case("pointer_%02d" % (len(cases) - n0), *a, **kw))
    PT()
    PT(use_valid=True)
    PT(use_allowed=True, ignore_frac=0.3)
    PT(causal=1)
    PT(use_valid=True, use_allowed=True, causal=1, ignore_frac=0.3)
    PT(use_valid=True, all_ignored=True)

    n0 = len(cases)
    D = lambda *a, **kw: cases.append(decoder_case("decoder_%02d" % (len(cases) - n0), *a, **kw))
    D(0)
    D(1)
    D(1)
    return cases


def main():
    cases = build_cases()
    os.makedirs(OUT_DIR, exist_ok=True)
    for f in os.listdir(OUT_DIR):  # drop stale generated files
        if f.endswith(".txt"):
            os.remove(os.path.join(OUT_DIR, f))
    names = []
    for c in cases:
        fname = c.name + ".txt"
        c.write(os.path.join(OUT_DIR, fname))
        names.append(fname)
    with open(os.path.join(OUT_DIR, "index.txt"), "w", newline="\n") as f:
        f.write("".join(n + "\n" for n in names))
    total = sum(os.path.getsize(os.path.join(OUT_DIR, f)) for f in os.listdir(OUT_DIR))
    print("make_ref.py: wrote %d cases to %s (%d bytes)" % (len(cases), OUT_DIR, total))
    return 0


if __name__ == "__main__":
    sys.exit(main())
