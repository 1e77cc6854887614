"""attend.kernels — the attention kernels of the C library on numpy arrays.

Every array is float32 (masks uint8 or bool), C-contiguous, with the shapes
written below (N batch, T queries, S source positions, Dq/Dk/Dv widths, A
additive width, E embed width, H heads); anything else is refused with
AttendError before it reaches C. Forward functions return new arrays;
backward functions return the gradients (they are computed into fresh zeroed
arrays, so the library's "+=" convention is invisible here).

Score kinds: "dot", "scaled_dot" (scale, 0 = 1/sqrt(Dk)), "general" (W [Dq,Dk])
and "additive" (Wq [A,Dq], Wk [A,Dk], v [A], optional b [A]). Normalisers (what
turns scores into weights): "softmax", "sparsemax" and "entmax15" (exact zeros).

    import numpy as np, attend.kernels as K
    a = np.log(2)
    h = np.array([[[a, 0], [0, a], [0, 0]]], np.float32)      # seed 000, Example 14.1
    q = np.array([[[1, 0]]], np.float32)
    ctx, w = K.attention(q, h, h, kind="dot")                  # w = [[[1/2, 1/4, 1/4]]]
"""
from __future__ import annotations

import ctypes
from typing import Dict, Optional, Tuple

import numpy as np

from . import _arrays as ar
from ._lib import (ERR_ARG, ERR_CAPACITY, MHA_NAMES, AttendError, IvSpec, MhaConfig, MhaGrads, MhaParams, ScoreConfig,
                   ScoreGrads, ScoreParams, call, lib)

__all__ = ["scores", "scores_backward", "masked_softmax", "masked_softmax_backward", "masked_normalize",
           "masked_normalize_backward", "normalizer_threshold", "context", "context_backward", "attention",
           "attention_backward", "attention_intervene", "permutation", "mha", "mha_backward"]

Array = np.ndarray
Opt = Optional[np.ndarray]

_KINDS = {"dot": 0, "scaled_dot": 1, "general": 2, "additive": 3}


_NORMALIZERS = {"softmax": 0, "sparsemax": 1, "entmax15": 2}


def _normalizer(name):
    if name not in _NORMALIZERS:
        raise AttendError(ERR_ARG, "normalizer %r: expected one of %s" % (name, ", ".join(_NORMALIZERS)))
    return _NORMALIZERS[name]


def _kind(kind):
    if kind not in _KINDS:
        raise AttendError(ERR_ARG, "score kind %r: expected one of %s" % (kind, ", ".join(_KINDS)))
    return _KINDS[kind]


def _score_setup(kind, Dq, Dk, scale, W, Wq, Wk, v, b):
    """The configuration and the checked parameter arrays of a score kind."""
    k = _kind(kind)
    cfg = ScoreConfig(k, Dq, Dk, 0, 0, float(scale))
    params = {}
    if k == 2:
        params["W"] = ar.check("W", W, ar.FLOAT, (Dq, Dk))
    if k == 3:
        if v is None:
            raise AttendError(ERR_ARG, "additive scores need v [A]")
        A = ar.check("v", v, ar.FLOAT, ndim=1).shape[0]
        cfg.A = A
        params["v"] = v
        params["Wq"] = ar.check("Wq", Wq, ar.FLOAT, (A, Dq))
        params["Wk"] = ar.check("Wk", Wk, ar.FLOAT, (A, Dk))
        if b is not None:
            params["b"] = ar.check("b", b, ar.FLOAT, (A,))
            cfg.additive_bias = 1
    call("attend_score_config_check", ctypes.byref(cfg))
    p = ScoreParams(**{n: ar.ptr(a) for n, a in params.items()})
    return cfg, p, params


def _grads_for(params):
    g = {n: np.zeros_like(a) for n, a in params.items()}
    return g, ScoreGrads(**{n: ar.ptr(a) for n, a in g.items()})


def _qk(q, k):
    ar.check("q", q, ar.FLOAT, ndim=3)
    N, T, Dq = q.shape
    ar.check("k", k, ar.FLOAT, (N, None, None))
    return N, T, k.shape[1], Dq, k.shape[2]


