"""_lib.py — loads libattend.so and declares, with ctypes, the C structures
and every function the package calls (argtypes and restype set for each).

The library is found, in order: $ATTEND_LIBRARY (a path to libattend.so.0);
the directory _where.LIBDIR names relative to this package (written by CMake
for the build tree and for the installed tree, so neither needs
LD_LIBRARY_PATH); then the system's loader path (libattend.so.0).
"""
import ctypes
import ctypes.util
import os

from ctypes import (POINTER, Structure, c_char, c_char_p, c_double, c_int, c_int32, c_int64, c_long, c_size_t,
                    c_uint8, c_uint64, c_void_p)

SONAME = "libattend.so.0"

# ---------------------------------------------------------------- status codes (attend.h, pinned)
OK, ERR_NULL, ERR_SHAPE, ERR_MASKED_ROW, ERR_ARG, ERR_ALLOC, ERR_NONFINITE, ERR_IO, ERR_FORMAT, ERR_CAPACITY = \
    range(10)
ERROR_MSG_MAX = 256
PAD, BOS, EOS, UNK = 0, 1, 2, 3
G2P_MAX_LEN = 64
MAX_TOKEN_BYTES = 64


class AttendError(Exception):
    """An error from the attend library, or a call refused before reaching it.

    .code    the attend_status value (attend.OK ... attend.ERR_CAPACITY)
    .status  its name, e.g. "ATTEND_ERR_SHAPE"
    .message the library's message (what was wrong, with the offending values)

    Every AttendError is also the built-in exception its cause calls for, so
    code that knows nothing of attend catches it as usual:
      AttendTypeError   (TypeError)    an argument of the wrong type: not a str,
                                       not a numpy array, a wrong dtype
      AttendOSError     (OSError)      a file: missing, unreadable, unwritable
                                       (ERR_IO), or not a valid attend file (ERR_FORMAT)
      AttendMemoryError (MemoryError)  an allocation failed (ERR_ALLOC)
      AttendValueError  (ValueError)   every other bad value: shapes, masks,
                                       options, unknown symbols, a closed handle
    AttendError(code, message) itself makes the subclass of the code (TypeError
    only when asked for by name: the library's ERR_ARG is a ValueError).
    """

    def __new__(cls, code, message):
        if cls is AttendError:
            cls = _CLASS_OF_CODE.get(int(code), AttendValueError)
        # the built-in base's constructor, with one argument (OSError would
        # read two as errno and strerror)
        base = next(b for b in cls.__mro__ if b.__module__ == "builtins")
        return base.__new__(cls, message)

    def __init__(self, code, message):
        self.code = int(code)
        self.status = _status_name(self.code)
        self.message = message
        super().__init__("%s: %s" % (self.status, message))

    def __reduce__(self):
        return (type(self), (self.code, self.message))

    def __str__(self):
        return "%s: %s" % (self.status, self.message)


class AttendValueError(AttendError, ValueError):
    """A bad value (shape, mask, option, unknown symbols, closed handle ...)."""


class AttendTypeError(AttendError, TypeError):
    """An argument of the wrong type (not a str, not a numpy array, wrong dtype)."""


class AttendOSError(AttendError, OSError):
    """A file that cannot be read or written (ERR_IO) or is not a valid attend
    file (ERR_FORMAT)."""


class AttendMemoryError(MemoryError, AttendError):  # MemoryError first: its constructor
    """The library could not allocate memory (ERR_ALLOC)."""
    __init__, __str__, __reduce__ = AttendError.__init__, AttendError.__str__, AttendError.__reduce__


class AttendWarning(UserWarning):
    """A problem the call went past (unknown="warn": symbols read as <unk>)."""


_CLASS_OF_CODE = {ERR_IO: AttendOSError, ERR_FORMAT: AttendOSError, ERR_ALLOC: AttendMemoryError}


