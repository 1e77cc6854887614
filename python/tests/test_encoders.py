"""Issue 27 from Python: models trained by `attend train` with a transformer
encoder + transformer decoder and with a conv encoder load, decode, and give
their encoder's self-attention (Model.encoder_attention,
attend_model_encoder_attention) as numpy arrays, checked against what `attend
align --encoder-self` prints for the same model and text (each row's argmax and
weight, each head's entropy). Interventions at the encoder's self-attention
(Model.intervene(site="encoder-self")) run, the identity permutation changes
nothing, and the refusals name both sides."""
import math
import re

import numpy as np
import pytest

import attend
from conftest import run_cli

TEXT = "fcabed"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    d = tmp_path_factory.mktemp("encoders")
    common = ["--task", "reverse", "--symbols", "6", "--min-len", "3", "--max-len", "6", "--count", "2000",
              "--dev-count", "40", "--emb", "16", "--hidden", "32", "--layers", "2", "--batch", "32", "--seed", "5"]
    tf, cv = d / "tf.safetensors", d / "conv.safetensors"
    run_cli("train", *common, "--steps", "400", "--encoder", "transformer", "--heads", "2", "--decoder",
            "transformer", "--dec-layers", "2", "--out", tf, cwd=d)
    run_cli("train", *common, "--steps", "300", "--encoder", "conv", "--kernel", "3", "--out", cv, cwd=d)
    return tf, cv


def cli_report(path, layer, head):
    """(per row: argmax, weight) and {head: entropy} from attend align --encoder-self"""
    r = run_cli("align", path, TEXT, "--encoder-self", "--layer", layer, "--head", head)
    rows = [(int(m.group(1)), float(m.group(2))) for m in re.finditer(r"argmax=(\d+) \(.\) w=([0-9.]+)", r.stdout)]
    ent = {int(m.group(1)): float(m.group(2)) for m in re.finditer(r"head (\d+)\s+([0-9.]+)", r.stdout)}
    mean = float(re.search(r"mean map ([0-9.]+)", r.stdout).group(1))
    return rows, ent, mean


def entropy(w):
    return float(np.mean([-sum(x * math.log(x) for x in row if x > 0) for row in w]))


def test_transformer_encoder_attention(models):
    tf, _ = models
    with attend.Model.load(tf) as m:
        assert m.config["encoder"] == "transformer" and m.config["decoder"] == "transformer"
        hyp = m.greedy(TEXT)[0]
        # the same output as the command's (whatever bits this machine's training gave)
        assert hyp.text == run_cli("decode", tf, stdin=TEXT + "\n").stdout.strip(), hyp.text
        S = len(TEXT)
        allw = m.encoder_attention(TEXT)            # [layers, heads, S, S]
        assert allw.shape == (2, 2, S, S) and allw.dtype == np.float32
        assert np.allclose(allw.sum(-1), 1, atol=1e-5)
        assert m.encoder_attention(TEXT, layer=2).shape == (2, S, S)
        assert m.encoder_attention(TEXT, head=1).shape == (2, S, S)
        for layer in (1, 2):
            mean = m.encoder_attention(TEXT, layer=layer, head=0)
            assert np.allclose(mean, allw[layer - 1].mean(0), atol=1e-6)
            for head in (1, 2):
                w = m.encoder_attention(TEXT, layer=layer, head=head)
                assert np.array_equal(w, allw[layer - 1, head - 1])
                rows, ent, ment = cli_report(tf, layer, head)
                assert len(rows) == S
                for i, (arg, wt) in enumerate(rows):
                    assert abs(w[i, arg] - wt) <= 0.005 + 1e-6, (layer, head, i)
                    assert w[i, arg] >= w[i].max() - 1e-6   # the CLI's argmax is a maximum here too
                for h in (1, 2):
                    assert abs(entropy(allw[layer - 1, h - 1]) - ent[h]) <= 5e-5 + 1e-6, (layer, h)
                assert abs(entropy(mean) - ment) <= 5e-5 + 1e-6
        # the heads differ (the comparison above could fail)
        assert np.abs(allw[0, 0] - allw[0, 1]).max() > 1e-3
        with pytest.raises(attend.AttendValueError, match=r"layer=3 outside \[1, enc_layers=2\]"):
            m.encoder_attention(TEXT, layer=3)
        with pytest.raises(attend.AttendValueError, match=r"head=3 outside"):
            m.encoder_attention(TEXT, layer=1, head=3)


def test_encoder_self_interventions(models):
    tf, _ = models
    with attend.Model.load(tf) as m:
        base = m.greedy(TEXT)[0]
        u = m.intervene(TEXT, "uniform", site="encoder-self", layer=1)
        assert u.tv_mean > 0 and u.tv.shape == (len(base.ids) + 1,)
        # a seed whose permutation of the S positions is the identity: nothing changes, exactly
        S = len(TEXT)
        ident = next(s for s in range(1, 100000) if list(attend.kernels.permutation(S, s)) == list(range(S)))
        p = m.intervene(TEXT, "permute", seed=ident, site="encoder-self")
        assert p.tv_max == 0 and p.kl_max == 0 and not p.changed
        other = m.intervene(TEXT, "permute", seed=ident + 1, site="encoder-self")
        assert other.tv_max > 0
        r = m.intervene(TEXT, "remove-state", position=2, site="encoder-self", head=2)
        assert r.tv_mean > 0 and r.forced_alignment.shape == (len(base.ids) + 1, S)
        with pytest.raises(attend.AttendValueError, match="delete-token.*encoder-self"):
            m.intervene(TEXT, "delete-token", position=1, site="encoder-self")
        with pytest.raises(attend.AttendValueError, match="site 'nowhere'"):
            m.intervene(TEXT, "uniform", site="nowhere")


def test_conv_model(models):
    _, cv = models
    with attend.Model.load(cv) as m:
        assert m.config["encoder"] == "conv"
        assert m.greedy(TEXT)[0].text == run_cli("decode", cv, stdin=TEXT + "\n").stdout.strip()
        with pytest.raises(attend.AttendValueError, match="encoder conv has no self-attention"):
            m.encoder_attention(TEXT)
        with pytest.raises(attend.AttendValueError, match="encoder-self.*encoder is conv"):
            m.intervene(TEXT, "uniform", site="encoder-self")