def _keys_scores(cfg, p, q, k, N, T, S):
    P = lib.attend_score_key_width(ctypes.byref(cfg))
    kp = ar.zeros(N, S, P)
    call("attend_keys_forward", ctypes.byref(cfg), ctypes.byref(p), ar.ptr(kp), ar.ptr(k), N, S)
    overflow = ctypes.c_int(0)
    n_saved = lib.attend_scores_saved_size(ctypes.byref(cfg), N, T, S, ctypes.byref(overflow))
    if overflow.value:
        raise AttendError(ERR_CAPACITY, "scores: N=%d T=%d S=%d: the saved values overflow size_t" % (N, T, S))
    saved = ar.zeros(max(n_saved, 1))
    sc = ar.zeros(N, T, S)
    call("attend_scores_forward", ctypes.byref(cfg), ctypes.byref(p), ar.ptr(sc), ar.ptr(saved), ar.ptr(q),
         ar.ptr(kp), N, T, S)
    return sc, kp, saved


def scores(q: Array, k: Array, kind: str = "dot", scale: float = 0.0, W: Opt = None, Wq: Opt = None,
           Wk: Opt = None, v: Opt = None, b: Opt = None) -> Array:
    """scores [N,T,S] of queries q [N,T,Dq] against keys k [N,S,Dk]."""
    N, T, S, Dq, Dk = _qk(q, k)
    cfg, p, _ = _score_setup(kind, Dq, Dk, scale, W, Wq, Wk, v, b)
    return _keys_scores(cfg, p, q, k, N, T, S)[0]


def scores_backward(dscores: Array, q: Array, k: Array, kind: str = "dot", scale: float = 0.0, W: Opt = None,
                    Wq: Opt = None, Wk: Opt = None, v: Opt = None,
                    b: Opt = None) -> Tuple[Array, Array, Dict[str, Array]]:
    """Gradients of scores(): returns (dq [N,T,Dq], dk [N,S,Dk], grads) with
    grads a dict of the kind's parameter gradients ("W" or "Wq","Wk","v","b")."""
    N, T, S, Dq, Dk = _qk(q, k)
    ar.check("dscores", dscores, ar.FLOAT, (N, T, S))
    cfg, p, params = _score_setup(kind, Dq, Dk, scale, W, Wq, Wk, v, b)
    _, kp, saved = _keys_scores(cfg, p, q, k, N, T, S)
    grads, g = _grads_for(params)
    dq, dkp, dk = ar.zeros(N, T, Dq), np.zeros_like(kp), ar.zeros(N, S, Dk)
    call("attend_scores_backward", ctypes.byref(cfg), ctypes.byref(p), ctypes.byref(g), ar.ptr(dq), ar.ptr(dkp),
         ar.ptr(dscores), ar.ptr(saved), ar.ptr(q), ar.ptr(kp), N, T, S)
    call("attend_keys_backward", ctypes.byref(cfg), ctypes.byref(p), ctypes.byref(g), ar.ptr(dk), ar.ptr(dkp),
         ar.ptr(k), N, S)
    return dq, dk, grads


def masked_softmax(scores: Array, valid: Opt = None, allowed: Opt = None, causal: bool = False) -> Array:
    """weights [N,T,S] = softmax of scores [N,T,S] over the positions allowed
    by valid [N,S] (key padding), allowed [T,S] and causal (j <= t). A row with
    every position excluded raises AttendError (ATTEND_ERR_MASKED_ROW)."""
    ar.check("scores", scores, ar.FLOAT, ndim=3)
    N, T, S = scores.shape
    valid = ar.mask("valid", valid, (N, S))
    allowed = ar.mask("allowed", allowed, (T, S))
    w = ar.zeros(N, T, S)
    call("attend_masked_softmax_forward", ar.ptr(w), ar.ptr(scores), ar.ptr(valid), ar.ptr(allowed),
         1 if causal else 0, N, T, S)
    return w


def masked_softmax_backward(dweights: Array, weights: Array) -> Array:
    """dscores [N,T,S] from dweights [N,T,S] and the forward's weights."""
    ar.check("weights", weights, ar.FLOAT, ndim=3)
    N, T, S = weights.shape
    ar.check("dweights", dweights, ar.FLOAT, (N, T, S))
    d = ar.zeros(N, T, S)
    call("attend_masked_softmax_backward", ar.ptr(d), ar.ptr(dweights), ar.ptr(weights), N, T, S)
    return d


def masked_normalize(scores: Array, normalizer: str = "softmax", valid: Opt = None, allowed: Opt = None,
                     causal: bool = False) -> Array:
    """weights [N,T,S] = normalizer(scores [N,T,S]) over the kept positions
    (masks as masked_softmax): "softmax", "sparsemax" (Martins & Astudillo
    2016) or "entmax15" (Peters et al. 2019); the sparse two give exact zeros."""
    nz = _normalizer(normalizer)
    ar.check("scores", scores, ar.FLOAT, ndim=3)
    N, T, S = scores.shape
    valid = ar.mask("valid", valid, (N, S))
    allowed = ar.mask("allowed", allowed, (T, S))
    w = ar.zeros(N, T, S)
    call("attend_masked_normalize_forward", nz, ar.ptr(w), ar.ptr(scores), ar.ptr(valid), ar.ptr(allowed),
         1 if causal else 0, N, T, S)
    return w


