"""attend.Model against the `attend` command on the same model file: greedy
and beam outputs and scores, forced scoring, alignments, save/load."""
import json

import numpy as np
import pytest

import attend
from conftest import run_cli

SOURCES = ["abcd", "fedcb", "ab", "cafeba", "ddd"]


def test_load_config_and_vocab(reverse_model):
    with attend.Model.load(reverse_model) as m:
        c = m.config
        assert (c["cell"], c["decoder"], c["score"]) == ("gru", "bahdanau", "additive")
        assert (c["emb"], c["enc_hidden"], c["dec_hidden"], c["attn"]) == (16, 16, 32, 16)
        assert m.src_vocab.tokens()[:4] == ["<pad>", "<bos>", "<eos>", "<unk>"]
        assert m.src_vocab.tokens()[4:] == list("abcdef")
        assert m.tokenizer == "char"
        t = m.tensors()
        assert list(t)[0] == "src_emb.weight" and t["src_emb.weight"].shape == (10, 16)
        assert sum(x.size for x in t.values()) == m.param_count


def test_greedy_matches_cli(reverse_model):
    out = run_cli("decode", reverse_model, "--max-len", 7, "--format", "jsonl", stdin="\n".join(SOURCES) + "\n")
    cli = [json.loads(line)["hypotheses"][0] for line in out.stdout.splitlines()]
    with attend.Model.load(reverse_model) as m:
        hyps = m.greedy(SOURCES, max_len=7)
        assert [h.text for h in hyps] == [c["output"] for c in cli]
        for src, h, c in zip(SOURCES, hyps, cli):
            assert h.alignment.dtype == np.float32 and h.alignment.shape == (len(h.ids), len(src))
            np.testing.assert_allclose(h.alignment.sum(axis=1), 1, atol=1e-5)
            # the command's greedy score is the forced log-probability of its output
            logp, align = m.score(src, h.text)
            assert logp == pytest.approx(c["score"], abs=2e-6)
            np.testing.assert_allclose(align[:len(h.ids)], h.alignment, atol=1e-6)
            assert align.shape == (len(h.ids) + 1, len(src))


def test_reverse_is_learned(reverse_model):
    with attend.Model.load(reverse_model) as m:
        assert [h.text for h in m.greedy(SOURCES)] == [s[::-1] for s in SOURCES]


def test_beam_nbest_matches_cli(reverse_model):
    with attend.Model.load(reverse_model) as m:
        for src in SOURCES[:3]:
            out = run_cli("decode", reverse_model, "--nbest", 3, "--max-len", 7, stdin=src + "\n")
            cli = [line.split("\t") for line in out.stdout.splitlines()]
            hyps = m.beam(src, beam=3, nbest=3, max_len=7)
            assert [h.text for h in hyps] == [c[1] for c in cli]
            for h, c in zip(hyps, cli):
                assert h.score == pytest.approx(float(c[0]), abs=2e-6)
                # alpha 0: the score is the forced log-probability
                assert m.score(src, h.ids)[0] == pytest.approx(h.score, abs=1e-4)
                assert h.alignment.shape == (len(h.ids), len(src))


def test_save_load_round_trip_is_byte_identical(reverse_model, tmp_path):
    with attend.Model.load(reverse_model) as m:
        m.save(tmp_path / "again.safetensors")
    assert (tmp_path / "again.safetensors").read_bytes() == reverse_model.read_bytes()


def test_set_tensor_changes_outputs(reverse_model, tmp_path):
    with attend.Model.load(reverse_model) as m:
        before = m.score("abc", "cba")[0]
        w = m.tensors()["out.bias"]
        w[:] = 0
        w[4] = 50.0                      # every step now says "a"
        m.set_tensor("out.bias", w)
        assert m.greedy("abc", max_len=4)[0].text == "aaaa"
        assert m.score("abc", "cba")[0] < before
        np.testing.assert_array_equal(m.tensors()["out.bias"], w)


def test_encoder_kinds_config_and_tensors(reverse_model, tmp_path):
    """Issue 27: a transformer and a conv encoder from a config dict: the
    names travel both ways, the tensors are the kinds' (nn.TransformerEncoder's
    and nn.Conv1d's names), and a saved file loads with the same config and
    decodes the same."""
    base = {"cell": "gru", "decoder": "bahdanau", "score": "additive", "src_vocab": 10, "tgt_vocab": 10,
            "emb": 8, "enc_hidden": 16, "enc_layers": 2, "dec_hidden": 12, "attn": 6, "max_batch": 4,
            "max_src_len": 7, "max_tgt_len": 7}
    kinds = [dict(base, encoder="transformer", heads=2, positions="learned", post_norm=1, max_positions=9),
             dict(base, encoder="conv", kernel=3)]
    for cfg in kinds:
        with attend.Model.load(reverse_model) as r:   # its vocabularies (abcdef), handed to the new model
            assert len(r.src_vocab) == 10 and len(r.tgt_vocab) == 10
            m = attend.Model.create(cfg, seed=3, src_vocab=r.src_vocab, tgt_vocab=r.tgt_vocab)
            r.src_vocab = r.tgt_vocab = None
        with m:
            assert m.config == cfg
            t = m.tensors()
            if cfg["encoder"] == "transformer":
                assert t["encoder.pos_emb"].shape == (9, 8)
                assert t["encoder.layers.1.self_attn.in_proj_weight"].shape == (24, 8)
                assert t["encoder.layers.0.linear1.weight"].shape == (16, 8)
                assert "encoder.norm.weight" not in t   # post-norm: no final norm
            else:
                assert t["encoder.convs.1.weight"].shape == (16, 24)
            assert t["bridge.weight"].shape == (12, 8)   # E = emb
            path = tmp_path / ("%s.safetensors" % cfg["encoder"])
            m.save(path)
            hyps = m.greedy(["abc", "fedcba"], max_len=5)
        with attend.Model.load(path) as m2:
            assert m2.config == cfg
            assert [h.text for h in m2.greedy(["abc", "fedcba"], max_len=5)] == [h.text for h in hyps]
    with pytest.raises(attend.AttendError, match="heads=3 does not divide emb=8"):
        attend.Model.create(dict(base, encoder="transformer", heads=3))
