"""attend.g2p — English grapheme-to-phoneme with the shipped CMUdict model.

    import attend.g2p
    attend.g2p.pronounce("hello")                 # 'HH EH L OW' (as `attend g2p hello`)
    attend.g2p.pronounce(["hello", "world"])      # ['HH EH L OW', 'W ER L D'], one batch
    g = attend.g2p.G2P()                          # or G2P("my-model.safetensors")
    for h in g.nbest("read", 3):                  # beam search, best first
        print(h.text, h.score, h.alignment.shape) # alignment [phonemes, letters]
    attend.g2p.entropy(h.alignment)               # attention entropy per phoneme (nats)
    lx = attend.g2p.Lexicon("cmudict-en-us.dict") # a CMUdict-format lexicon (or a saved one)
    lx.lookup("read")                             # ['R EH D', 'R IY D'] in the file's order
    G2P(lexicon=lx).pronounce("read")             # lexicon first, the model for the rest
    attend.g2p.normalize_text("Dr. Smith paid $3.50.")  # (['doctor', 'smith', 'paid', 'three', ...], notes)
    G2P().pronounce_text("It's 9:05.")            # [("it's", 'IH T S', 'model+suffix'), ...]

Letters the model never saw follow unknown= as everywhere in attend: "warn"
(the default, as the command: an AttendWarning, the letters read as <unk>),
"error" (AttendValueError) or "skip" (the word is not pronounced: None, or []
for nbest). A word with white space or more than 64 characters is an
AttendValueError whatever unknown= says, and anything but a str an
AttendTypeError.
"""
from __future__ import annotations

import ctypes
import os
import warnings
from typing import List, Optional, Sequence, Tuple, Union

import numpy as np

from . import _arrays as ar
from ._lib import (ERR_ARG, G2P_MAX_LEN, UNK, AttendTypeError, AttendValueError, AttendWarning, G2POptions,
                   LexiconInfo, ModelConfig, call, cstr, lib)
from .model import Hypothesis, Model, Vocab, _apply_policy, _policy

__all__ = ["G2P", "Lexicon", "pronounce", "to_ipa", "normalize_text", "entropy", "default_model_path"]

Words = Union[str, Sequence[str]]


def default_model_path() -> str:
    """$ATTEND_G2P_MODEL, else the shipped model beside this package (build
    tree: the source tree's models/; cmake --install: <prefix>/share/attend/;
    pip: the package's models/)."""
    env = os.environ.get("ATTEND_G2P_MODEL")
    if env:
        return env
    from . import _where
    return os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), _where.G2P_MODEL))


