"""attend.ensemble — decoding with several models at once, and n-best
rescoring (attend_ensemble_greedy / _beam, attend_model_rescore).

Each step's distribution is the mean of the models' log-softmax outputs (as
OpenNMT and Marian average them); each model keeps its own state and
alignment. The models must agree on the tokenizer and on the source and target
vocabularies token by token (checked here, naming the first difference, as
`attend decode A B ...` does), and none may be a pointer model.

    import attend
    a, b = attend.Model.load("r1.safetensors"), attend.Model.load("r2.safetensors")
    h = attend.ensemble.greedy([a, b], "abcd")[0]   # h.text, h.alignments [2,L,S]
    hs = attend.ensemble.beam([a, b], "abcd", beam=4, nbest=3)
    attend.ensemble.rescore(c, "abcd", hs, reverse=True)   # log p / (len + 1) per hypothesis
"""
from __future__ import annotations

import ctypes
from typing import List, Optional, Sequence, Union

import numpy as np

from . import _arrays as ar
from ._lib import ERR_ARG, AttendError, call
from .model import Hypothesis, Model, Source, _as_ids, _encode_all, _is_one, _source_tokens

__all__ = ["check", "greedy", "beam", "rescore"]

_P = ctypes.c_void_p


def _vocab_diff(a, b):
    ta, tb = a.tokens(), b.tokens()
    for i in range(max(len(ta), len(tb))):
        x = ta[i] if i < len(ta) else None
        y = tb[i] if i < len(tb) else None
        if x != y:
            return i, x, y
    return None


def check(models: Sequence[Model]) -> None:
    """Raises AttendError (ERR_ARG) naming the first way a model differs from
    the first: decoder kind (pointer), tokenizer, target or source vocabulary."""
    if not models:
        raise AttendError(ERR_ARG, "an ensemble needs at least one model")
    first = models[0]
    for k, m in enumerate(models):
        if m.config["decoder"] == "pointer":
            raise AttendError(ERR_ARG, "model %d is a pointer model: an ensemble averages distributions over one "
                              "target vocabulary" % (k + 1))
        if k == 0:
            continue
        if m.tokenizer != first.tokenizer:
            raise AttendError(ERR_ARG, "model %d: tokenizer %s, model 1 has %s" % (k + 1, m.tokenizer,
                                                                                   first.tokenizer))
        for side, va, vb in (("target", first.tgt_vocab, m.tgt_vocab), ("source", first.src_vocab, m.src_vocab)):
            if va is None or vb is None:
                continue
            d = _vocab_diff(va, vb)
            if d is None:
                continue
            i, x, y = d
            if x is None or y is None:
                raise AttendError(ERR_ARG, "model %d: %s vocabulary has %d ids, model 1 has %d" %
                                  (k + 1, side, len(vb), len(va)))
            raise AttendError(ERR_ARG, "model %d: %s vocabulary id %d is %r, model 1 has %r" % (k + 1, side, i, y, x))


def _handles(models):
    check(models)
    return (_P * len(models))(*[m._handle() for m in models])


def _max_len(models, max_len):
    return max_len if max_len else max(m.config["max_tgt_len"] for m in models) + 1


def greedy(models: Sequence[Model], sources: Union[Source, Sequence[Source]], max_len: int = 0,
           unknown: str = "warn") -> List[Optional[Hypothesis]]:
    """Greedy decoding of one source or a list (str or int32 ids) with the
    ensemble; a list of Hypothesis whose .alignment is model 1's [L,S] and
    .alignments every model's [M,L,S] (None for a source that unknown="skip"
    skips; unknown= as Model.greedy)."""
    hs = _handles(models)
    M, first = len(models), models[0]
    if _is_one(sources):
        sources = [sources]
    srcs = _encode_all("source", sources, first.src_vocab, unknown, 2)
    todo = [i for i, s in enumerate(srcs) if s is not None]
    L = _max_len(models, max_len)
    B = max(min(m.config["max_batch"] for m in models), 1)
    res: List[Optional[Hypothesis]] = [None] * len(srcs)
    for at in range(0, len(todo), B):
        rows = todo[at:at + B]
        chunk = [srcs[i] for i in rows]
        N, S = len(chunk), max(len(s) for s in chunk)
        src = np.zeros((N, S), dtype=np.int32)
        for i, s in enumerate(chunk):
            src[i, :len(s)] = s
        src_len = np.array([len(s) for s in chunk], dtype=np.int32)
        out, out_len = np.zeros((N, L), dtype=np.int32), np.zeros(N, dtype=np.int32)
        align = np.zeros((M, N, L, S), dtype=ar.FLOAT)
        call("attend_ensemble_greedy", hs, M, ar.ptr(src), ar.ptr(src_len), N, S, L, ar.ptr(out), ar.ptr(out_len),
             ar.ptr(align))
        for i, r in enumerate(rows):
            n, sl = int(out_len[i]), int(src_len[i])
            ids = out[i, :n].copy()
            toks, text = first._out_tokens(ids)
            h = Hypothesis(ids, toks, text, align[0, i, :n, :sl].copy(), None,
                           _source_tokens(sources[r], chunk[i], first.src_vocab))
            h.alignments = align[:, i, :n, :sl].copy()
            res[r] = h
    return res


