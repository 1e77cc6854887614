"""attend.model — models, vocabularies, decoding and training over libattend.

    import attend
    with attend.Model.load("model.safetensors") as m:
        h = m.greedy("abc")[0]          # Hypothesis: .text, .ids, .tokens, .alignment [T,S]
        best = m.beam("abc", beam=5, nbest=3)
        logp, align = m.score("abc", "cba")

A closed model (close(), or the end of a `with` block) raises AttendError on
every call; it never reaches C with a freed handle.

Unknown symbols (a character or word of a text source that the model's
vocabulary does not have): every call that takes text has unknown="warn" (the
command's default: warn with an attend.AttendWarning, read them as <unk>),
"error" (raise AttendValueError before anything is decoded) or "skip" (do not
decode that source: its result is None, or [] for an n-best list). Sources
given as int32 ids are taken as they are.
"""
from __future__ import annotations

import ctypes
import os
import warnings
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as ar
from ._lib import (ERR_ARG, ERR_NULL, MODEL_CONFIG_FIELDS, UNK, AttendError, AttendTypeError, AttendValueError,
                   AttendWarning, BeamOptions, IvResult, IvSpec, ModelConfig, ModelTensor, StepReport,
                   TaskConfig, TrainOptions, TsvOptions, call, cstr, lib)

__all__ = ["Vocab", "Model", "Hypothesis", "Intervention", "train", "TOKENIZERS", "UNKNOWN_POLICIES",
           "INTERVENTIONS", "INTERVENTION_SITES"]

#: a source: text (str) or token ids (a 1-D int32 numpy array)
Source = Union[str, np.ndarray]
#: what unknown= accepts
UNKNOWN_POLICIES = ("warn", "error", "skip")

TOKENIZERS = {"char": 0, "space": 1}
_NAMED = {"cell": ("attend_cell_name", "attend_cell_from_name"),
          "decoder": ("attend_decoder_name", "attend_decoder_from_name"),
          "score": ("attend_score_name", "attend_score_from_name"),
          "normalizer": ("attend_normalizer_name", "attend_normalizer_from_name"),
          "encoder": ("attend_encoder_name", "attend_encoder_from_name"),
          "positions": ("attend_positions_name", "attend_positions_from_name")}


def _name_to_int(field, value):
    if isinstance(value, int):
        return value
    v = getattr(lib, _NAMED[field][1])(str(value).encode())
    if v < 0:
        raise AttendError(ERR_ARG, "%s: unknown name %r" % (field, value))
    return v


# Fields added in 0.2 and 0.3: like the model file's JSON, a dict has them only when not zero.
_OPTIONAL_FIELDS = ("dec_layers", "coverage", "copy", "monotonic", "normalizer", "encoder", "heads", "positions",
                    "post_norm", "max_positions", "kernel", "conv_relu",
                    "uniform_attention")


def config_to_dict(c: ModelConfig) -> Dict[str, Any]:
    d = {f: getattr(c, f) for f in MODEL_CONFIG_FIELDS if f not in _OPTIONAL_FIELDS or getattr(c, f)}
    for f, (to_name, _) in _NAMED.items():
        if f in d:
            d[f] = cstr(getattr(lib, to_name)(d[f]))
    return d


def config_from_dict(d: Dict[str, Any]) -> ModelConfig:
    c = ModelConfig()
    unknown = set(d) - set(MODEL_CONFIG_FIELDS)
    if unknown:
        raise AttendValueError(ERR_ARG, "model config: unknown field(s) %s" % ", ".join(sorted(unknown)))
    for f in MODEL_CONFIG_FIELDS:
        if f in d:
            setattr(c, f, _name_to_int(f, d[f]) if f in _NAMED else int(d[f]))
    return c