_NAMES = ["ATTEND_OK", "ATTEND_ERR_NULL", "ATTEND_ERR_SHAPE", "ATTEND_ERR_MASKED_ROW", "ATTEND_ERR_ARG",
          "ATTEND_ERR_ALLOC", "ATTEND_ERR_NONFINITE", "ATTEND_ERR_IO", "ATTEND_ERR_FORMAT", "ATTEND_ERR_CAPACITY"]


def _status_name(code):
    return _NAMES[code] if 0 <= code < len(_NAMES) else "ATTEND_ERR_UNKNOWN"


# ---------------------------------------------------------------- structures (attend.h)
real = ctypes.c_float
real_p = POINTER(real)
u8_p = POINTER(c_uint8)
i32_p = POINTER(c_int32)
dbl_p = POINTER(c_double)


class Error(Structure):
    _c_name_ = "attend_error"
    _fields_ = [("status", c_int), ("msg", c_char * ERROR_MSG_MAX)]


class ScoreConfig(Structure):
    _c_name_ = "attend_score_config"
    _fields_ = [("kind", c_int), ("Dq", c_int), ("Dk", c_int), ("A", c_int), ("additive_bias", c_int),
                ("scale", c_double)]


class ScoreParams(Structure):
    _c_name_ = "attend_score_params"
    _fields_ = [(n, real_p) for n in ("W", "Wq", "Wk", "b", "v")]


class ScoreGrads(Structure):
    _c_name_ = "attend_score_grads"
    _fields_ = [(n, real_p) for n in ("W", "Wq", "Wk", "b", "v")]


class MhaConfig(Structure):
    _c_name_ = "attend_mha_config"
    _fields_ = [("E", c_int), ("H", c_int), ("kdim", c_int), ("vdim", c_int), ("bias", c_int)]


MHA_NAMES = ("Wq", "Wk", "Wv", "bq", "bk", "bv", "Wo", "bo")


class MhaParams(Structure):
    _c_name_ = "attend_mha_params"
    _fields_ = [(n, real_p) for n in MHA_NAMES]


class MhaGrads(Structure):
    _c_name_ = "attend_mha_grads"
    _fields_ = [(n, real_p) for n in MHA_NAMES]


MODEL_CONFIG_FIELDS = ("cell", "decoder", "score", "src_vocab", "tgt_vocab", "emb", "enc_hidden", "enc_layers",
                       "dec_hidden", "attn", "max_batch", "max_src_len", "max_tgt_len",
                       "dec_layers", "coverage", "copy", "monotonic", "normalizer",
                       "encoder", "heads", "positions", "post_norm", "max_positions", "kernel", "conv_relu",
                       "uniform_attention")


class ModelConfig(Structure):
    _c_name_ = "attend_model_config"
    _fields_ = [(n, c_int) for n in MODEL_CONFIG_FIELDS]


class ModelTensor(Structure):
    _c_name_ = "attend_model_tensor"
    _fields_ = [("name", c_char_p), ("ndim", c_int), ("shape", c_int64 * 2), ("numel", c_size_t),
                ("data", real_p), ("grad", real_p)]


class OptimConfig(Structure):
    _c_name_ = "attend_optim_config"
    _fields_ = [("kind", c_int), ("lr", c_double), ("beta1", c_double), ("beta2", c_double), ("eps", c_double),
                ("weight_decay", c_double), ("momentum", c_double), ("clip_norm", c_double),
                ("warmup_steps", c_int), ("decay_steps", c_int), ("min_lr", c_double)]


class TrainOptions(Structure):
    """attend_train_options (include/attend/seq2seq.h), field for field."""
    _c_name_ = "attend_train_options"
    _fields_ = [("dropout", c_double), ("label_smoothing", c_double), ("sampling_prob", c_double),
                ("sampling_ramp", c_long), ("coverage_loss", c_double), ("guided_alignment", c_double),
                ("reference", c_void_p), ("frozen_attention", c_double), ("adversarial", c_double)]


