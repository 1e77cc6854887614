"""attend.model — models, vocabularies, decoding and training over libattend.

    import attend
    with attend.Model.load("model.safetensors") as m:
        h = m.greedy("abc")[0]          # Hypothesis: .text, .ids, .tokens, .alignment [T,S]
        best = m.beam("abc", beam=5, nbest=3)
        logp, align = m.score("abc", "cba")

A closed model (close(), or the end of a `with` block) raises AttendError on
every call; it never reaches C with a freed handle.
"""
import ctypes

import numpy as np

from . import _arrays as ar
from ._lib import (ERR_ARG, ERR_NULL, MODEL_CONFIG_FIELDS, AttendError, BeamOptions, ModelConfig, ModelTensor,
                   StepReport, TaskConfig, TrainOptions, TsvOptions, call, cstr, lib)

__all__ = ["Vocab", "Model", "Hypothesis", "train", "TOKENIZERS"]

TOKENIZERS = {"char": 0, "space": 1}
_NAMED = {"cell": ("attend_cell_name", "attend_cell_from_name"),
          "decoder": ("attend_decoder_name", "attend_decoder_from_name"),
          "score": ("attend_score_name", "attend_score_from_name"),
          "normalizer": ("attend_normalizer_name", "attend_normalizer_from_name")}


def _name_to_int(field, value):
    if isinstance(value, int):
        return value
    v = getattr(lib, _NAMED[field][1])(str(value).encode())
    if v < 0:
        raise AttendError(ERR_ARG, "%s: unknown name %r" % (field, value))
    return v


# Fields added in 0.2: like the model file's JSON, a dict has them only when not zero.
_OPTIONAL_FIELDS = ("dec_layers", "coverage", "copy", "monotonic", "normalizer")


def config_to_dict(c):
    d = {f: getattr(c, f) for f in MODEL_CONFIG_FIELDS if f not in _OPTIONAL_FIELDS or getattr(c, f)}
    for f, (to_name, _) in _NAMED.items():
        if f in d:
            d[f] = cstr(getattr(lib, to_name)(d[f]))
    return d


def config_from_dict(d):
    c = ModelConfig()
    unknown = set(d) - set(MODEL_CONFIG_FIELDS)
    if unknown:
        raise AttendError(ERR_ARG, "model config: unknown field(s) %s" % ", ".join(sorted(unknown)))
    for f in MODEL_CONFIG_FIELDS:
        if f in d:
            setattr(c, f, _name_to_int(f, d[f]) if f in _NAMED else int(d[f]))
    return c


class _Handle:
    """An owned C handle freed once by `free_name`; use after close raises."""
    _free = None
    _what = "handle"

    def __init__(self, h):
        self._h = h

    @property
    def closed(self):
        return not self._h

    def _handle(self):
        if not self._h:
            raise AttendError(ERR_NULL, "%s is closed (freed): it cannot be used any more" % self._what)
        return self._h

    def close(self):
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

    def __init__(self, h, tokenizer="char"):
        super().__init__(h)
        self.tokenizer = tokenizer

    def __len__(self):
        return lib.attend_vocab_size(self._handle())

    def token(self, i):
        return cstr(lib.attend_vocab_token(self._handle(), int(i)))

    def tokens(self):
        return [self.token(i) for i in range(len(self))]

    def encode(self, text, max_ids=None):
        """ids (int32 array) of text; unknown tokens become <unk> (3)."""
        b = text.encode("utf-8")
        cap = max_ids if max_ids is not None else max(len(b), 1)
        ids = np.zeros(cap, dtype=np.int32)
        n = ctypes.c_int(0)
        call("attend_vocab_encode", self._handle(), TOKENIZERS[self.tokenizer], 0, b, len(b), ar.ptr(ids), cap,
             ctypes.byref(n))
        return ids[:n.value].copy()

    def decode(self, ids):
        ids = np.ascontiguousarray(ids, dtype=np.int32)
        cap = (len(ids) + 1) * 66 + 1
        buf = ctypes.create_string_buffer(cap)
        call("attend_vocab_decode", self._handle(), TOKENIZERS[self.tokenizer], ar.ptr(ids) if len(ids) else None,
             len(ids), buf, cap)
        return buf.value.decode("utf-8")


class Hypothesis:
    """One decoded output: ids [L] (int32, EOS excluded), tokens, text,
    alignment [L,S] (float32: the attention weights of each emitted step over
    the source positions) and score (beam: log p / (L+1)^alpha; greedy: None)."""

    def __init__(self, ids, tokens, text, alignment, score=None):
        self.ids, self.tokens, self.text, self.alignment, self.score = ids, tokens, text, alignment, score

    def __repr__(self):
        return "Hypothesis(%r, score=%r)" % (self.text, self.score)