class _Handle:
    """An owned C handle freed once by `free_name`; use after close raises."""
    _free: Optional[str] = None
    _what = "handle"

    def __init__(self, h: Optional[int]) -> None:
        self._h = h

    @property
    def closed(self) -> bool:
        """True once close() ran (every other call then raises AttendValueError)."""
        return not self._h

    def _handle(self) -> int:
        if not self._h:
            raise AttendError(ERR_NULL, "%s is closed (freed): it cannot be used any more" % self._what)
        return self._h

    def close(self) -> None:
        """Frees the C object now (idempotent; also at the end of a `with` block)."""
        h, self._h = self._h, None
        if h:
            getattr(lib, self._free)(h)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class Vocab(_Handle):
    """Token strings <-> ids. Ids 0-3 are <pad> <bos> <eos> <unk>."""
    _free = "attend_vocab_free"
    _what = "vocabulary"

    def __init__(self, h: Optional[int], tokenizer: str = "char") -> None:
        super().__init__(h)
        self.tokenizer = tokenizer

    def __len__(self) -> int:
        return lib.attend_vocab_size(self._handle())

    def token(self, i: int) -> Optional[str]:
        """The token of id i (None outside the vocabulary)."""
        return cstr(lib.attend_vocab_token(self._handle(), int(i)))

    def tokens(self) -> List[str]:
        """Every token, by id."""
        return [self.token(i) for i in range(len(self))]

    def encode(self, text: str, max_ids: Optional[int] = None) -> np.ndarray:
        """ids (int32 array) of text, split by the tokenizer (char: every
        character a token; space: words between spaces). A token the
        vocabulary lacks becomes <unk> (3) here; the models' calls apply
        their unknown= policy (unknown_tokens() lists them)."""
        if not isinstance(text, str):
            raise AttendTypeError(ERR_ARG, "text: expected str, got %s" % type(text).__name__)
        b = text.encode("utf-8")
        cap = max_ids if max_ids is not None else max(len(b), 1)
        ids = np.zeros(cap, dtype=np.int32)
        n = ctypes.c_int(0)
        call("attend_vocab_encode", self._handle(), TOKENIZERS[self.tokenizer], 0, b, len(b), ar.ptr(ids), cap,
             ctypes.byref(n))
        return ids[:n.value].copy()

    def split(self, text: str) -> List[str]:
        """The tokens of text as written, as the tokenizer splits it (one
        per id of encode(text))."""
        b = text.encode("utf-8")
        out = []
        for j in range(len(self.encode(text))):
            st, tl = ctypes.c_size_t(0), ctypes.c_size_t(0)
            call("attend_text_token", TOKENIZERS[self.tokenizer], b, len(b), j, ctypes.byref(st), ctypes.byref(tl))
            out.append(b[st.value:st.value + tl.value].decode("utf-8"))
        return out

    def unknown_tokens(self, text: str) -> List[str]:
        """The tokens of text that this vocabulary does not have (read as <unk>)."""
        ids = self.encode(text)
        if not (ids == UNK).any():
            return []
        toks = self.split(text)
        return [toks[j] for j in np.nonzero(ids == UNK)[0]]

    def decode(self, ids: np.ndarray) -> str:
        """The text of ids (int32), tokens joined as the tokenizer writes them."""
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        cap = (len(ids) + 1) * 66 + 1
        buf = ctypes.create_string_buffer(cap)
        call("attend_vocab_decode", self._handle(), TOKENIZERS[self.tokenizer], ar.ptr(ids) if len(ids) else None,
             len(ids), buf, cap)
        return buf.value.decode("utf-8")


class Hypothesis:
    """One decoded output.

    ids        [L] int32, EOS excluded
    tokens     the L output tokens (str)
    text       the output as text
    alignment  [L,S] float32: each emitted step's attention weights over the
               source positions (attend.render.heatmap(h) draws it)
    score      beam: log p / (L+1)^alpha; greedy: None
    source_tokens  the S source tokens (as written in a text source; the
               vocabulary's tokens for ids), the alignment's columns
    """

    def __init__(self, ids: np.ndarray, tokens: List[str], text: str, alignment: np.ndarray,
                 score: Optional[float] = None, source_tokens: Optional[List[str]] = None) -> None:
        self.ids, self.tokens, self.text, self.alignment, self.score = ids, tokens, text, alignment, score
        self.source_tokens = source_tokens

    def __repr__(self) -> str:
        return "Hypothesis(%r, score=%r)" % (self.text, self.score)


def _policy(unknown: str) -> str:
    if unknown not in UNKNOWN_POLICIES:
        raise AttendValueError(ERR_ARG, "unknown=%r: expected 'warn', 'error' or 'skip'" % (unknown,))
    return unknown


def _as_ids(name: str, x: Any, vocab: Optional[Vocab]) -> np.ndarray:
    """A source/target: a str (encoded with vocab) or a 1-D int32 array."""
    if isinstance(x, str):
        if vocab is None:
            raise AttendValueError(ERR_ARG, "%s: this model has no vocabulary for text; pass ids" % name)
        ids = vocab.encode(x)
    elif isinstance(x, np.ndarray):
        ids = ar.check(name, x, np.int32, ndim=1)
    else:
        raise AttendTypeError(ERR_ARG, "%s: expected str or a 1-D int32 numpy array, got %s" % (name,
                                                                                              type(x).__name__))
    if len(ids) == 0:
        raise AttendValueError(ERR_ARG, "%s: empty sequence" % name)
    return ids


def _is_one(x: Any) -> bool:
    """One source (str or an ids array) rather than a list of them."""
    return isinstance(x, (str, np.ndarray))


def _apply_policy(what: str, items: Sequence[Tuple[int, Any, List[str], int]], unknown: str, stacklevel: int,
                  symbols: str = "symbols") -> None:
    """items: (index, text, unknown tokens, token count) of the sources with
    unknown tokens. error: raises for the first; warn: one warning for all."""
    if not items:
        return
    def one(i, text, bad, n):
        return "%s %d '%.80s': %d of %d %s unknown to the model (%s)" % (what, i, text, len(bad), n, symbols,
                                                                         " ".join(bad))
    if unknown == "error":
        more = " (and %d more %ss)" % (len(items) - 1, what) if len(items) > 1 else ""
        raise AttendValueError(ERR_ARG, one(*items[0]) + more + ": not decoded (unknown='warn' reads them as "
                               "<unk>, unknown='skip' skips the %s)" % what)
    if unknown == "warn":
        shown = "; ".join(one(*it) for it in items[:3])
        more = "; and %d more" % (len(items) - 3) if len(items) > 3 else ""
        warnings.warn(AttendWarning(shown + more + ", read as <unk>"), stacklevel=_caller_level())