class BeamOptions(Structure):
    _c_name_ = "attend_beam_options"
    _fields_ = [("alpha", c_double), ("coverage_penalty", c_double)]


class ForwardOptions(Structure):
    """attend_forward_options: the options of one teacher-forced forward (attend_forward)."""
    _c_name_ = "attend_forward_options"
    _fields_ = [("size", c_size_t), ("dropout", c_double), ("dropout_key", c_uint64), ("label_smoothing", c_double),
                ("sampling_prob", c_double), ("sampling_key", c_uint64), ("coverage_loss", c_double),
                ("guided_alignment", c_double), ("monotonic_noise", c_int), ("monotonic_key", c_uint64),
                ("row0", c_long), ("reference", c_void_p), ("frozen_attention", c_double),
                ("adversarial", c_double)]


class DecodeOptions(Structure):
    """attend_decode_options: greedy (beam 0) or beam search (attend_decode)."""
    _c_name_ = "attend_decode_options"
    _fields_ = [("size", c_size_t), ("beam", c_int), ("nbest", c_int), ("max_len", c_int), ("alpha", c_double),
                ("coverage_penalty", c_double), ("align_head", c_int)]


class AttentionOptions(Structure):
    """attend_attention_options: the normaliser and masks of one-shot attention (attend_attention_compute)."""
    _c_name_ = "attend_attention_options"
    _fields_ = [("size", c_size_t), ("normalizer", c_int), ("valid", POINTER(c_uint8)), ("allowed", POINTER(c_uint8)),
                ("causal", c_int)]


class RestoreOptions(Structure):
    """attend_restore_options: what attend_trainer_restore compares."""
    _c_name_ = "attend_restore_options"
    _fields_ = [("size", c_size_t), ("src_vocab", c_void_p), ("tgt_vocab", c_void_p), ("tok", c_int),
                ("anyway", c_int)]


class OptimReport(Structure):
    _c_name_ = "attend_optim_report"
    _fields_ = [("grad_norm", c_double), ("lr", c_double), ("clipped", c_int)]


class TfStats(Structure):
    _c_name_ = "attend_tf_stats"
    _fields_ = [("loss", c_double), ("tokens", c_int), ("correct_tokens", c_int), ("seqs", c_int),
                ("correct_seqs", c_int), ("attn_entropy", c_double)]


class StepReport(Structure):
    _c_name_ = "attend_step_report"
    _fields_ = [("step", c_long), ("epoch", c_int), ("tf", TfStats), ("opt", OptimReport), ("skipped", c_int)]


class EvalStats(Structure):
    _c_name_ = "attend_eval_stats"
    _fields_ = [("pairs", c_int), ("loss", c_double), ("tf_token_acc", c_double), ("tf_seq_acc", c_double),
                ("greedy_token_acc", c_double), ("greedy_seq_acc", c_double), ("attn_entropy", c_double)]


class TaskConfig(Structure):
    _c_name_ = "attend_task_config"
    _fields_ = [("task", c_int), ("symbols", c_int), ("min_len", c_int), ("max_len", c_int), ("count", c_int),
                ("seed", c_uint64)]


class IvSpec(Structure):
    """attend_intervention (include/attend/analysis.h)."""
    _c_name_ = "attend_intervention"
    _fields_ = [("kind", c_int), ("position", c_int), ("token", c_int32), ("seed", c_uint64), ("site", c_int),
                ("layer", c_int), ("head", c_int)]


class IvResult(Structure):
    """attend_intervention_result (include/attend/analysis.h)."""
    _c_name_ = "attend_intervention_result"
    _fields_ = [("tv", dbl_p), ("kl", dbl_p), ("js", dbl_p), ("forced_align", real_p), ("out", i32_p),
                ("out_align", real_p), ("steps", c_int), ("src_len", c_int), ("tv_mean", c_double),
                ("tv_max", c_double), ("kl_mean", c_double), ("kl_max", c_double), ("js_mean", c_double),
                ("js_max", c_double), ("out_len", c_int), ("changed", c_int)]