def entropy(alignment: np.ndarray) -> np.ndarray:
    """Attention entropy -Σ w ln w of each row of alignment [T,S] (nats)."""
    w = np.asarray(alignment, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(w > 0, -w * np.log(w), 0.0)
    return t.sum(axis=-1)


class Lexicon:
    """A pronunciation lexicon (attend_g2p_lexicon_*; docs/G2P.md, "Lexicon
    first"): a CMUdict-format text file, or a file written by save(). A text
    file's malformed line is an AttendError naming path:line unless
    skip_malformed; stress digits are stripped unless stress=True (use the
    model's setting: G2P checks it). lookup() folds ASCII upper case."""

    def __init__(self, path: Union[str, "os.PathLike[str]"], stress: bool = False,
                 skip_malformed: bool = False) -> None:
        self._h = None
        path = str(path)
        h = ctypes.c_void_p()
        with open(path, "rb") as f:
            file_form = f.read(6) == b"ATTLEX"
        if file_form:
            call("attend_g2p_lexicon_load", ctypes.byref(h), path.encode())
        else:
            o = G2POptions(int(bool(stress)), int(bool(skip_malformed)))
            call("attend_g2p_lexicon_read", ctypes.byref(h), path.encode(), ctypes.byref(o), None)
        self._h = h.value
        self.path = path

    @property
    def info(self) -> dict:
        """words, entries, phonemes, stress, bytes (the compact form's size)."""
        i = LexiconInfo()
        lib.attend_g2p_lexicon_get_info(self._h, ctypes.byref(i))
        return {k: getattr(i, k) for k, _ in LexiconInfo._fields_}

    def lookup(self, word: str) -> List[str]:
        """The word's pronunciations in the file's order ([] when absent)."""
        if not isinstance(word, str):
            raise AttendTypeError(ERR_ARG, "word: expected str, got %s" % type(word).__name__)
        b = word.encode("utf-8")
        w = lib.attend_g2p_lexicon_find(self._h, b, len(b))
        out = []
        buf = ctypes.create_string_buffer(1024)
        for k in range(lib.attend_g2p_lexicon_prons(self._h, w) if w >= 0 else 0):
            call("attend_g2p_lexicon_pron", self._h, w, k, buf, len(buf))
            out.append(buf.value.decode())
        return out

    def __contains__(self, word: str) -> bool:
        b = word.encode("utf-8")
        return lib.attend_g2p_lexicon_find(self._h, b, len(b)) >= 0

    def __len__(self) -> int:
        return self.info["words"]

    def save(self, path: Union[str, "os.PathLike[str]"]) -> None:
        """Writes the compact form (loads with one read: Lexicon(path))."""
        call("attend_g2p_lexicon_save", self._h, str(path).encode())

    def close(self) -> None:
        """Frees the lexicon (idempotent)."""
        if self._h:
            lib.attend_g2p_lexicon_free(self._h)
            self._h = None

    def __del__(self) -> None:
        self.close()


class G2P:
    """A G2P model loaded with room for any word (up to 64 letters), batches
    and beams up to max_beam wide. With a lexicon, pronounce() looks each word
    up there first and runs the model only for the others (align() and nbest()
    always run the model)."""

    def __init__(self, path: Optional[Union[str, "os.PathLike[str]"]] = None, max_beam: int = 16,
                 lexicon: Optional[Lexicon] = None) -> None:
        self.lexicon = lexicon
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
        if lexicon is not None:
            call("attend_g2p_lexicon_check_phonemes", lexicon._h, self.model.tgt_vocab._handle(),
                 lexicon.path.encode())

    def close(self) -> None:
        """Frees the model (idempotent)."""
        self.model.close()

    def __enter__(self) -> "G2P":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def letters(self, word: str) -> Tuple[np.ndarray, List[str]]:
        """The word as model input: (ids int32 [S], letters [S]), the letters
        lower-cased as the model reads them; a letter the model never saw is
        id 3 (<unk>)."""
        return self._encode(word)

    def _encode(self, word):
        if not isinstance(word, str):
            raise AttendTypeError(ERR_ARG, "word: expected str, got %s" % type(word).__name__)
        gv = self.model.src_vocab
        b = word.encode("utf-8")
        if len(word) > G2P_MAX_LEN:
            raise AttendValueError(ERR_ARG, "'%.80s': %d characters, more than the %d a word may have: not "
                                   "pronounced" % (word, len(word), G2P_MAX_LEN))
        ids = np.zeros(G2P_MAX_LEN, dtype=np.int32)
        n = ctypes.c_int(0)
        call("attend_g2p_encode_word", gv._handle(), b, len(b), ar.ptr(ids), G2P_MAX_LEN, ctypes.byref(n))
        ids = ids[:n.value].copy()
        letters = [ch.lower() if "A" <= ch <= "Z" else ch for ch in word]
        return ids, letters

    def _encode_words(self, words, unknown):
        """[(ids, letters) or None (skipped)] after the unknown= policy."""
        _policy(unknown)
        enc = [self._encode(w) for w in words]
        bad = [(i, w, [e[1][j] for j in range(len(e[0])) if e[0][j] == UNK], len(e[0]))
               for i, (w, e) in enumerate(zip(words, enc)) if (e[0] == UNK).any()]
        _apply_policy("word", bad, unknown, 3, "letters")
        if unknown == "skip":
            for i, _, _, _ in bad:
                enc[i] = None
        return enc

    def pronounce(self, word: Words, unknown: str = "warn") -> Union[Optional[str], List[Optional[str]]]:
        """The greedy pronunciation as ARPAbet phonemes separated by spaces
        (what `attend g2p WORD` prints after the word); a list of words gives
        a list, decoded in batches of max_beam. None for a skipped word.
        With a lexicon, a word it has gets its first entry there."""
        one = isinstance(word, str)
        words = [word] if one else list(word)
        known = [self.lexicon.lookup(w) if self.lexicon is not None and isinstance(w, str) else [] for w in words]
        rest = [w for w, k in zip(words, known) if not k]
        hs = self.align(rest, unknown) if rest else []
        it = iter(hs)
        out = []
        for k in known:
            if k:
                out.append(k[0])
            else:
                h = next(it)
                out.append(h.text if h is not None else None)
        return out[0] if one else out

    def align(self, word: Words, unknown: str = "warn") -> Union[Optional[Hypothesis], List[Optional[Hypothesis]]]:
        """The greedy pronunciation as a Hypothesis with .alignment [T,S] and
        .letters (= .source_tokens); a list of words gives a list (batched)."""
        one = isinstance(word, str)
        words = [word] if one else list(word)
        enc = self._encode_words(words, unknown)
        todo = [i for i, e in enumerate(enc) if e is not None]
        res: List[Optional[Hypothesis]] = [None] * len(words)
        if todo:
            hs = self.model.greedy([enc[i][0] for i in todo], max_len=self.max_len)
            for i, h in zip(todo, hs):
                h.letters = h.source_tokens = enc[i][1]
                res[i] = h
        return res[0] if one else res

    def nbest(self, word: Words, n: int = 3, beam: Optional[int] = None, alpha: float = 0.0,
              unknown: str = "warn") -> Union[List[Hypothesis], List[List[Hypothesis]]]:
        """The n best pronunciations by beam search (width max(n, 5) by
        default, as `attend g2p --nbest n`), best first, with .score (log p);
        [] for a skipped word. A list of words gives one list per word."""
        beam = beam or max(n, 5)
        if beam > self.max_beam:
            raise AttendValueError(ERR_ARG, "beam %d is wider than max_beam=%d (G2P(max_beam=...))"
                                   % (beam, self.max_beam))
        one = isinstance(word, str)
        words = [word] if one else list(word)
        out = []
        for e in self._encode_words(words, unknown):
            if e is None:
                out.append([])
                continue
            hs = self.model.beam(e[0], beam=beam, nbest=n, alpha=alpha, max_len=self.max_len)
            for h in hs:
                h.letters = h.source_tokens = e[1]
            out.append(hs)
        return out[0] if one else out


    def pronounce_text(self, text: str) -> List[Tuple[str, str, str]]:
        """Running text (docs/G2P.md, "Running text"; `attend g2p --text`):
        (token, phonemes, source) for each token of normalize_text(text,
        self.lexicon), source one of "lexicon", "model", "letters",
        "lexicon+suffix", "model+suffix", "break" (phonemes ""). Unknown
        characters are an AttendWarning per word saying what was done."""
        toks, notes = normalize_text(text, self.lexicon)
        for n in notes:
            warnings.warn(n, AttendWarning, stacklevel=2)
        models = (ctypes.c_void_p * 1)(self.model._handle())
        lx = self.lexicon._h if self.lexicon is not None else None
        buf = ctypes.create_string_buffer(4096)
        src = ctypes.c_int(0)
        out = []
        for t in toks:
            b = t.encode("utf-8")
            call("attend_g2p_token_pronounce", models, 1, self.model.src_vocab._handle(),
                 self.model.tgt_vocab._handle(), lx, b, len(b), buf, len(buf), ctypes.byref(src))
            out.append((t, buf.value.decode("utf-8"), cstr(lib.attend_g2p_source_name(src.value))))
        return out


def normalize_text(text: str, lexicon: Optional[Lexicon] = None) -> Tuple[List[str], List[str]]:
    """Running text to tokens (attend_g2p_text_normalize; the rules of
    docs/G2P.md, "Running text"): words in lower case, spelled letters in
    upper case, "|" and "||" breaks; and the notes, one per word with
    unknown characters ("'a<U+00A9>b': U+00A9 skipped"). Acronyms and
    hyphenated compounds the lexicon has stay words."""
    if not isinstance(text, str):
        raise AttendTypeError(ERR_ARG, "text: expected str, got %s" % type(text).__name__)
    b = text.encode("utf-8", "surrogatepass")
    out, notes = ctypes.c_void_p(), ctypes.c_void_p()
    call("attend_g2p_text_normalize", b, len(b), lexicon._h if lexicon is not None else None, ctypes.byref(out),
         ctypes.byref(notes), None)
    try:
        toks = ctypes.string_at(out.value).decode("utf-8")
        nts = ctypes.string_at(notes.value).decode("utf-8")
    finally:
        lib.attend_g2p_text_free(out.value)
        lib.attend_g2p_text_free(notes.value)
    return toks.split(), nts.splitlines()


_default: Optional[G2P] = None


def pronounce(word: Words, unknown: str = "warn") -> Union[Optional[str], List[Optional[str]]]:
    """Pronounces a word, or a list of words (one batch), with the shipped
    model (loaded on first use): G2P().pronounce(word, unknown)."""
    global _default
    if _default is None:
        _default = G2P()
    return _default.pronounce(word, unknown)


def to_ipa(arpabet: str) -> str:
    """ARPAbet phonemes (space-separated, stress digits optional) as IPA, as
    `attend g2p --phones ipa` prints them (attend_g2p_ipa; docs/G2P.md, "IPA
    output"): to_ipa("AH0 T EH1 N SH AH0 N") == "əˈtɛnʃən"."""
    if not isinstance(arpabet, str):
        raise AttendTypeError(ERR_ARG, "arpabet: expected str, got %s" % type(arpabet).__name__)
    buf = ctypes.create_string_buffer(1024)
    call("attend_g2p_ipa", arpabet.encode(), buf, len(buf))
    return buf.value.decode("utf-8")
