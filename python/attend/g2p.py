"""attend.g2p — English grapheme-to-phoneme with the shipped CMUdict model.

    import attend.g2p
    attend.g2p.pronounce("hello")                 # 'HH EH L OW' (as `attend g2p hello`)
    g = attend.g2p.G2P()                          # or G2P("my-model.safetensors")
    for h in g.nbest("read", 3):                  # beam search, best first
        print(h.text, h.score, h.alignment.shape) # alignment [phonemes, letters]
    attend.g2p.entropy(h.alignment)               # attention entropy per phoneme (nats)

A word the model cannot spell (letters it never saw, white space, more than
64 characters) raises AttendError; allow_unknown=True reads unknown letters
as <unk> instead, as the command does with a warning.
"""
import ctypes
import os

import numpy as np

from . import _arrays as ar
from ._lib import ERR_ARG, G2P_MAX_LEN, UNK, AttendError, ModelConfig, call
from .model import Model, Vocab

__all__ = ["G2P", "pronounce", "entropy", "default_model_path"]


def default_model_path():
    """$ATTEND_G2P_MODEL, else the shipped model beside this package (build
    tree: the source tree's models/; installed: <prefix>/share/attend/)."""
    env = os.environ.get("ATTEND_G2P_MODEL")
    if env:
        return env
    from . import _where
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _where.G2P_MODEL))


def entropy(alignment):
    """Attention entropy -Σ w ln w of each row of alignment [T,S] (nats)."""
    w = np.asarray(alignment, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(w > 0, -w * np.log(w), 0.0)
    return t.sum(axis=-1)


class G2P:
    """A G2P model loaded with room for any word (up to 64 letters) and beams
    up to max_beam wide."""

    def __init__(self, path=None, max_beam=16):
        path = str(path or default_model_path())
        cap = ModelConfig()
        cap.max_batch = 1
        h, gv, pv = ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_void_p()
        # first the trained lengths, then the model with the capacities the command uses
        call("attend_g2p_model_load", ctypes.byref(h), path.encode(), ctypes.byref(cap), ctypes.byref(gv),
             ctypes.byref(pv))
        probe = Model(h.value, Vocab(gv.value, "char"), Vocab(pv.value, "space"))
        cfg = probe.config
        probe.close()
        self.trained_max_letters = cfg["max_src_len"]
        self.max_len = min(cfg["max_tgt_len"] + 1, G2P_MAX_LEN)
        self.max_beam = max_beam
        cap.max_batch, cap.max_src_len, cap.max_tgt_len = max_beam, G2P_MAX_LEN, self.max_len
        call("attend_g2p_model_load", ctypes.byref(h), path.encode(), ctypes.byref(cap), ctypes.byref(gv),
             ctypes.byref(pv))
        self.model = Model(h.value, Vocab(gv.value, "char"), Vocab(pv.value, "space"), "char")
        self.path = path

    def close(self):
        self.model.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def letters(self, word):
        """The word as model input: (ids int32 [S], letters [S]); raises for a
        word the model cannot spell unless allow_unknown."""
        return self._encode(word, False)

    def _encode(self, word, allow_unknown):
        if not isinstance(word, str):
            raise AttendError(ERR_ARG, "word: expected str, got %s" % type(word).__name__)
        gv = self.model.src_vocab
        b = word.encode("utf-8")
        if len(word) > G2P_MAX_LEN:
            raise AttendError(ERR_ARG, "'%.80s': %d characters, more than the %d a word may have: not pronounced"
                              % (word, len(word), G2P_MAX_LEN))
        ids = np.zeros(G2P_MAX_LEN, dtype=np.int32)
        n = ctypes.c_int(0)
        call("attend_g2p_encode_word", gv._handle(), b, len(b), ar.ptr(ids), G2P_MAX_LEN, ctypes.byref(n))
        ids = ids[:n.value].copy()
        letters = [ch.lower() if "A" <= ch <= "Z" else ch for ch in word]
        unknown = [letters[i] for i in range(len(ids)) if ids[i] == UNK]
        if unknown and not allow_unknown:
            raise AttendError(ERR_ARG, "'%s': %d of %d letters unknown to the model (%s): the model cannot spell it"
                              % (word, len(unknown), len(ids), " ".join(unknown)))
        return ids, letters

    def pronounce(self, word, allow_unknown=False):
        """The greedy pronunciation as ARPAbet phonemes separated by spaces
        (what `attend g2p WORD` prints after the word)."""
        return self.align(word, allow_unknown).text

    def align(self, word, allow_unknown=False):
        """The greedy pronunciation as a Hypothesis with .alignment [T,S]."""
        ids, letters = self._encode(word, allow_unknown)
        h = self.model.greedy(ids, max_len=self.max_len)[0]
        h.letters = letters
        return h

    def nbest(self, word, n=3, beam=None, alpha=0.0, allow_unknown=False):
        """The n best pronunciations by beam search (width max(n, 5) by
        default, as `attend g2p --nbest n`), best first, with .score (log p)."""
        beam = beam or max(n, 5)
        if beam > self.max_beam:
            raise AttendError(ERR_ARG, "beam %d is wider than max_beam=%d (G2P(max_beam=...))" % (beam, self.max_beam))
        ids, letters = self._encode(word, allow_unknown)
        hs = self.model.beam(ids, beam=beam, nbest=n, alpha=alpha, max_len=self.max_len)
        for h in hs:
            h.letters = letters
        return hs


_default = None


def pronounce(word, allow_unknown=False):
    """Pronounces one word with the shipped model (loaded on first use)."""
    global _default
    if _default is None:
        _default = G2P()
    return _default.pronounce(word, allow_unknown)