class PlotSeries(Structure):
    """attend_plot_series (include/attend/analysis.h)."""
    _c_name_ = "attend_plot_series"
    _fields_ = [("label", c_char_p), ("n", c_int), ("x", dbl_p), ("y", dbl_p)]


class G2POptions(Structure):
    """attend_g2p_options (include/attend/g2p.h)."""
    _c_name_ = "attend_g2p_options"
    _fields_ = [("keep_stress", c_int), ("skip_malformed", c_int)]


class LexiconInfo(Structure):
    """attend_g2p_lexicon_info (include/attend/g2p.h)."""
    _c_name_ = "attend_g2p_lexicon_info"
    _fields_ = [("words", c_int), ("entries", c_int), ("phonemes", c_int), ("stress", c_int), ("bytes", c_size_t),
                ("source_size", c_int64), ("source_mtime_ns", c_int64)]


class TsvOptions(Structure):
    _c_name_ = "attend_tsv_options"
    _fields_ = [("tokenizer", c_int), ("max_line_bytes", c_int), ("max_tokens", c_int), ("skip_malformed", c_int),
                ("copy", c_int)]


# ---------------------------------------------------------------- loading
def _candidates():
    env = os.environ.get("ATTEND_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        from . import _where
        yield os.path.normpath(os.path.join(here, _where.LIBDIR, SONAME))
    except ImportError:
        pass
    yield SONAME


def _load():
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append("%s (%s)" % (path, e))
    raise ImportError("attend: cannot load libattend.so: tried " + "; ".join(tried) +
                      " — build the project (cmake --build build) or set ATTEND_LIBRARY")


lib = _load()
_libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
_libc.free.argtypes = [c_void_p]
_libc.free.restype = None

st = c_int  # attend_status
P = c_void_p  # opaque handles
E = POINTER(Error)

# name: (restype, argtypes)
_SIGNATURES = {
    "attend_status_name": (c_char_p, [c_int]),
    "attend_version": (c_char_p, []),
    "attend_gemm_backend": (c_char_p, []),
    "attend_gemm_info": (c_char_p, []),
    "attend_set_threads": (st, [c_int, E]),
    "attend_threads": (c_int, []),
    "attend_isa": (c_char_p, []),
    # kernels
    "attend_score_config_check": (st, [POINTER(ScoreConfig), E]),
    "attend_score_key_width": (c_int, [POINTER(ScoreConfig)]),
    "attend_keys_forward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), real_p, real_p, c_int, c_int, E]),
    "attend_keys_backward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), POINTER(ScoreGrads), real_p, real_p,
                                  real_p, c_int, c_int, E]),
    "attend_scores_saved_size": (c_size_t, [POINTER(ScoreConfig), c_int, c_int, c_int, POINTER(c_int)]),
    "attend_scores_forward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), real_p, real_p, real_p, real_p,
                                   c_int, c_int, c_int, E]),
    "attend_scores_backward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), POINTER(ScoreGrads), real_p,
                                    real_p, real_p, real_p, real_p, real_p, c_int, c_int, c_int, E]),
    "attend_masked_softmax_forward": (st, [real_p, real_p, u8_p, u8_p, c_int, c_int, c_int, c_int, E]),
    "attend_masked_softmax_backward": (st, [real_p, real_p, real_p, c_int, c_int, c_int, E]),
    "attend_masked_normalize_forward": (st, [c_int, real_p, real_p, u8_p, u8_p, c_int, c_int, c_int, c_int, E]),
    "attend_masked_normalize_backward": (st, [c_int, real_p, real_p, real_p, c_int, c_int, c_int, E]),
    "attend_normalizer_threshold": (c_double, [c_int, real_p, c_int, POINTER(c_int)]),
    "attend_context_forward": (st, [real_p, real_p, real_p, c_int, c_int, c_int, c_int, E]),
    "attend_context_backward": (st, [real_p, real_p, real_p, real_p, real_p, c_int, c_int, c_int, c_int, E]),
    "attend_attention_workspace_size": (c_size_t, [POINTER(ScoreConfig), c_int, c_int, c_int]),
    "attend_attention_forward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), real_p, real_p, real_p, real_p,
                                      real_p, u8_p, u8_p, c_int, c_int, c_int, c_int, c_int, real_p, c_size_t, E]),
    "attend_attention_backward": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), POINTER(ScoreGrads), real_p,
                                       real_p, real_p, real_p, real_p, real_p, real_p, real_p, real_p, c_int, c_int,
                                       c_int, c_int, real_p, c_size_t, E]),
    "attend_attention_forward_normalized": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), c_int, real_p, real_p,
                                                 real_p, real_p, real_p, u8_p, u8_p, c_int, c_int, c_int, c_int,
                                                 c_int, real_p, c_size_t, E]),
    "attend_attention_backward_normalized": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), c_int,
                                                  POINTER(ScoreGrads), real_p, real_p, real_p, real_p, real_p, real_p,
                                                  real_p, real_p, real_p, c_int, c_int, c_int, c_int, real_p,
                                                  c_size_t, E]),
    "attend_mha_config_check": (st, [POINTER(MhaConfig), E]),
    "attend_mha_workspace_size": (c_size_t, [POINTER(MhaConfig), c_int, c_int, c_int]),
    "attend_mha_forward": (st, [POINTER(MhaConfig), POINTER(MhaParams), real_p, real_p, c_int, real_p, real_p,
                                real_p, u8_p, u8_p, c_int, c_int, c_int, c_int, real_p, c_size_t, E]),
    "attend_mha_backward": (st, [POINTER(MhaConfig), POINTER(MhaParams), POINTER(MhaGrads), real_p, real_p,
                                 real_p, real_p, real_p, real_p, real_p, c_int, c_int, c_int, real_p, c_size_t, E]),
    # vocabularies, datasets
    "attend_vocab_free": (None, [P]),
    "attend_vocab_size": (c_int, [P]),
    "attend_vocab_token": (c_char_p, [P, c_int32]),
    "attend_vocab_find": (c_int32, [P, c_char_p, c_size_t]),
    "attend_vocab_encode": (st, [P, c_int, c_int, c_char_p, c_size_t, i32_p, c_int, POINTER(c_int), E]),
    "attend_vocab_decode": (st, [P, c_int, i32_p, c_int, c_char_p, c_size_t, E]),
    "attend_vocab_decode_copy": (st, [P, c_int, i32_p, c_int, c_char_p, c_size_t, c_char_p, c_size_t, E]),
    "attend_text_token": (st, [c_int, c_char_p, c_size_t, c_int, POINTER(c_size_t), POINTER(c_size_t), E]),
    "attend_vocab_create": (st, [POINTER(P), E]),
    "attend_dataset_free": (None, [P]),
    "attend_dataset_size": (c_int, [P]),
    "attend_dataset_max_src_len": (c_int, [P]),
    "attend_dataset_max_tgt_len": (c_int, [P]),
    "attend_dataset_task": (st, [POINTER(P), POINTER(P), POINTER(TaskConfig), E]),
    "attend_dataset_read_tsv": (st, [POINTER(P), c_char_p, P, P, c_int, POINTER(TsvOptions), POINTER(c_int), E]),
    "attend_dataset_aligned_pairs": (c_int, [P]),
    # models
    "attend_model_config_check": (st, [POINTER(ModelConfig), E]),
    "attend_model_create": (st, [POINTER(P), POINTER(ModelConfig), c_uint64, E]),
    "attend_model_free": (None, [P]),
    "attend_permutation": (None, [i32_p, c_int, c_uint64]),
    "attend_model_get_config": (POINTER(ModelConfig), [P]),
    "attend_model_tensor_count": (c_int, [P]),
    "attend_model_tensor_get": (st, [P, c_int, POINTER(ModelTensor), E]),
    "attend_model_param_count": (c_size_t, [P]),
    "attend_model_weight_dtype": (c_int, [P]),
    "attend_model_load": (st, [POINTER(P), c_char_p, POINTER(ModelConfig), POINTER(P), POINTER(P), POINTER(c_int),
                               E]),
    "attend_model_save": (st, [P, c_char_p, P, P, c_int, E]),
    "attend_model_set_copy_map": (st, [P, P, P, E]),
    "attend_model_copy_target": (c_int32, [P, c_int32]),
    "attend_model_greedy": (st, [P, i32_p, i32_p, c_int, c_int, c_int, i32_p, i32_p, real_p, E]),
    "attend_model_beam": (st, [P, i32_p, c_int, c_int, c_int, c_int, c_double, i32_p, i32_p, dbl_p, real_p,
                               POINTER(c_int), E]),
    "attend_model_beam_opts": (st, [P, i32_p, c_int, c_int, c_int, c_int, POINTER(BeamOptions), i32_p, i32_p, dbl_p,
                                    real_p, POINTER(c_int), E]),
    "attend_model_set_coverage_loss": (st, [P, c_double, E]),
    "attend_model_coverage_loss": (c_double, [P]),
    "attend_model_score": (st, [P, i32_p, c_int, i32_p, c_int, dbl_p, real_p, E]),
    "attend_model_encoder_attention": (st, [P, i32_p, c_int, c_int, c_int, real_p, E]),
    "attend_ensemble_greedy": (st, [POINTER(P), c_int, i32_p, i32_p, c_int, c_int, c_int, i32_p, i32_p, real_p, E]),
    "attend_ensemble_beam": (st, [POINTER(P), c_int, i32_p, c_int, c_int, c_int, c_int, c_double, i32_p, i32_p,
                                  dbl_p, real_p, POINTER(c_int), E]),
    "attend_model_rescore": (st, [P, i32_p, c_int, i32_p, i32_p, c_int, c_int, c_int, dbl_p, E]),
    "attend_model_evaluate": (st, [P, P, c_int, c_int, POINTER(EvalStats), E]),
    "attend_cell_name": (c_char_p, [c_int]),
    "attend_decoder_name": (c_char_p, [c_int]),
    "attend_score_name": (c_char_p, [c_int]),
    "attend_tokenizer_name": (c_char_p, [c_int]),
    "attend_cell_from_name": (c_int, [c_char_p]),
    "attend_decoder_from_name": (c_int, [c_char_p]),
    "attend_score_from_name": (c_int, [c_char_p]),
    "attend_normalizer_name": (c_char_p, [c_int]),
    "attend_normalizer_from_name": (c_int, [c_char_p]),
    "attend_encoder_name": (c_char_p, [c_int]),
    "attend_encoder_from_name": (c_int, [c_char_p]),
    "attend_positions_name": (c_char_p, [c_int]),
    "attend_positions_from_name": (c_int, [c_char_p]),
    "attend_tokenizer_from_name": (c_int, [c_char_p]),
    # training
    "attend_optim_defaults": (OptimConfig, [c_int]),
    "attend_trainer_create": (st, [POINTER(P), P, POINTER(OptimConfig), P, c_int, c_uint64, E]),
    "attend_trainer_free": (None, [P]),
    "attend_trainer_step": (st, [P, POINTER(StepReport), E]),
    "attend_trainer_steps": (c_long, [P]),
    "attend_trainer_skipped": (c_long, [P]),
    "attend_trainer_set_max_nonfinite": (st, [P, c_long, E]),
    "attend_trainer_set_options": (st, [P, POINTER(TrainOptions), E]),
    "attend_model_set_pointer_exclude": (st, [P, c_int, E]),
    "attend_model_pointer_exclude": (c_int, [P]),
    # analysis: interventions, rendering
    "attend_model_intervene": (st, [P, i32_p, c_int, i32_p, c_int, c_int, POINTER(IvSpec), POINTER(IvResult), E]),
    "attend_intervention_name": (c_char_p, [c_int]),
    "attend_attention_intervene": (st, [POINTER(ScoreConfig), POINTER(ScoreParams), real_p, real_p, real_p, real_p,
                                        real_p, c_int, c_int, POINTER(IvSpec), E]),
    "attend_render_heatmap_text_style": (st, [POINTER(c_void_p), real_p, c_int, c_int, POINTER(c_char_p),
                                              POINTER(c_char_p), c_int, E]),
    "attend_render_heatmap_svg": (st, [POINTER(c_void_p), real_p, c_int, c_int, POINTER(c_char_p),
                                       POINTER(c_char_p), c_char_p, E]),
    "attend_render_heatmap_html": (st, [POINTER(c_void_p), real_p, c_int, c_int, POINTER(c_char_p),
                                        POINTER(c_char_p), c_char_p, E]),
    "attend_render_line_plot_svg": (st, [POINTER(c_void_p), POINTER(PlotSeries), c_int, c_char_p, c_char_p,
                                         c_char_p, c_double, c_double, c_int, E]),
    # G2P
    "attend_g2p_model_load": (st, [POINTER(P), c_char_p, POINTER(ModelConfig), POINTER(P), POINTER(P), E]),
    "attend_g2p_encode_word": (st, [P, c_char_p, c_size_t, i32_p, c_int, POINTER(c_int), E]),
    "attend_g2p_lexicon_read": (st, [POINTER(P), c_char_p, POINTER(G2POptions), c_void_p, E]),
    "attend_g2p_lexicon_load": (st, [POINTER(P), c_char_p, E]),
    "attend_g2p_lexicon_save": (st, [P, c_char_p, E]),
    "attend_g2p_lexicon_free": (None, [P]),
    "attend_g2p_lexicon_get_info": (None, [P, POINTER(LexiconInfo)]),
    "attend_g2p_lexicon_find": (c_int, [P, c_char_p, c_size_t]),
    "attend_g2p_lexicon_prons": (c_int, [P, c_int]),
    "attend_g2p_lexicon_pron": (st, [P, c_int, c_int, c_char_p, c_size_t, E]),
    "attend_g2p_lexicon_check_phonemes": (st, [P, P, c_char_p, E]),
    "attend_g2p_ipa": (st, [c_char_p, c_char_p, c_size_t, E]),
    "attend_g2p_text_normalize": (st, [c_char_p, c_size_t, P, POINTER(c_void_p), POINTER(c_void_p), c_void_p, E]),
    "attend_g2p_text_free": (None, [c_void_p]),
    "attend_g2p_token_pronounce": (st, [POINTER(P), c_int, P, P, P, c_char_p, c_size_t, c_char_p, c_size_t,
                                        POINTER(c_int), E]),
    "attend_g2p_source_name": (c_char_p, [c_int]),
}

for _name, (_res, _args) in _SIGNATURES.items():
    _f = getattr(lib, _name)
    _f.restype = _res
    _f.argtypes = _args


def check(status, err):
    """Raises AttendError for a non-OK status, with the library's message."""
    if status != OK:
        raise AttendError(status, err.msg.decode("utf-8", "replace"))


def call(name, *args):
    """Calls an attend function whose last argument is attend_error * (only
    functions declared in _SIGNATURES: no call without argtypes)."""
    if name not in _SIGNATURES:
        raise AttendError(ERR_ARG, "%s: not declared in attend._lib._SIGNATURES" % name)
    err = Error()
    check(getattr(lib, name)(*args, ctypes.byref(err)), err)


def cstr(p):
    return p.decode("utf-8") if p is not None else None


def free(ptr):
    _libc.free(ptr)
