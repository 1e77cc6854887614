"""Bad input raises attend.AttendError (or ImportError-free TypeErrors),
never crashes the interpreter: a closed model, wrong dtype / shape /
non-contiguous arrays, words the model cannot spell, corrupt files."""
import os

import numpy as np
import pytest

import attend
import attend.g2p
import attend.kernels as K


def raises(code, fn, *args, **kw):
    with pytest.raises(attend.AttendError) as e:
        fn(*args, **kw)
    assert e.value.code == code, e.value
    assert e.value.message and e.value.status == attend._lib._status_name(code)
    return e.value


# ------------------------------------------------------------------ freed handles
def test_closed_model_raises(reverse_model):
    m = attend.Model.load(reverse_model)
    m.close()
    assert m.closed
    for call in (lambda: m.greedy("abc"), lambda: m.beam("abc"), lambda: m.score("abc", "cba"),
                 lambda: m.config, lambda: m.save("/tmp/never.safetensors"), lambda: m.tensors(),
                 lambda: m.src_vocab.encode("abc")):
        e = raises(attend.ERR_NULL, call)
        assert "closed" in e.message
    m.close()                               # twice is fine


def test_with_block_closes(reverse_model):
    with attend.Model.load(reverse_model) as m:
        pass
    raises(attend.ERR_NULL, m.greedy, "ab")


def test_closed_g2p_raises(g2p_model):
    g = attend.g2p.G2P(g2p_model)
    g.close()
    raises(attend.ERR_NULL, g.pronounce, "hello")


# ------------------------------------------------------------------ arrays
def test_wrong_dtype_refused():
    q = np.ones((1, 1, 2))                  # float64
    h = np.ones((1, 3, 2), dtype=np.float32)
    e = raises(attend.ERR_ARG, K.attention, q, h, h)
    assert "float64" in e.message and "float32" in e.message
    assert isinstance(e, TypeError) and isinstance(e, attend.AttendTypeError)
    raises(attend.ERR_ARG, K.masked_softmax, np.ones((1, 1, 3), dtype=np.float16))
    raises(attend.ERR_ARG, K.attention, [[[1.0, 0.0]]], h, h)        # a list, not an array


def test_non_contiguous_refused():
    h = np.ones((1, 2, 3), dtype=np.float32).transpose(0, 2, 1)      # [1,3,2] view
    q = np.ones((1, 1, 2), dtype=np.float32)
    e = raises(attend.ERR_ARG, K.attention, q, h, np.ascontiguousarray(h))
    assert "contiguous" in e.message and isinstance(e, ValueError) and not isinstance(e, TypeError)
    s = np.ones((1, 2, 6), dtype=np.float32)[:, :, ::2]
    raises(attend.ERR_ARG, K.masked_softmax, s)


def test_wrong_shape_refused():
    q = np.ones((1, 1, 2), dtype=np.float32)
    raises(attend.ERR_SHAPE, K.attention, q, np.ones((2, 3, 2), np.float32), np.ones((2, 3, 2), np.float32))
    raises(attend.ERR_SHAPE, K.context, np.ones((1, 1, 3), np.float32), np.ones((1, 4, 2), np.float32))
    raises(attend.ERR_SHAPE, K.masked_softmax, np.ones((3, 3), np.float32))
    raises(attend.ERR_SHAPE, K.masked_softmax, np.ones((1, 1, 3), np.float32), valid=np.ones((1, 2), bool))
    raises(attend.ERR_SHAPE, K.attention, q, np.ones((1, 3, 2), np.float32), np.ones((1, 3, 2), np.float32),
           kind="general", W=np.ones((3, 3), np.float32))
    # the library's own check: dot scores need Dq == Dk
    raises(attend.ERR_SHAPE, K.attention, q, np.ones((1, 3, 5), np.float32), np.ones((1, 3, 5), np.float32))
    raises(attend.ERR_ARG, K.attention, q, np.ones((1, 3, 2), np.float32), np.ones((1, 3, 2), np.float32),
           kind="cosine")


def test_nonfinite_scores_raise():
    s = np.array([[[0, np.nan, 1]]], dtype=np.float32)
    raises(attend.ERR_NONFINITE, K.masked_softmax, s)


def test_model_input_refused(reverse_model):
    with attend.Model.load(reverse_model) as m:
        raises(attend.ERR_ARG, m.greedy, np.array([4, 5], dtype=np.int64))
        raises(attend.ERR_ARG, m.greedy, "")
        e = raises(attend.ERR_CAPACITY, m.greedy, "abcdefabcdefabcdef")       # longer than max_src_len
        assert "max_src_len" in e.message
        raises(attend.ERR_ARG, m.greedy, np.array([4, 99], dtype=np.int32))   # id outside the vocabulary
        raises(attend.ERR_ARG, m.beam, "abc", beam=2, nbest=3)
        raises(attend.ERR_CAPACITY, m.beam, "abc", beam=64)                   # wider than max_batch=32


