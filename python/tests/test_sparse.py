"""The sparse normalisers from Python: attend.kernels on numpy arrays against
the PyTorch reference written from the papers (tests/ref/sparse_*.txt, made
by tools/make_sparse_ref.py), the attention kernel with a normaliser, and
models with `normalizer` in their config (create, train equal to
`attend train --normalizer` byte for byte, exact zeros in the alignments)."""
import os

import numpy as np
import pytest

import attend
import attend.kernels as K
from conftest import REVERSE, SOURCE_DIR, cli_args, run_cli


def read_ref(idx):
    """tests/ref/sparse_NN.txt as {name: float64 array} (format: tests/ref_reader.h)."""
    toks = []
    with open(os.path.join(SOURCE_DIR, "tests", "ref", "sparse_%02d.txt" % idx)) as f:
        for line in f:
            if not line.startswith("#"):
                toks += line.split()
    out, i = {}, 0
    while i < len(toks):
        name, nd = toks[i], int(toks[i + 1])
        dims = [int(d) for d in toks[i + 2:i + 2 + nd]]
        n = int(np.prod(dims))
        out[name] = np.array([float(x) for x in toks[i + 2 + nd:i + 2 + nd + n]]).reshape(dims)
        i += 2 + nd + n
    return out


@pytest.mark.parametrize("idx", range(6))
@pytest.mark.parametrize("normalizer", ["sparsemax", "entmax15"])
def test_kernels_match_reference(idx, normalizer):
    r = read_ref(idx)
    scores = r["scores"].astype(np.float32)
    valid = r["valid"].astype(np.uint8) if "valid" in r else None
    allowed = r["allowed"].astype(np.uint8) if "allowed" in r else None
    w = K.masked_normalize(scores, normalizer, valid=valid, allowed=allowed, causal=bool(r["causal"][0]))
    want = r["w_" + normalizer]
    np.testing.assert_array_equal(w == 0, want == 0)  # exact zeros, exactly where the reference has them
    np.testing.assert_allclose(w, want, atol=2e-6)
    ds = K.masked_normalize_backward(r["dweights"].astype(np.float32), w, normalizer)
    np.testing.assert_allclose(ds, r["ds_" + normalizer], atol=2e-6)


def test_seed004_energies():
    """[ln 4, ln 2, 0]: sparsemax [(1 + ln 2)/2, (1 - ln 2)/2, 0], τ = (3 ln 2 - 1)/2."""
    a = np.log(2.0)
    z = np.array([2 * a, a, 0], np.float32)
    w = K.masked_normalize(z.reshape(1, 1, 3), "sparsemax")[0, 0]
    np.testing.assert_allclose(w, [(1 + a) / 2, (1 - a) / 2, 0], atol=1e-6)
    assert w[2] == 0
    tau, support = K.normalizer_threshold(z, "sparsemax")
    assert support == 2 and abs(tau - (3 * a - 1) / 2) < 1e-6
    w15 = K.masked_normalize(z.reshape(1, 1, 3), "entmax15")[0, 0]
    tau15, support15 = K.normalizer_threshold(z, "entmax15")
    np.testing.assert_allclose(w15, (z / 2 - tau15) ** 2, atol=1e-6)
    assert support15 == 3 and abs(w15.sum() - 1) < 1e-6
    np.testing.assert_array_equal(K.masked_normalize(z.reshape(1, 1, 3)), K.masked_softmax(z.reshape(1, 1, 3)))
    with pytest.raises(attend.AttendError, match="normalizer 'bogus'"):
        K.masked_normalize(z.reshape(1, 1, 3), "bogus")
    with pytest.raises(attend.AttendError, match="every source position is masked"):
        K.masked_normalize(z.reshape(1, 1, 3), "sparsemax", valid=np.zeros((1, 3), np.uint8))


@pytest.mark.parametrize("normalizer", ["softmax", "sparsemax", "entmax15"])
def test_attention_with_a_normalizer(normalizer):
    """attention(normalizer=...) is scores → masked_normalize → context, and
    its backward is the chain of the three backwards."""
    rng = np.random.default_rng(4)
    q = rng.uniform(-2, 2, (2, 3, 4)).astype(np.float32)
    k = rng.uniform(-2, 2, (2, 5, 4)).astype(np.float32)
    v = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    valid = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], np.uint8)
    ctx, w = K.attention(q, k, v, kind="dot", valid=valid, normalizer=normalizer)
    s = K.scores(q, k, "dot")
    w2 = K.masked_normalize(s, normalizer, valid=valid)
    np.testing.assert_allclose(w, w2, atol=1e-6)
    np.testing.assert_allclose(ctx, K.context(w2, v), atol=1e-5)
    if normalizer != "softmax":
        assert (w == 0).sum() > 0
    dctx = rng.uniform(-1, 1, ctx.shape).astype(np.float32)
    dq, dk, dv, _ = K.attention_backward(dctx, q, k, v, kind="dot", valid=valid, normalizer=normalizer)
    dw, dv2 = K.context_backward(dctx, w, v)
    ds = K.masked_normalize_backward(dw, w, normalizer)
    dq2, dk2, _ = K.scores_backward(ds, q, k, "dot")
    np.testing.assert_allclose(dq, dq2, atol=1e-5)
    np.testing.assert_allclose(dk, dk2, atol=1e-5)
    np.testing.assert_allclose(dv, dv2, atol=1e-5)


def test_train_with_sparsemax_equals_cli(tmp_path):
    opts = dict(REVERSE, steps=60, normalizer="sparsemax")
    run_cli("train", *cli_args(opts), "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(**opts)
    assert m.config["normalizer"] == "sparsemax"
    m.save(tmp_path / "py.safetensors")
    h = m.greedy("abcde")[0]
    assert (h.alignment == 0).sum() > 0
    np.testing.assert_allclose(h.alignment.sum(axis=1), 1, atol=1e-5)
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
    m2 = attend.Model.load(tmp_path / "py.safetensors")
    assert m2.config["normalizer"] == "sparsemax"
    m2.close()


def test_create_with_normalizer():
    cfg = {"cell": "gru", "decoder": "luong", "score": "general", "src_vocab": 9, "tgt_vocab": 9, "emb": 4,
           "enc_hidden": 4, "enc_layers": 1, "dec_hidden": 6, "attn": 4, "max_batch": 2, "max_src_len": 5,
           "max_tgt_len": 5, "normalizer": "entmax15"}
    m = attend.Model.create(cfg)
    assert m.config["normalizer"] == "entmax15"
    m.close()
    with pytest.raises(attend.AttendError, match="entmax15 with decoder pointer"):
        attend.Model.create(dict(cfg, decoder="pointer"))
    softmax = dict(cfg)
    del softmax["normalizer"]
    m = attend.Model.create(softmax)
    assert "normalizer" not in m.config  # dicts omit the zero new fields
    m.close()