def masked_normalize_backward(dweights: Array, weights: Array, normalizer: str = "softmax") -> Array:
    """dscores [N,T,S] from dweights [N,T,S] and the forward's weights of the
    same normalizer."""
    nz = _normalizer(normalizer)
    ar.check("weights", weights, ar.FLOAT, ndim=3)
    N, T, S = weights.shape
    ar.check("dweights", dweights, ar.FLOAT, (N, T, S))
    d = ar.zeros(N, T, S)
    call("attend_masked_normalize_backward", nz, ar.ptr(d), ar.ptr(dweights), ar.ptr(weights), N, T, S)
    return d


def normalizer_threshold(z: Array, normalizer: str = "sparsemax") -> Tuple[float, int]:
    """(tau, support) of one row z [S] (1 <= S <= 256): sparsemax w = max(z - tau, 0),
    entmax15 w = max(z/2 - tau, 0)**2, softmax w = exp(z - tau)."""
    nz = _normalizer(normalizer)
    ar.check("z", z, ar.FLOAT, ndim=1)
    support = ctypes.c_int(0)
    tau = lib.attend_normalizer_threshold(nz, ar.ptr(z), z.shape[0], ctypes.byref(support))
    if tau != tau:
        raise AttendError(ERR_ARG, "normalizer_threshold: S=%d outside [1, 256] or a non-finite score" % z.shape[0])
    return tau, support.value


def context(weights: Array, v: Array) -> Array:
    """ctx [N,T,Dv] = weights [N,T,S] · v [N,S,Dv]."""
    ar.check("weights", weights, ar.FLOAT, ndim=3)
    N, T, S = weights.shape
    ar.check("v", v, ar.FLOAT, (N, S, None))
    ctx = ar.zeros(N, T, v.shape[2])
    call("attend_context_forward", ar.ptr(ctx), ar.ptr(weights), ar.ptr(v), N, T, S, v.shape[2])
    return ctx


def context_backward(dctx: Array, weights: Array, v: Array) -> Tuple[Array, Array]:
    """(dweights [N,T,S], dv [N,S,Dv]) from dctx [N,T,Dv]."""
    ar.check("weights", weights, ar.FLOAT, ndim=3)
    N, T, S = weights.shape
    ar.check("v", v, ar.FLOAT, (N, S, None))
    Dv = v.shape[2]
    ar.check("dctx", dctx, ar.FLOAT, (N, T, Dv))
    dw, dv = ar.zeros(N, T, S), ar.zeros(N, S, Dv)
    call("attend_context_backward", ar.ptr(dw), ar.ptr(dv), ar.ptr(dctx), ar.ptr(weights), ar.ptr(v), N, T, S, Dv)
    return dw, dv


def _attention_run(q, k, v, kind, scale, W, Wq, Wk, va, b, valid, allowed, causal, normalizer):
    nz = _normalizer(normalizer)
    N, T, S, Dq, Dk = _qk(q, k)
    ar.check("v", v, ar.FLOAT, (N, S, None))
    Dv = v.shape[2]
    cfg, p, params = _score_setup(kind, Dq, Dk, scale, W, Wq, Wk, va, b)
    valid = ar.mask("valid", valid, (N, S))
    allowed = ar.mask("allowed", allowed, (T, S))
    n_ws = lib.attend_attention_workspace_size(ctypes.byref(cfg), N, T, S)
    ws = ar.zeros(max(n_ws, 1))
    ctx, w = ar.zeros(N, T, Dv), ar.zeros(N, T, S)
    call("attend_attention_forward_normalized", ctypes.byref(cfg), ctypes.byref(p), nz, ar.ptr(ctx), ar.ptr(w),
         ar.ptr(q), ar.ptr(k), ar.ptr(v), ar.ptr(valid), ar.ptr(allowed), 1 if causal else 0, N, T, S, Dv,
         ar.ptr(ws), n_ws)
    return cfg, p, params, ws, n_ws, ctx, w, (N, T, S, Dq, Dk, Dv), nz