def beam(models: Sequence[Model], source: Union[Source, Sequence[Source]], beam: int = 5, nbest: int = 1,
         alpha: float = 0.0, max_len: int = 0,
         unknown: str = "warn") -> Union[List[Hypothesis], List[List[Hypothesis]]]:
    """Beam search with the ensemble: the nbest best hypotheses, best first
    (score: the summed mean log-probability / (L+1)^alpha; .alignments
    [M,L,S]); [] for a source unknown="skip" skips. A list of sources gives
    one such list per source."""
    if not _is_one(source):
        return [_beam(models, s, beam, nbest, alpha, max_len, unknown) for s in source]
    return _beam(models, source, beam, nbest, alpha, max_len, unknown)


def _beam(models, source, beam, nbest, alpha, max_len, unknown):
    hs = _handles(models)
    M, first = len(models), models[0]
    src = _encode_all("source", [source], first.src_vocab, unknown, 3)[0]
    if src is None:
        return []
    L, S = _max_len(models, max_len), len(src)
    K = max(int(nbest), 1)
    out, out_len = np.zeros((K, L), dtype=np.int32), np.zeros(K, dtype=np.int32)
    score, align = np.zeros(K, dtype=np.float64), np.zeros((M, K, L, S), dtype=ar.FLOAT)
    got = ctypes.c_int(0)
    call("attend_ensemble_beam", hs, M, ar.ptr(src), S, int(beam), int(nbest), L, float(alpha), ar.ptr(out),
         ar.ptr(out_len), score.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ar.ptr(align), ctypes.byref(got))
    res = []
    for k in range(got.value):
        n = int(out_len[k])
        ids = out[k, :n].copy()
        toks, text = first._out_tokens(ids)
        h = Hypothesis(ids, toks, text, align[0, k, :n].copy(), float(score[k]),
                       _source_tokens(source, src, first.src_vocab))
        h.alignments = align[:, k, :n].copy()
        res.append(h)
    return res


def rescore(model: Model, source: Source, hypotheses: Sequence[Union[Hypothesis, str, Sequence[str]]],
            reverse: bool = False, unknown: str = "warn") -> Optional[List[float]]:
    """model's length-normalised log-probability log p / (len + 1) of each
    hypothesis (Hypothesis objects, str or token lists, looked up in model's
    target vocabulary by name), of the reversed hypothesis with reverse=True
    (a right-to-left model). Combine as (1 - w) * h.score + w * this.
    unknown= applies to the source (None when "skip" skips it)."""
    src = _encode_all("source", [source], model.src_vocab, unknown, 2)[0]
    if src is None:
        return None
    rows = []
    for h in hypotheses:
        toks = h.tokens if isinstance(h, Hypothesis) else h
        if isinstance(toks, str):
            rows.append(model.tgt_vocab.encode(toks) if toks else np.zeros(0, dtype=np.int32))
        else:
            ids = [model.tgt_vocab.token(i) for i in range(len(model.tgt_vocab))]
            index = {t: i for i, t in enumerate(ids)}
            rows.append(np.array([index.get(t, 3) for t in toks], dtype=np.int32))
    n = len(rows)
    if n == 0:
        return []
    L = max(max(len(r) for r in rows), 1)
    hyp = np.zeros((n, L), dtype=np.int32)
    for i, r in enumerate(rows):
        hyp[i, :len(r)] = r
    lens = np.array([len(r) for r in rows], dtype=np.int32)
    out = np.zeros(n, dtype=np.float64)
    call("attend_model_rescore", model._handle(), ar.ptr(src), len(src), ar.ptr(hyp), ar.ptr(lens), n, L,
         1 if reverse else 0, out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
    return [float(x) for x in out]