def _as_ids(name, x, vocab):
    """A source/target: a str (encoded with vocab) or a 1-D int32 array."""
    if isinstance(x, str):
        if vocab is None:
            raise AttendError(ERR_ARG, "%s: this model has no vocabulary for text; pass ids" % name)
        ids = vocab.encode(x)
    else:
        ids = ar.check(name, x, np.int32, ndim=1)
    if len(ids) == 0:
        raise AttendError(ERR_ARG, "%s: empty sequence" % name)
    return ids


class Model(_Handle):
    """An attend encoder-decoder (attend_model). Create with Model.load() or
    attend.train(); .config is a dict (names for cell/decoder/score)."""
    _free = "attend_model_free"
    _what = "model"

    def __init__(self, h, src_vocab=None, tgt_vocab=None, tokenizer="char"):
        super().__init__(h)
        self.src_vocab, self.tgt_vocab, self.tokenizer = src_vocab, tgt_vocab, tokenizer

    @classmethod
    def load(cls, path, max_batch=0, max_src_len=0, max_tgt_len=0):
        """Loads a model file (capacities > 0 override the file's). A missing,
        corrupt or misshapen file raises AttendError naming what is wrong."""
        cap = ModelConfig()
        cap.max_batch, cap.max_src_len, cap.max_tgt_len = max_batch, max_src_len, max_tgt_len
        h, sv, tv, tok = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_int(0)
        call("attend_model_load", ctypes.byref(h), str(path).encode(), ctypes.byref(cap), ctypes.byref(sv),
             ctypes.byref(tv), ctypes.byref(tok))
        tname = cstr(lib.attend_tokenizer_name(tok.value))
        return cls(h.value, Vocab(sv.value, tname), Vocab(tv.value, tname) if tv.value else None, tname)

    @classmethod
    def create(cls, config, seed=1, src_vocab=None, tgt_vocab=None, tokenizer="char"):
        """A new model from a config dict (every field of attend_model_config),
        initialised from seed as the library does."""
        c = config_from_dict(config)
        h = ctypes.c_void_p()
        call("attend_model_create", ctypes.byref(h), ctypes.byref(c), int(seed))
        m = cls(h.value, src_vocab, tgt_vocab, tokenizer)
        if c.copy and src_vocab is not None and tgt_vocab is not None:   # copy: source -> target tokens
            call("attend_model_set_copy_map", m._handle(), src_vocab._handle(), tgt_vocab._handle())
        return m

    def close(self):
        super().close()
        for v in (self.src_vocab, self.tgt_vocab):
            if v is not None:
                v.close()

    @property
    def config(self):
        return config_to_dict(lib.attend_model_get_config(self._handle()).contents)

    @property
    def param_count(self):
        return lib.attend_model_param_count(self._handle())

    def _tensor(self, i):
        t = ModelTensor()
        call("attend_model_tensor_get", self._handle(), i, ctypes.byref(t))
        return t

    def tensors(self):
        """Every parameter tensor, in file order, as a dict name -> float32 copy."""
        out = {}
        for i in range(lib.attend_model_tensor_count(self._handle())):
            t = self._tensor(i)
            shape = tuple(t.shape[:t.ndim])
            out[cstr(t.name)] = np.ctypeslib.as_array(t.data, shape=(t.numel,)).reshape(shape).copy()
        return out

    def set_tensor(self, name, value):
        """Overwrites one parameter tensor (float32, the tensor's shape).
        Refused on a quantized (int8/fp16) model: its products read the
        quantized copies, and saving writes them, so the change would be lost."""
        h = self._handle()
        if lib.attend_model_weight_dtype(h) != 0:  # ATTEND_DTYPE_F32
            raise AttendError(ERR_ARG, "set_tensor(%r): the model's weights are quantized; change the float model "
                              "and quantize it again (attend quantize)" % (name,))
        for i in range(lib.attend_model_tensor_count(h)):
            t = self._tensor(i)
            if cstr(t.name) == name:
                ar.check(name, value, ar.FLOAT, tuple(t.shape[:t.ndim]))
                ctypes.memmove(t.data, value.ctypes.data, t.numel * 4)
                return
        raise AttendError(ERR_ARG, "no tensor named %r in this model" % name)

    def save(self, path):
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

    def greedy(self, sources, max_len=0):
        """Greedy decoding of one source or a list of sources (str or int32
        ids); returns a list of Hypothesis, one per source."""
        h = self._handle()
        if isinstance(sources, (str, np.ndarray)):
            sources = [sources]
        srcs = [_as_ids("source %d" % i, s, self.src_vocab) for i, s in enumerate(sources)]
        L = self._max_len(max_len)
        B = max(self.config["max_batch"], 1)
        res = []
        for at in range(0, len(srcs), B):
            chunk = srcs[at:at + B]
            N, S = len(chunk), max(len(s) for s in chunk)
            src = np.zeros((N, S), dtype=np.int32)
            for i, s in enumerate(chunk):
                src[i, :len(s)] = s
            src_len = np.array([len(s) for s in chunk], dtype=np.int32)
            out, out_len = np.zeros((N, L), dtype=np.int32), np.zeros(N, dtype=np.int32)
            align = ar.zeros(N, L, S)
            call("attend_model_greedy", h, ar.ptr(src), ar.ptr(src_len), N, S, L, ar.ptr(out), ar.ptr(out_len),
                 ar.ptr(align))
            for i in range(N):
                n, sl = int(out_len[i]), int(src_len[i])
                ids = out[i, :n].copy()
                toks, text = self._out_tokens(ids, sources[at + i], chunk[i])
                res.append(Hypothesis(ids, toks, text, align[i, :n, :sl].copy()))
        return res

    def beam(self, source, beam=5, nbest=1, alpha=0.0, max_len=0, coverage_penalty=0.0):
        """Beam search of width `beam`: the nbest best hypotheses, best first.
        Scores: log p / (L+1)^alpha, plus coverage_penalty * sum_j log(min(total
        attention on source j, 1)) (Wu et al. 2016; attend_model_beam_opts)."""
        h = self._handle()
        src = _as_ids("source", source, self.src_vocab)
        L, S = self._max_len(max_len), len(src)
        K = max(int(nbest), 1)
        out, out_len = np.zeros((K, L), dtype=np.int32), np.zeros(K, dtype=np.int32)
        score, align = np.zeros(K, dtype=np.float64), ar.zeros(K, L, S)
        got = ctypes.c_int(0)
        opts = BeamOptions(float(alpha), float(coverage_penalty))
        call("attend_model_beam_opts", h, ar.ptr(src), S, int(beam), int(nbest), L, ctypes.byref(opts), ar.ptr(out),
             ar.ptr(out_len), score.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), ar.ptr(align),
             ctypes.byref(got))
        res = []
        for k in range(got.value):
            n = int(out_len[k])
            ids = out[k, :n].copy()
            toks, text = self._out_tokens(ids, source, src)
            res.append(Hypothesis(ids, toks, text, align[k, :n].copy(), float(score[k])))
        return res

    def score(self, source, target):
        """Forced scoring: (log p(target | source), alignment [T+1,S]) with the
        EOS step last (POINTER models: target positions, alignment [T,S])."""
        h = self._handle()
        src = _as_ids("source", source, self.src_vocab)
        pointer = self.config["decoder"] == "pointer"
        tgt = _as_ids("target", target, None if pointer else self.tgt_vocab)
        steps = len(tgt) if pointer else len(tgt) + 1
        logp = ctypes.c_double(0)
        align = ar.zeros(steps, len(src))
        call("attend_model_score", h, ar.ptr(src), len(src), ar.ptr(tgt), len(tgt), ctypes.byref(logp),
             ar.ptr(align))
        return logp.value, align


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
    tasks = {"copy": 0, "reverse": 1, "sort": 2}
    if task not in tasks:
        raise AttendError(ERR_ARG, "task %r: expected copy, reverse or sort" % (task,))
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


def train(task=None, train_tsv=None, dev_tsv=None, tokenizer="char", symbols=10, min_len=1, max_len=10,
          count=10000, dev_count=500, data_seed=1, cell="gru", decoder=None, score="additive", emb=32, hidden=64,
          layers=1, dec_hidden=0, attn=64, steps=1000, batch=64, optimizer="adam", lr=0.0, clip=1.0, warmup=None,
          decay=None, min_lr=0.0, weight_decay=0.0, momentum=0.0, seed=1, max_nonfinite=100, dropout=0.0,
          label_smoothing=0.0, progress=None, dec_layers=1, sampling_prob=0.0, sampling_ramp=0, monotonic=False,
          guided_alignment=0.0, copy=False, coverage=False, coverage_loss=0.0, normalizer="softmax"):
    """Trains a model as `attend train` does with the same options (the
    defaults are the command's), and returns it (a Model). Data: a built-in
    task ("copy", "reverse", "sort") or TSV files (source<TAB>target, and
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