def attention(q: Array, k: Array, v: Array, kind: str = "dot", scale: float = 0.0, W: Opt = None, Wq: Opt = None,
              Wk: Opt = None, va: Opt = None, b: Opt = None, valid: Opt = None, allowed: Opt = None,
              causal: bool = False, normalizer: str = "softmax") -> Tuple[Array, Array]:
    """Soft attention: returns (ctx [N,T,Dv], weights [N,T,S]) for queries
    q [N,T,Dq], keys k [N,S,Dk] and values v [N,S,Dv] (pass k twice for K = V).
    The additive score's vector is `va` here (v is the values); normalizer
    "softmax", "sparsemax" or "entmax15" turns the scores into weights."""
    r = _attention_run(q, k, v, kind, scale, W, Wq, Wk, va, b, valid, allowed, causal, normalizer)
    return r[5], r[6]


def attention_backward(dctx: Array, q: Array, k: Array, v: Array, kind: str = "dot", scale: float = 0.0,
                       W: Opt = None, Wq: Opt = None, Wk: Opt = None, va: Opt = None, b: Opt = None,
                       valid: Opt = None, allowed: Opt = None, causal: bool = False, dweights: Opt = None,
                       normalizer: str = "softmax") -> Tuple[Array, Array, Array, Dict[str, Array]]:
    """Gradients of attention() from dctx [N,T,Dv] (and optionally a loss on
    the weights, dweights [N,T,S]): returns (dq, dk, dv, grads)."""
    cfg, p, params, ws, n_ws, ctx, w, (N, T, S, Dq, Dk, Dv), nz = _attention_run(
        q, k, v, kind, scale, W, Wq, Wk, va, b, valid, allowed, causal, normalizer)
    ar.check("dctx", dctx, ar.FLOAT, (N, T, Dv))
    if dweights is not None:
        ar.check("dweights", dweights, ar.FLOAT, (N, T, S))
    grads, g = _grads_for(params)
    if "v" in grads:
        grads["va"] = grads.pop("v")
        g.v = ar.ptr(grads["va"])
    dq, dk, dv = ar.zeros(N, T, Dq), ar.zeros(N, S, Dk), ar.zeros(N, S, Dv)
    call("attend_attention_backward_normalized", ctypes.byref(cfg), ctypes.byref(p), nz, ctypes.byref(g), ar.ptr(dq),
         ar.ptr(dk), ar.ptr(dv), ar.ptr(dctx), ar.ptr(dweights), ar.ptr(w), ar.ptr(q), ar.ptr(k), ar.ptr(v), N, T, S, Dv,
         ar.ptr(ws), n_ws)
    return dq, dk, dv, grads


_IV_KINDS = {"remove-state": 0, "uniform": 3, "permute": 4, "drop-top": 5}


def attention_intervene(q: Array, k: Array, v: Array, intervention: str, position: int = 0, seed: int = 1,
                        kind: str = "dot", scale: float = 0.0, W: Opt = None, Wq: Opt = None, Wk: Opt = None,
                        va: Opt = None, b: Opt = None) -> Tuple[Array, Array]:
    """One attention read-out under an intervention, with no model
    (attend_attention_intervene): query q [Dq] against keys k [S,Dk] and
    values v [S,Dv]; returns (ctx [Dv], weights [S]) under "remove-state"
    (saved state `position` hidden, the rest renormalised), "uniform",
    "permute" (seeded) or "drop-top". Seed 000's Tables 14.2 and 14.3 are this
    function on its three-state example (`attend intervene --textbook`)."""
    if intervention not in _IV_KINDS:
        raise AttendError(ERR_ARG, "intervention %r: expected one of %s (delete-token needs an encoder: "
                          "Model.intervene)" % (intervention, ", ".join(_IV_KINDS)))
    ar.check("q", q, ar.FLOAT, ndim=1)
    ar.check("k", k, ar.FLOAT, ndim=2)
    S, Dk = k.shape
    ar.check("v", v, ar.FLOAT, (S, None))
    Dv = v.shape[1]
    cfg, p, _ = _score_setup(kind, q.shape[0], Dk, scale, W, Wq, Wk, va, b)
    ctx, w = ar.zeros(Dv), ar.zeros(S)
    spec = IvSpec(_IV_KINDS[intervention], int(position), 0, int(seed))
    call("attend_attention_intervene", ctypes.byref(cfg), ctypes.byref(p), ar.ptr(ctx), ar.ptr(w), ar.ptr(q),
         ar.ptr(k), ar.ptr(v), S, Dv, ctypes.byref(spec))
    return ctx, w