# ------------------------------------------------------------------ words
def test_words_the_model_cannot_spell(g2p_model):
    with attend.g2p.G2P(g2p_model) as g:
        e = raises(attend.ERR_ARG, g.pronounce, "naïve", unknown="error")
        assert "unknown to the model" in e.message and "ï" in e.message
        assert isinstance(e, ValueError)
        with pytest.warns(attend.AttendWarning, match="ï"):
            assert g.pronounce("naïve")                                 # read as <unk>, as the command does
        assert g.pronounce("naïve", unknown="skip") is None
        e = raises(attend.ERR_ARG, g.pronounce, "two words")
        assert "white space" in e.message
        raises(attend.ERR_ARG, g.pronounce, "")
        raises(attend.ERR_ARG, g.pronounce, "a" * 65)
        e = raises(attend.ERR_ARG, g.pronounce, b"bytes")
        assert isinstance(e, TypeError)
        raises(attend.ERR_ARG, g.nbest, "hello", 3, beam=32)
        raises(attend.ERR_ARG, g.pronounce, "hello", unknown="ignore")


# ------------------------------------------------------------------ files
def test_missing_file():
    e = raises(attend.ERR_IO, attend.Model.load, "/nonexistent/model.safetensors")
    assert "/nonexistent/model.safetensors" in e.message
    assert isinstance(e, OSError)


def test_corrupt_files(reverse_model, tmp_path):
    data = reverse_model.read_bytes()
    cases = {
        "truncated": data[:len(data) // 2],
        "garbage": os.urandom(4096),
        "empty": b"",
        "header-length": (10 ** 9).to_bytes(8, "little") + data[8:],
        "json": data[:8] + data[8:40].replace(b'"', b"'") + data[40:],
    }
    for name, blob in cases.items():
        p = tmp_path / (name + ".safetensors")
        p.write_bytes(blob)
        with pytest.raises(attend.AttendError) as e:
            attend.Model.load(p)
        assert e.value.code in (attend.ERR_FORMAT, attend.ERR_IO, attend.ERR_CAPACITY), (name, e.value)
        assert isinstance(e.value, OSError if e.value.code != attend.ERR_CAPACITY else ValueError), (name, e.value)
    with pytest.raises(attend.AttendError) as e:
        attend.g2p.G2P(reverse_model)                                   # a model, but not a G2P model
    assert e.value.code == attend.ERR_FORMAT and "not a G2P model" in e.value.message


def test_bad_training_options(tmp_path):
    raises(attend.ERR_ARG, attend.train, task="shuffle")
    raises(attend.ERR_ARG, attend.train)
    raises(attend.ERR_IO, attend.train, train_tsv=tmp_path / "none.tsv")
    raises(attend.ERR_ARG, attend.train, task="copy", cell="transformer")


# ------------------------------------------------------------------ the bindings
def test_every_bound_function_is_declared():
    """Every attend_* function the package calls has argtypes and restype
    (declared in _SIGNATURES), and the ctypes structures have the C sizes
    (x86-64 / LP64, checked against include/attend.h's field lists)."""
    import ctypes
    import re
    import attend._lib as L
    pkg = os.path.dirname(attend.__file__)
    used = set()
    for f in os.listdir(pkg):
        if f.endswith(".py"):
            text = open(os.path.join(pkg, f), encoding="utf-8").read()
            used |= set(re.findall(r"lib\.(attend_\w+)", text)) | set(re.findall(r'call\("(attend_\w+)"', text))
    assert used and used <= set(L._SIGNATURES), sorted(used - set(L._SIGNATURES))
    for name in L._SIGNATURES:
        f = getattr(L.lib, name)
        assert f.argtypes is not None, name
    sizes = {L.ScoreConfig: 32, L.ModelConfig: 104, L.ModelTensor: 56, L.OptimConfig: 80, L.StepReport: 80,
             L.EvalStats: 56, L.TaskConfig: 32, L.TsvOptions: 20, L.Error: 260, L.MhaConfig: 20, L.TfStats: 32,
             L.IvSpec: 40, L.IvResult: 112, L.PlotSeries: 32}
    for cls, n in sizes.items():
        assert ctypes.sizeof(cls) == n, cls.__name__
    raises(attend.ERR_ARG, L.call, "attend_sweep_run", None)          # not declared: refused


def test_set_tensor_on_a_quantized_model_refused():
    """A quantized model keeps int8 copies that decoding and saving use: an edit
    of its float tensors would be lost, so it is refused (the C library refuses
    to save one, naming the tensor: test_quant)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "models",
                        "g2p-cmudict-int8.safetensors")
    m = attend.Model.load(path)
    with pytest.raises(attend.AttendError) as e:
        m.set_tensor("out.weight", np.zeros((1, 1), dtype=np.float32))
    assert "quantized" in str(e.value)
    m.close()
