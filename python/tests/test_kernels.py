"""attend.kernels: the seeds' worked numbers (the values tests/test_explain.c
checks through the C API), finite differences, and PyTorch's MHA."""
import numpy as np
import pytest

import attend
import attend.kernels as K

a = float(np.log(2.0))
TOL = 1e-6


def seed000_states():
    # seed 000, Example 14.1: h1 = [a,0], h2 = [0,a], h3 = [0,0]
    return np.array([[[a, 0], [0, a], [0, 0]]], dtype=np.float32)


def test_seed000_table14_1():
    """Seed 000, Table 14.1: query [1,0] → scores [a,0,0], weights
    [1/2,1/4,1/4], context [a/2,a/4] ≈ [0.346574,0.173287]."""
    h = seed000_states()
    q = np.array([[[1, 0]]], dtype=np.float32)
    np.testing.assert_allclose(K.scores(q, h, "dot")[0, 0], [a, 0, 0], atol=TOL)
    ctx, w = K.attention(q, h, h, kind="dot")
    np.testing.assert_allclose(w[0, 0], [0.5, 0.25, 0.25], atol=TOL)
    np.testing.assert_allclose(ctx[0, 0], [a / 2, a / 4], atol=TOL)
    np.testing.assert_allclose(ctx[0, 0], [0.346574, 0.173287], atol=5e-7 + TOL)
    # the same through the three steps
    w2 = K.masked_softmax(K.scores(q, h, "dot"))
    np.testing.assert_array_equal(w2, w)
    np.testing.assert_allclose(K.context(w2, h), ctx, atol=TOL)


def test_seed000_example14_2_and_exercise1():
    """Example 14.2: query [0,1] → weights [1/4,1/2,1/4], context [a/4,a/2];
    §14.10 exercise 1: query [1,1] → weights [2/5,2/5,1/5], context [2a/5,2a/5]."""
    h = seed000_states()
    q = np.array([[[0, 1], [1, 1]]], dtype=np.float32)   # two queries at once: T = 2
    ctx, w = K.attention(q, h, h, kind="dot")
    np.testing.assert_allclose(w[0], [[0.25, 0.5, 0.25], [0.4, 0.4, 0.2]], atol=TOL)
    np.testing.assert_allclose(ctx[0], [[a / 4, a / 2], [2 * a / 5, 2 * a / 5]], atol=TOL)


def test_seed000_table14_2_remove_state():
    """Table 14.2: removing the colour state (mask) renormalises the rest:
    query [1,0] → weights [0,1/2,1/2]."""
    h = seed000_states()
    q = np.array([[[1, 0]]], dtype=np.float32)
    valid = np.array([[False, True, True]])
    ctx, w = K.attention(q, h, h, kind="dot", valid=valid)
    np.testing.assert_allclose(w[0, 0], [0, 0.5, 0.5], atol=TOL)
    assert w[0, 0, 0] == 0.0


def test_seed000_all_masked_is_an_error():
    """End of §14.5: a row with every position excluded is an error."""
    h = seed000_states()
    q = np.array([[[1, 0]]], dtype=np.float32)
    with pytest.raises(attend.AttendError) as e:
        K.attention(q, h, h, kind="dot", valid=np.zeros((1, 3), dtype=np.uint8))
    assert e.value.code == attend.ERR_MASKED_ROW
    assert "row" in e.value.message


def _ref_attention(q, k, v, kind, scale, params):
    """float64 numpy reference of scores → softmax → context."""
    if kind == "dot":
        e = q @ k.transpose(0, 2, 1)
    elif kind == "scaled_dot":
        e = q @ k.transpose(0, 2, 1) * (scale or 1 / np.sqrt(k.shape[2]))
    elif kind == "general":
        e = q @ params["W"] @ k.transpose(0, 2, 1)
    else:
        t = np.tanh((q @ params["Wq"].T)[:, :, None, :] + (k @ params["Wk"].T)[:, None, :, :] + params["b"])
        e = t @ params["va"]
    e = e - e.max(-1, keepdims=True)
    w = np.exp(e) / np.exp(e).sum(-1, keepdims=True)
    return w @ v, w