def permutation(n: int, seed: int) -> np.ndarray:
    """The seeded permutation [n] of 0..n-1 the interventions use (attend_permutation,
    Fisher-Yates over xoshiro256**): "permute" gives position j the weight of
    position perm[j]."""
    if n < 1:
        raise AttendError(ERR_ARG, "permutation: n=%d must be >= 1" % n)
    perm = np.zeros(n, dtype=np.int32)
    lib.attend_permutation(ar.ptr(perm), int(n), int(seed))
    return perm


def _mha_run(q, k, v, params, heads, valid, allowed, causal, average_weights, want_weights):
    ar.check("q", q, ar.FLOAT, ndim=3)
    N, T, E = q.shape
    ar.check("k", k, ar.FLOAT, (N, None, None))
    S, kdim = k.shape[1], k.shape[2]
    ar.check("v", v, ar.FLOAT, (N, S, None))
    vdim = v.shape[2]
    bias = params.get("bq") is not None
    shapes = {"Wq": (E, E), "Wk": (E, kdim), "Wv": (E, vdim), "Wo": (E, E),
              "bq": (E,), "bk": (E,), "bv": (E,), "bo": (E,)}
    checked = {}
    for n in MHA_NAMES:
        if n.startswith("b") and not bias:
            if params.get(n) is not None:
                raise AttendError(ERR_ARG, "mha: %s given without bq (all four biases or none)" % n)
            continue
        checked[n] = ar.check(n, params.get(n), ar.FLOAT, shapes[n])
    cfg = MhaConfig(E, int(heads), kdim, vdim, 1 if bias else 0)
    call("attend_mha_config_check", ctypes.byref(cfg))
    p = MhaParams(**{n: ar.ptr(a) for n, a in checked.items()})
    valid = ar.mask("valid", valid, (N, S))
    allowed = ar.mask("allowed", allowed, (T, S))
    n_ws = lib.attend_mha_workspace_size(ctypes.byref(cfg), N, T, S)
    ws = ar.zeros(max(n_ws, 1))
    out = ar.zeros(N, T, E)
    w = None
    if want_weights:
        w = ar.zeros(N, T, S) if average_weights else ar.zeros(N, int(heads), T, S)
    call("attend_mha_forward", ctypes.byref(cfg), ctypes.byref(p), ar.ptr(out), ar.ptr(w),
         1 if average_weights else 0, ar.ptr(q), ar.ptr(k), ar.ptr(v), ar.ptr(valid), ar.ptr(allowed),
         1 if causal else 0, N, T, S, ar.ptr(ws), n_ws)
    return cfg, p, checked, ws, n_ws, out, w, (N, T, S, E, kdim, vdim)


def mha(q: Array, k: Array, v: Array, params: Dict[str, Optional[Array]], heads: int, valid: Opt = None,
        allowed: Opt = None, causal: bool = False, average_weights: bool = True) -> Tuple[Array, Array]:
    """Multi-head attention with PyTorch's nn.MultiheadAttention semantics
    (batch_first, no dropout). params: dict with Wq [E,E], Wk [E,kdim],
    Wv [E,vdim], Wo [E,E] and, for bias=True, bq, bk, bv, bo [E]. Returns
    (out [N,T,E], weights [N,T,S] averaged over heads, or [N,H,T,S])."""
    r = _mha_run(q, k, v, params, heads, valid, allowed, causal, average_weights, True)
    return r[5], r[6]


def mha_backward(dout: Array, q: Array, k: Array, v: Array, params: Dict[str, Optional[Array]], heads: int,
                 valid: Opt = None, allowed: Opt = None,
                 causal: bool = False) -> Tuple[Array, Array, Array, Dict[str, Array]]:
    """Gradients of mha() from dout [N,T,E]: (dq, dk, dv, grads) with grads a
    dict named like params."""
    cfg, p, checked, ws, n_ws, out, w, (N, T, S, E, kdim, vdim) = _mha_run(
        q, k, v, params, heads, valid, allowed, causal, True, False)
    ar.check("dout", dout, ar.FLOAT, (N, T, E))
    grads = {n: np.zeros_like(a) for n, a in checked.items()}
    g = MhaGrads(**{n: ar.ptr(a) for n, a in grads.items()})
    dq, dk, dv = ar.zeros(N, T, E), ar.zeros(N, S, kdim), ar.zeros(N, S, vdim)
    call("attend_mha_backward", ctypes.byref(cfg), ctypes.byref(p), ctypes.byref(g), ar.ptr(dq), ar.ptr(dk),
         ar.ptr(dv), ar.ptr(dout), ar.ptr(q), ar.ptr(k), ar.ptr(v), N, T, S, ar.ptr(ws), n_ws)
    return dq, dk, dv, grads