def _caller_level() -> int:
    """warnings.warn's stacklevel of the first frame outside this package
    (the user's call), counted from the function that calls this one."""
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    f, level = sys._getframe(1), 1   # the function that warns is level 1
    while f is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f, level = f.f_back, level + 1
    return level


def _encode_all(what: str, sources: Sequence[Any], vocab: Optional[Vocab], unknown: str,
                stacklevel: int) -> List[Optional[np.ndarray]]:
    """Every source as ids, after the unknown= policy (None: skipped)."""
    _policy(unknown)
    ids = [_as_ids("%s %d" % (what, i), s, vocab) for i, s in enumerate(sources)]
    bad = []
    for i, s in enumerate(sources):
        if isinstance(s, str) and (ids[i] == UNK).any():
            bad.append((i, s, vocab.unknown_tokens(s), len(ids[i])))
    _apply_policy(what, bad, unknown, stacklevel + 1)
    if unknown == "skip":
        for i, _, _, _ in bad:
            ids[i] = None
    return ids


def _source_tokens(source: Any, ids: np.ndarray, vocab: Optional[Vocab]) -> Optional[List[str]]:
    if vocab is None:
        return None
    if isinstance(source, str):
        return vocab.split(source)
    return [vocab.token(int(i)) for i in ids]


#: the interventions of attend_model_intervene, by the names `attend intervene` prints
INTERVENTIONS = ("remove-state", "delete-token", "replace-token", "uniform", "permute", "drop-top")
#: where the weight edits apply (attend_intervention_site): the decoder's attention or the encoder's self-attention
INTERVENTION_SITES = ("cross", "encoder-self")


class Intervention:
    """What one intervention did (Model.intervene; attend_intervention_result).

    kind        its name ("remove-state", ...), position its source position
    tv, kl, js  [steps] float64: total variation ½Σ|p − p'|, KL(p‖p') and
                Jensen–Shannon divergence (nats) of each compared step (the
                baseline's tokens and EOS, teacher-forced)
    tv_mean, tv_max, kl_mean, kl_max, js_mean, js_max  their summaries
    forced_alignment  [steps,S'] the intervened weights along the baseline
    output      Hypothesis: the free-running greedy output under the intervention
    changed     True when that output differs from the baseline
    src_len     S', the source length the decoder saw (S - 1 after delete-token)
    """

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)

    def __repr__(self) -> str:
        return "Intervention(%s, position=%r, tv_mean=%.4f, output=%r, changed=%r)" % (
            self.kind, self.position, self.tv_mean, self.output.text, self.changed)