@pytest.mark.parametrize("kind", ["dot", "scaled_dot", "general", "additive"])
def test_attention_backward_finite_differences(kind):
    rng = np.random.default_rng(7)
    N, T, S, D, Dv, A = 2, 3, 4, 5, 3, 6
    f = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    q, k, v = f(N, T, D), f(N, S, D), f(N, S, Dv)
    params = {}
    if kind == "general":
        params["W"] = f(D, D)
    if kind == "additive":
        params.update(Wq=f(A, D), Wk=f(A, D), va=f(A), b=f(A))
    dctx = f(N, T, Dv)
    ctx, w = K.attention(q, k, v, kind=kind, **params)
    rctx, rw = _ref_attention(*(x.astype(np.float64) for x in (q, k, v)), kind, 0,
                              {n: p.astype(np.float64) for n, p in params.items()})
    np.testing.assert_allclose(ctx, rctx, atol=1e-5)
    np.testing.assert_allclose(w, rw, atol=1e-5)
    dq, dk, dv, grads = K.attention_backward(dctx, q, k, v, kind=kind, **params)

    def loss(q_, k_, v_, p_):
        return float((_ref_attention(q_, k_, v_, kind, 0, p_)[0] * dctx).sum())

    base = {"q": q, "k": k, "v": v, **params}
    got = {"q": dq, "k": dk, "v": dv, **grads}
    eps = 1e-6
    for name, x in base.items():
        x64 = {n: y.astype(np.float64) for n, y in base.items()}
        num = np.zeros(x.shape)
        for i in np.ndindex(x.shape):
            x64[name][i] += eps
            up = loss(x64["q"], x64["k"], x64["v"], {n: x64[n] for n in params})
            x64[name][i] -= 2 * eps
            down = loss(x64["q"], x64["k"], x64["v"], {n: x64[n] for n in params})
            x64[name][i] += eps
            num[i] = (up - down) / (2 * eps)
        np.testing.assert_allclose(got[name], num, atol=2e-4, err_msg="d%s (%s)" % (name, kind))


def test_softmax_and_context_backward():
    rng = np.random.default_rng(3)
    sc = rng.standard_normal((1, 2, 4)).astype(np.float32)
    w = K.masked_softmax(sc, causal=True)
    assert w[0, 0, 1:].tolist() == [0, 0, 0]
    dw = rng.standard_normal((1, 2, 4)).astype(np.float32)
    ds = K.masked_softmax_backward(dw, w)
    want = w * (dw - (dw * w).sum(-1, keepdims=True))      # the softmax Jacobian
    np.testing.assert_allclose(ds, want, atol=1e-6)
    v = rng.standard_normal((1, 4, 3)).astype(np.float32)
    dctx = rng.standard_normal((1, 2, 3)).astype(np.float32)
    dw2, dv = K.context_backward(dctx, w, v)
    np.testing.assert_allclose(dw2, dctx @ v.transpose(0, 2, 1), atol=1e-6)
    np.testing.assert_allclose(dv, w.transpose(0, 2, 1) @ dctx, atol=1e-6)


def test_scores_backward_general():
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((1, 2, 3)).astype(np.float32), rng.standard_normal((1, 4, 5)).astype(np.float32)
    W = rng.standard_normal((3, 5)).astype(np.float32)
    ds = rng.standard_normal((1, 2, 4)).astype(np.float32)
    np.testing.assert_allclose(K.scores(q, k, "general", W=W), q @ W @ k.transpose(0, 2, 1), atol=1e-5)
    dq, dk, g = K.scores_backward(ds, q, k, "general", W=W)
    np.testing.assert_allclose(dq, ds @ (k @ W.T), atol=1e-5)
    np.testing.assert_allclose(dk, ds.transpose(0, 2, 1) @ q @ W, atol=1e-5)
    np.testing.assert_allclose(g["W"], (q[0].T @ ds[0] @ k[0]), atol=1e-5)


def test_mha_matches_pytorch():
    """attend.kernels.mha against torch.nn.MultiheadAttention (forward and
    backward), with a key padding mask; seed 001's shapes (E = 4, H = 2)."""
    torch = pytest.importorskip("torch")
    torch.manual_seed(1)
    N, T, S, E, H = 2, 3, 5, 4, 2
    m = torch.nn.MultiheadAttention(E, H, batch_first=True)
    q = torch.randn(N, T, E, requires_grad=True)
    kv = torch.randn(N, S, E, requires_grad=True)
    pad = torch.tensor([[False] * 5, [False, False, False, True, True]])
    out, w = m(q, kv, kv, key_padding_mask=pad)
    dout = torch.randn(N, T, E)
    out.backward(dout)
    Wq, Wk, Wv = (x.detach().numpy().copy() for x in m.in_proj_weight.chunk(3))
    bq, bk, bv = (x.detach().numpy().copy() for x in m.in_proj_bias.chunk(3))
    params = dict(Wq=Wq, Wk=Wk, Wv=Wv, bq=bq, bk=bk, bv=bv, Wo=m.out_proj.weight.detach().numpy().copy(),
                  bo=m.out_proj.bias.detach().numpy().copy())
    qn, kvn = q.detach().numpy().copy(), kv.detach().numpy().copy()
    valid = ~pad.numpy()
    o2, w2 = K.mha(qn, kvn, kvn, params, H, valid=valid)
    np.testing.assert_allclose(o2, out.detach().numpy(), atol=1e-5)
    np.testing.assert_allclose(w2, w.detach().numpy(), atol=1e-6)
    dq, dk, dv, g = K.mha_backward(dout.numpy().copy(), qn, kvn, kvn, params, H, valid=valid)
    np.testing.assert_allclose(dq, q.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(dk + dv, kv.grad.numpy(), atol=1e-5)   # k and v are one tensor
    np.testing.assert_allclose(g["Wo"], m.out_proj.weight.grad.numpy(), atol=1e-5)
    np.testing.assert_allclose(np.concatenate([g["Wq"], g["Wk"], g["Wv"]]), m.in_proj_weight.grad.numpy(), atol=1e-5)