class Model(_Handle):
    """An attend encoder-decoder (attend_model). Create with Model.load() or
    attend.train(); .config is a dict (names for cell/decoder/score)."""
    _free = "attend_model_free"
    _what = "model"

    def __init__(self, h: Optional[int], src_vocab: Optional[Vocab] = None, tgt_vocab: Optional[Vocab] = None,
                 tokenizer: str = "char") -> None:
        super().__init__(h)
        self.src_vocab, self.tgt_vocab, self.tokenizer = src_vocab, tgt_vocab, tokenizer

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"], max_batch: int = 0, max_src_len: int = 0,
             max_tgt_len: int = 0) -> "Model":
        """Loads a model file (capacities > 0 override the file's). A missing
        or unreadable file raises AttendOSError (an OSError), as does a file
        that is not a valid model (corrupt, misshapen), naming what is wrong."""
        cap = ModelConfig()
        cap.max_batch, cap.max_src_len, cap.max_tgt_len = max_batch, max_src_len, max_tgt_len
        h, sv, tv, tok = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int(0)
        call("attend_model_load", ctypes.byref(h), str(path).encode(), ctypes.byref(cap), ctypes.byref(sv),
             ctypes.byref(tv), ctypes.byref(tok))
        tname = cstr(lib.attend_tokenizer_name(tok.value))
        return cls(h.value, Vocab(sv.value, tname), Vocab(tv.value, tname) if tv.value else None, tname)

    @classmethod
    def create(cls, config: Dict[str, Any], seed: int = 1, src_vocab: Optional[Vocab] = None,
               tgt_vocab: Optional[Vocab] = None, tokenizer: str = "char") -> "Model":
        """A new model from a config dict (every field of attend_model_config),
        initialised from seed as the library does."""
        c = config_from_dict(config)
        h = ctypes.c_void_p()
        call("attend_model_create", ctypes.byref(h), ctypes.byref(c), int(seed))
        m = cls(h.value, src_vocab, tgt_vocab, tokenizer)
        if c.copy and src_vocab is not None and tgt_vocab is not None:   # copy: source -> target tokens
            call("attend_model_set_copy_map", m._handle(), src_vocab._handle(), tgt_vocab._handle())
        return m

    def close(self) -> None:
        """Frees the model and its vocabularies (idempotent)."""
        super().close()
        for v in (self.src_vocab, self.tgt_vocab):
            if v is not None:
                v.close()

    @property
    def config(self) -> Dict[str, Any]:
        """The configuration as a dict (names for cell, decoder, score, normalizer)."""
        return config_to_dict(lib.attend_model_get_config(self._handle()).contents)

    @property
    def param_count(self) -> int:
        """The number of parameters."""
        return lib.attend_model_param_count(self._handle())

    @property
    def pointer_exclude(self) -> bool:
        """Pointer models: True when a chosen source position is excluded from
        every later step (outputs are permutations; the default of a new
        pointer model and of `attend train --task sort`), False when it may be
        chosen again (`--pointer-repeat`). Saved in the model file. Setting
        True on a model that does not point raises AttendValueError."""
        return bool(lib.attend_model_pointer_exclude(self._handle()))

    @pointer_exclude.setter
    def pointer_exclude(self, on: bool) -> None:
        call("attend_model_set_pointer_exclude", self._handle(), 1 if on else 0)

    def _tensor(self, i):
        t = ModelTensor()
        call("attend_model_tensor_get", self._handle(), i, ctypes.byref(t))
        return t

    def tensors(self) -> Dict[str, np.ndarray]:
        """Every parameter tensor, in file order, as a dict name -> float32 copy."""
        out = {}
        for i in range(lib.attend_model_tensor_count(self._handle())):
            t = self._tensor(i)
            shape = tuple(t.shape[:t.ndim])
            out[cstr(t.name)] = np.ctypeslib.as_array(t.data, shape=(t.numel,)).reshape(shape).copy()
        return out

    def set_tensor(self, name: str, value: np.ndarray) -> None:
        """Overwrites one parameter tensor (float32, the tensor's shape).
        Refused on a quantized (int8/fp16) model: its products read the
        quantized copies, and saving writes them, so the change would be lost."""
        h = self._handle()
        if lib.attend_model_weight_dtype(h) != 0:  # ATTEND_DTYPE_F32
            raise AttendValueError(ERR_ARG, "set_tensor(%r): the model's weights are quantized; change the float "
                                   "model and quantize it again (attend quantize)" % (name,))
        for i in range(lib.attend_model_tensor_count(h)):
            t = self._tensor(i)
            if cstr(t.name) == name:
                ar.check(name, value, ar.FLOAT, tuple(t.shape[:t.ndim]))
                ctypes.memmove(t.data, value.ctypes.data, t.numel * 4)
                return
        raise AttendValueError(ERR_ARG, "no tensor named %r in this model" % name)

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the model file (atomically), with its vocabularies."""
        pointer = self.config["decoder"] == "pointer"
        sv = self.src_vocab._handle() if self.src_vocab is not None else None
        tv = self.tgt_vocab._handle() if self.tgt_vocab is not None and not pointer else None
        call("attend_model_save", self._handle(), str(path).encode(), sv, tv, TOKENIZERS[self.tokenizer])

    def _out_tokens(self, ids, source=None, src_ids=None):
        if self.config["decoder"] == "pointer" or self.tgt_vocab is None:
            return [str(int(i)) for i in ids], " ".join(str(int(i)) for i in ids)
        V = len(self.tgt_vocab)
        if not self.config.get("copy") or all(int(i) < V for i in ids):
            toks = [self.tgt_vocab.token(i) for i in ids]
            return toks, self.tgt_vocab.decode(ids)
        # copy: an id V + j is the source token at position j (its text when the source was text)
        if isinstance(source, str):
            b = source.encode("utf-8")
            tok = TOKENIZERS[self.tokenizer]
            toks = []
            for i in ids:
                if int(i) < V:
                    toks.append(self.tgt_vocab.token(i))
                    continue
                st, tl = ctypes.c_size_t(0), ctypes.c_size_t(0)
                call("attend_text_token", tok, b, len(b), int(i) - V, ctypes.byref(st), ctypes.byref(tl))
                toks.append(b[st.value:st.value + tl.value].decode("utf-8"))
            ids32 = np.ascontiguousarray(ids, dtype=np.int32)
            cap = len(b) + (len(ids32) + 1) * 66 + 1
            buf = ctypes.create_string_buffer(cap)
            call("attend_vocab_decode_copy", self.tgt_vocab._handle(), tok, ar.ptr(ids32), len(ids32), b, len(b),
                 buf, cap)
            return toks, buf.value.decode("utf-8")
        toks = [self.tgt_vocab.token(i) if int(i) < V else self.src_vocab.token(int(src_ids[int(i) - V]))
                for i in ids]
        return toks, ("" if self.tokenizer == "char" else " ").join(toks)

    def _max_len(self, max_len):
        return max_len if max_len else self.config["max_tgt_len"] + 1

    def _hyp(self, ids, align, source, src_ids, score=None):
        toks, text = self._out_tokens(ids, source, src_ids)
        return Hypothesis(ids, toks, text, align, score, _source_tokens(source, src_ids, self.src_vocab))

    def greedy(self, sources: Union[Source, Sequence[Source]], max_len: int = 0,
               unknown: str = "warn") -> List[Optional[Hypothesis]]:
        """Greedy decoding of one source or a list of sources (str or int32
        ids), batched by the model's max_batch; returns a list of Hypothesis,
        one per source (None for a source skipped by unknown="skip")."""
        h = self._handle()
        if _is_one(sources):
            sources = [sources]
        srcs = _encode_all("source", sources, self.src_vocab, unknown, 2)
        todo = [i for i, s in enumerate(srcs) if s is not None]
        L = self._max_len(max_len)
        B = max(self.config["max_batch"], 1)
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
            align = ar.zeros(N, L, S)
            call("attend_model_greedy", h, ar.ptr(src), ar.ptr(src_len), N, S, L, ar.ptr(out), ar.ptr(out_len),
                 ar.ptr(align))
            for i, r in enumerate(rows):
                n, sl = int(out_len[i]), int(src_len[i])
                res[r] = self._hyp(out[i, :n].copy(), align[i, :n, :sl].copy(), sources[r], chunk[i])
        return res

    def beam(self, source: Union[Source, Sequence[Source]], beam: int = 5, nbest: int = 1, alpha: float = 0.0,
             max_len: int = 0, coverage_penalty: float = 0.0,
             unknown: str = "warn") -> Union[List[Hypothesis], List[List[Hypothesis]]]:
        """Beam search of width `beam`: the nbest best hypotheses, best first
        (a list; [] for a source skipped by unknown="skip"); a list of sources
        gives one such list per source. Scores: log p / (L+1)^alpha, plus
        coverage_penalty * sum_j log(min(total attention on source j, 1)) (Wu
        et al. 2016; attend_model_beam_opts)."""
        h = self._handle()
        one = _is_one(source)
        sources = [source] if one else list(source)
        srcs = _encode_all("source", sources, self.src_vocab, unknown, 2)
        lists = []
        for source, src in zip(sources, srcs):
            if src is None:
                lists.append([])
                continue
            L, S = self._max_len(max_len), len(src)
            K = max(int(nbest), 1)
            out, out_len = np.zeros((K, L), dtype=np.int32), np.zeros(K, dtype=np.int32)
            score, align = np.zeros(K, dtype=np.float64), ar.zeros(K, L, S)
            got = ctypes.c_int(0)
            opts = BeamOptions(float(alpha), float(coverage_penalty))
            call("attend_model_beam_opts", h, ar.ptr(src), S, int(beam), int(nbest), L, ctypes.byref(opts),
                 ar.ptr(out), ar.ptr(out_len), score.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ar.ptr(align),
                 ctypes.byref(got))
            lists.append([self._hyp(out[k, :int(out_len[k])].copy(), align[k, :int(out_len[k])].copy(), source, src,
                                    float(score[k])) for k in range(got.value)])
        return lists[0] if one else lists

    def score(self, source: Union[Source, Sequence[Source]], target: Union[Source, Sequence[Source]],
              unknown: str = "warn") -> Any:
        """Forced scoring: (log p(target | source), alignment [T+1,S]) with the
        EOS step last (POINTER models: target positions, alignment [T,S]);
        None when unknown="skip" skips the pair. Lists of sources and targets
        give a list of such results."""
        h = self._handle()
        one = _is_one(source)
        sources = [source] if one else list(source)
        targets = [target] if one else list(target)
        if len(sources) != len(targets):
            raise AttendValueError(ERR_ARG, "score: %d sources but %d targets" % (len(sources), len(targets)))
        pointer = self.config["decoder"] == "pointer"
        srcs = _encode_all("source", sources, self.src_vocab, unknown, 2)
        tgts = _encode_all("target", targets, None if pointer else self.tgt_vocab, unknown, 2)
        out = []
        for src, tgt in zip(srcs, tgts):
            if src is None or tgt is None:
                out.append(None)
                continue
            steps = len(tgt) if pointer else len(tgt) + 1
            logp = ctypes.c_double(0)
            align = ar.zeros(steps, len(src))
            call("attend_model_score", h, ar.ptr(src), len(src), ar.ptr(tgt), len(tgt), ctypes.byref(logp),
                 ar.ptr(align))
            out.append((logp.value, align))
        return out[0] if one else out

    def encoder_attention(self, source: Source, layer: Optional[int] = None, head: Optional[int] = None,
                          unknown: str = "warn") -> Optional[np.ndarray]:
        """The transformer encoder's self-attention over one source
        (attend_model_encoder_attention; `attend align --encoder-self`): rows
        are query positions, columns the key positions they attend to (each
        row sums to 1). layer (1 .. layers) and head (1 .. heads, 0 = the
        heads' mean) pick one map [S,S]; layer=None gives every layer, head=None
        every head: [layers,heads,S,S], [heads,S,S] or [layers,S,S]. An encoder
        without self-attention (rnn, conv) or a layer/head out of range raises
        AttendValueError naming them. None when unknown="skip" skips the source."""
        h = self._handle()
        src = _encode_all("source", [source], self.src_vocab, unknown, 2)[0]
        if src is None:
            return None
        S = len(src)
        cfg = self.config
        layers = [layer] if layer is not None else list(range(1, max(int(cfg.get("enc_layers", 1)), 1) + 1))
        heads = [head] if head is not None else list(range(1, int(cfg.get("heads", 0) or 1) + 1))
        out = np.zeros((len(layers), len(heads), S, S), dtype=ar.FLOAT)
        for i, l in enumerate(layers):
            for j, hd in enumerate(heads):
                m = ar.zeros(S, S)
                call("attend_model_encoder_attention", h, ar.ptr(src), S, int(l), int(hd), ar.ptr(m))
                out[i, j] = m
        if layer is not None:
            out = out[0]
            return out[0] if head is not None else out
        return out[:, 0] if head is not None else out

    def intervene(self, source: Source, kind: str, position: int = 0, token: Union[str, int, None] = None,
                  seed: int = 1, base: Union[Hypothesis, Source, None] = None, max_len: int = 0,
                  unknown: str = "warn", site: str = "cross", layer: int = 0,
                  head: int = 0) -> Optional[Intervention]:
        """Runs one intervention on source (attend_model_intervene; `attend
        intervene` runs them all): kind is one of INTERVENTIONS,
          "remove-state"   hide saved state `position` from attention (the
                           softmax renormalises over the rest)
          "delete-token"   delete source token `position` and re-encode
          "replace-token"  replace it by `token` (a source token or id), re-encode
          "uniform", "permute" (seeded by `seed`), "drop-top"  every step's weights
        The baseline output `base` (a Hypothesis, text or target ids) is by
        default the model's own greedy output for source. Returns an
        Intervention (None when unknown="skip" skips the source). BAHDANAU and
        LUONG decoders (NONE: token deletion and replacement only).
        site="encoder-self" applies remove-state, uniform, permute and drop-top
        to a transformer encoder's self-attention instead (every query row of
        layer `layer` and head `head`, 1-based, 0 = every one; remove-state
        hides key `position` from every query); the edited encoder states feed
        the unchanged decoder (any decoder with a vocabulary)."""
        h = self._handle()
        if kind not in INTERVENTIONS:
            raise AttendValueError(ERR_ARG, "intervention %r: expected one of %s" % (kind, ", ".join(INTERVENTIONS)))
        if site not in INTERVENTION_SITES:
            raise AttendValueError(ERR_ARG, "site %r: expected one of %s" % (site, ", ".join(INTERVENTION_SITES)))
        src = _encode_all("source", [source], self.src_vocab, unknown, 2)[0]
        if src is None:
            return None
        L = self._max_len(max_len)
        if base is None:
            base_ids = self.greedy(src, max_len=L)[0].ids
        elif isinstance(base, Hypothesis):
            base_ids = np.ascontiguousarray(base.ids, dtype=np.int32)
        else:
            base_ids = _as_ids("base", base, self.tgt_vocab)
        tok = 0
        if kind == "replace-token":
            if token is None:
                raise AttendValueError(ERR_ARG, "replace-token needs token= (a source token or id)")
            if isinstance(token, str):
                ids = self.src_vocab.encode(token) if self.src_vocab is not None else np.zeros(0, np.int32)
                if len(ids) != 1 or ids[0] == UNK:
                    raise AttendValueError(ERR_ARG, "token %r: not one token of the source vocabulary" % token)
                tok = int(ids[0])
            else:
                tok = int(token)
        S, B = len(src), len(base_ids)
        tv, kl, js = (np.zeros(B + 1, dtype=np.float64) for _ in range(3))
        forced, out, out_align = ar.zeros(B + 1, S), np.zeros(L, dtype=np.int32), ar.zeros(L, S)
        dp = ctypes.POINTER(ctypes.c_double)
        res = IvResult(tv.ctypes.data_as(dp), kl.ctypes.data_as(dp), js.ctypes.data_as(dp), ar.ptr(forced),
                       ar.ptr(out), ar.ptr(out_align))
        spec = IvSpec(INTERVENTIONS.index(kind), int(position), tok, int(seed), INTERVENTION_SITES.index(site),
                      int(layer), int(head))
        call("attend_model_intervene", h, ar.ptr(src), S, ar.ptr(base_ids) if B else None, B, L, ctypes.byref(spec),
             ctypes.byref(res))
        n, s2, steps = res.out_len, res.src_len, res.steps
        forced = forced.reshape(-1)[:steps * s2].reshape(steps, s2).copy()
        oa = out_align.reshape(-1)[:n * s2].reshape(n, s2).copy()
        toks, text = self._out_tokens(out[:n].copy(), None, src)
        stoks = _source_tokens(source, src, self.src_vocab)
        if stoks is not None and kind == "delete-token":
            stoks = stoks[:position] + stoks[position + 1:]
        output = Hypothesis(out[:n].copy(), toks, text, oa, None, stoks)
        return Intervention(kind=kind, position=position, tv=tv[:steps].copy(), kl=kl[:steps].copy(),
                            js=js[:steps].copy(), tv_mean=res.tv_mean, tv_max=res.tv_max, kl_mean=res.kl_mean,
                            kl_max=res.kl_max, js_mean=res.js_mean, js_max=res.js_max, forced_alignment=forced,
                            output=output, changed=bool(res.changed), src_len=s2)


# ---------------------------------------------------------------- training
class _Dataset(_Handle):
    _free = "attend_dataset_free"
    _what = "dataset"

    def __len__(self):
        return lib.attend_dataset_size(self._handle())


class _Trainer(_Handle):
    _free = "attend_trainer_free"
    _what = "trainer"


def _task_data(task, symbols, min_len, max_len, count, dev_count, data_seed):
    tasks = {"copy": 0, "reverse": 1, "sort": 2, "bag": 3}
    if task not in tasks:
        raise AttendError(ERR_ARG, "task %r: expected copy, reverse, sort or bag" % (task,))
    tc = TaskConfig(tasks[task], symbols, min_len, max_len, count, data_seed)
    d, v = ctypes.c_void_p(), ctypes.c_void_p()
    call("attend_dataset_task", ctypes.byref(d), ctypes.byref(v), ctypes.byref(tc))
    train_d, vocab = _Dataset(d.value), Vocab(v.value, "char")
    tc.count, tc.seed = dev_count, data_seed + 1  # the CLI's dev set: --data-seed + 1
    d2, v2 = ctypes.c_void_p(), ctypes.c_void_p()
    call("attend_dataset_task", ctypes.byref(d2), ctypes.byref(v2), ctypes.byref(tc))
    lib.attend_vocab_free(v2.value)
    return train_d, _Dataset(d2.value), vocab, vocab, "char", task == "sort"


def _tsv_data(train_tsv, dev_tsv, tokenizer, copy=False):
    sv, tv = ctypes.c_void_p(), ctypes.c_void_p()
    call("attend_vocab_create", ctypes.byref(sv))
    src_vocab = Vocab(sv.value, tokenizer)
    call("attend_vocab_create", ctypes.byref(tv))
    tgt_vocab = Vocab(tv.value, tokenizer)
    opt = TsvOptions(TOKENIZERS[tokenizer], 0, 0, 0, 1 if copy else 0)
    sets = []
    for path, grow in ((train_tsv, 1), (dev_tsv, 0)):
        if path is None:
            sets.append(None)
            continue
        d, skipped = ctypes.c_void_p(), ctypes.c_int(0)
        call("attend_dataset_read_tsv", ctypes.byref(d), str(path).encode(), src_vocab._handle(),
             tgt_vocab._handle(), grow, ctypes.byref(opt), ctypes.byref(skipped))
        ds = _Dataset(d.value)
        if len(ds) == 0:
            raise AttendError(ERR_ARG, "%s: no usable pairs" % path)
        sets.append(ds)
    return sets[0], sets[1], src_vocab, tgt_vocab, tokenizer, False


def train(task: Optional[str] = None, train_tsv: Optional[str] = None, dev_tsv: Optional[str] = None,
          tokenizer: str = "char", symbols: int = 10, min_len: int = 1, max_len: int = 10, count: int = 10000,
          dev_count: int = 500, data_seed: int = 1, cell: str = "gru", decoder: Optional[str] = None,
          score: str = "additive", emb: int = 32, hidden: int = 64, layers: int = 1, dec_hidden: int = 0,
          attn: int = 64, steps: int = 1000, batch: int = 64, optimizer: str = "adam", lr: float = 0.0,
          clip: float = 1.0, warmup: Optional[int] = None, decay: Optional[int] = None, min_lr: float = 0.0,
          weight_decay: float = 0.0, momentum: float = 0.0, seed: int = 1, max_nonfinite: int = 100,
          dropout: float = 0.0, label_smoothing: float = 0.0,
          progress: Optional[Callable[[Dict[str, Any]], Optional[bool]]] = None, dec_layers: int = 1,
          sampling_prob: float = 0.0, sampling_ramp: int = 0, monotonic: bool = False,
          guided_alignment: float = 0.0, copy: bool = False, coverage: bool = False, coverage_loss: float = 0.0,
          normalizer: str = "softmax", pointer_repeat: bool = False) -> Model:
    """Trains a model as `attend train` does with the same options (the
    defaults are the command's), and returns it (a Model). Data: a built-in
    task ("copy", "reverse", "sort", "bag") or TSV files (source<TAB>target, and
    optionally <TAB>alignment: links "i-j" of source token i and target token
    j). With the same options the saved model is byte-identical to the
    command's --out file.

    guided_alignment: λ of `--guided-alignment` (0: off): the cross-entropy
    between the attention weights and the data's alignments (a TSV's third
    column, or a task's own) is added to the loss, times λ.

    dropout, label_smoothing: in [0, 1), as --dropout and --label-smoothing
    (training only; the model returned never drops or smooths).
    dec_layers: stacked decoder layers (--dec-layers); sampling_prob and
    sampling_ramp: scheduled sampling (--sampling-prob, --sampling-ramp).
    monotonic: monotonic attention (`attend train --monotonic`; config key
    "monotonic"): expected alignments in training, hard ones in decoding.
    copy=True is `attend train --copy` (the pointer-generator; bahdanau or luong).

    pointer_repeat: a pointer model (task "sort") may choose a source
    position again (`--pointer-repeat`; Model.pointer_exclude False); by
    default each position is chosen once (outputs are permutations).

    coverage: the coverage input of the additive score (`--coverage`);
    coverage_loss: λ of See et al.'s coverage loss (`--coverage-loss`).

    progress: None, or a function called after every step with a dict
    (step, steps, epoch, loss, tokens, grad_norm, lr, clipped, skipped);
    returning False stops training early.
    """
    if (task is None) == (train_tsv is None):
        raise AttendError(ERR_ARG, "train: give task=... or train_tsv=..., not both or neither")
    if task is not None:
        data = _task_data(task, symbols, min_len, max_len, count, dev_count, data_seed)
    else:
        data = _tsv_data(train_tsv, dev_tsv, tokenizer, copy)
    train_d, dev_d, src_vocab, tgt_vocab, tok, pointer = data
    shared = tgt_vocab is src_vocab
    model = trainer = None
    try:
        if guided_alignment > 0 and lib.attend_dataset_aligned_pairs(train_d._handle()) == 0:
            raise AttendError(ERR_ARG, "train: guided_alignment=%g needs alignments: no line of %s has a third "
                              "column (source<TAB>target<TAB>i-j ...)" % (guided_alignment, train_tsv))
        mc = {"cell": cell, "score": score,
              "decoder": decoder if decoder is not None else ("pointer" if pointer else "bahdanau"),
              "src_vocab": len(src_vocab), "tgt_vocab": len(tgt_vocab), "emb": emb, "enc_hidden": hidden,
              "enc_layers": layers, "attn": attn, "max_batch": batch}
        if coverage:
            mc["coverage"] = 1
        if dec_layers > 1:
            mc["dec_layers"] = dec_layers
        if monotonic:
            mc["monotonic"] = 1
        if copy:
            mc["copy"] = 1
        if normalizer != "softmax":
            mc["normalizer"] = normalizer
        dot = _name_to_int("score", score) in (0, 1)
        mc["dec_hidden"] = dec_hidden if dec_hidden else (2 * hidden if dot else 128)
        mls = [lib.attend_dataset_max_src_len(d._handle()) for d in (train_d, dev_d) if d is not None]
        mlt = [lib.attend_dataset_max_tgt_len(d._handle()) for d in (train_d, dev_d) if d is not None]
        mc["max_src_len"], mc["max_tgt_len"] = max(mls), max(mlt)
        model = Model.create(mc, seed, src_vocab, None if shared else tgt_vocab, tok)
        if pointer_repeat:
            if mc["decoder"] != "pointer":
                raise AttendValueError(ERR_ARG, "train: pointer_repeat applies to pointer models (task='sort')")
            model.pointer_exclude = False
        okind = {"adam": 0, "sgd": 1}[optimizer]
        oc = lib.attend_optim_defaults(okind)
        if warmup is None:
            warmup = min(steps // 10, 100)
        if decay is None:
            decay = steps - warmup if steps > warmup else 0
        oc.lr = lr if lr > 0 else (3e-3 if okind == 0 else 0.1)
        oc.clip_norm, oc.warmup_steps, oc.decay_steps, oc.min_lr = clip, warmup, decay, min_lr
        oc.weight_decay, oc.momentum = weight_decay, momentum
        t = ctypes.c_void_p()
        call("attend_trainer_create", ctypes.byref(t), model._handle(), ctypes.byref(oc), train_d._handle(), batch,
             seed)
        trainer = _Trainer(t.value)
        call("attend_trainer_set_max_nonfinite", trainer._handle(), max_nonfinite)
        topt = TrainOptions()
        topt.dropout, topt.label_smoothing = dropout, label_smoothing
        topt.sampling_prob, topt.sampling_ramp = sampling_prob, sampling_ramp
        topt.guided_alignment = guided_alignment
        topt.coverage_loss = float(coverage_loss)
        call("attend_trainer_set_options", trainer._handle(), ctypes.byref(topt))
        rep = StepReport()
        while lib.attend_trainer_steps(trainer._handle()) < steps:
            call("attend_trainer_step", trainer._handle(), ctypes.byref(rep))
            if progress is not None:
                info = {"step": rep.step, "steps": steps, "epoch": rep.epoch, "loss": rep.tf.loss,
                        "tokens": rep.tf.tokens, "grad_norm": rep.opt.grad_norm, "lr": rep.opt.lr,
                        "clipped": bool(rep.opt.clipped), "skipped": bool(rep.skipped)}
                if progress(info) is False:
                    break
        if shared:
            model.tgt_vocab = src_vocab  # one vocabulary for both sides (Vocab.close is idempotent)
        return model
    except BaseException:
        if model is not None:
            model.src_vocab = model.tgt_vocab = None
            model.close()
        src_vocab.close()
        if not shared:
            tgt_vocab.close()
        raise
    finally:
        if trainer is not None:
            trainer.close()
        train_d.close()
        if dev_d is not None:
            dev_d.close()
