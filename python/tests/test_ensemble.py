"""attend.ensemble against the single model and the `attend decode A B`
command: one model is the model, two models decode as the command does
(outputs, scores, every member's alignment), members that differ are refused
naming the first difference, rescoring is log p / (len + 1)."""
import json

import numpy as np
import pytest

import attend
from conftest import REVERSE, cli_args, run_cli

SOURCES = ["abcd", "fedcb", "ab", "cafeba", "ddd"]


@pytest.fixture(scope="module")
def second_model(tmp_path_factory):
    d = tmp_path_factory.mktemp("second")
    path = d / "second.safetensors"
    opts = dict(REVERSE, seed=6, steps=150)
    run_cli("train", *cli_args(opts), "--out", path, cwd=d)
    return path


def test_one_model_is_the_model(reverse_model):
    with attend.Model.load(reverse_model) as m:
        for h1, he in zip(m.greedy(SOURCES), attend.ensemble.greedy([m], SOURCES)):
            assert h1.text == he.text and np.array_equal(h1.alignment, he.alignment)
            assert he.alignments.shape == (1,) + h1.alignment.shape
        for src in SOURCES:
            b1, be = m.beam(src, beam=3, nbest=3), attend.ensemble.beam([m], src, beam=3, nbest=3)
            assert [h.text for h in b1] == [h.text for h in be]
            assert [h.score for h in b1] == [h.score for h in be]
            assert all(np.array_equal(x.alignment, y.alignment) for x, y in zip(b1, be))


def test_two_models_as_the_command(reverse_model, second_model):
    out = run_cli("decode", reverse_model, second_model, "--max-len", 7, "--format", "jsonl", "--align",
                  stdin="\n".join(SOURCES) + "\n")
    cli = [json.loads(line)["hypotheses"][0] for line in out.stdout.splitlines()]
    with attend.Model.load(reverse_model) as a, attend.Model.load(second_model) as b:
        hyps = attend.ensemble.greedy([a, b], SOURCES, max_len=7)
        assert [h.text for h in hyps] == [c["output"] for c in cli]
        for h, c in zip(hyps, cli):
            assert h.alignments.shape[0] == 2
            np.testing.assert_allclose(h.alignments, np.array(c["alignments"]), atol=6e-5)
        for src, h, c in zip(SOURCES, hyps, cli):
            # the command's greedy score is the members' mean forced log-probability
            assert c["score"] == pytest.approx((a.score(src, h.ids)[0] + b.score(src, h.ids)[0]) / 2, abs=2e-6)
        for src in SOURCES[:3]:
            out = run_cli("decode", reverse_model, second_model, "--nbest", 3, "--max-len", 7, stdin=src + "\n")
            rows = [line.split("\t") for line in out.stdout.splitlines()]
            hs = attend.ensemble.beam([a, b], src, beam=3, nbest=3, max_len=7)
            assert [h.text for h in hs] == [r[1] for r in rows]
            for h, r in zip(hs, rows):
                assert h.score == pytest.approx(float(r[0]), abs=2e-6)
                # alpha 0: the mean of the members' forced log-probabilities
                assert h.score == pytest.approx((a.score(src, h.ids)[0] + b.score(src, h.ids)[0]) / 2, abs=1e-4)


def test_members_that_differ_are_refused(reverse_model, tmp_path):
    other = tmp_path / "five.safetensors"
    run_cli("train", "--task", "reverse", "--symbols", 5, "--steps", 1, "--out", other, cwd=tmp_path)
    with attend.Model.load(reverse_model) as a, attend.Model.load(other) as b:
        with pytest.raises(attend.AttendError, match="model 2: target vocabulary has 9 ids, model 1 has 10"):
            attend.ensemble.greedy([a, b], "abc")
        with pytest.raises(attend.AttendError, match="same handle"):
            attend.ensemble.beam([a, a], "abc")


def test_rescore(reverse_model):
    with attend.Model.load(reverse_model) as m:
        hs = m.beam("abcd", beam=4, nbest=4)
        got = attend.ensemble.rescore(m, "abcd", hs)
        want = [m.score("abcd", h.ids)[0] / (len(h.ids) + 1) for h in hs]
        assert got == pytest.approx(want, abs=1e-6)
        rev = attend.ensemble.rescore(m, "abcd", hs, reverse=True)
        assert rev == pytest.approx([m.score("abcd", h.ids[::-1].copy())[0] / (len(h.ids) + 1) for h in hs],
                                    abs=1e-6)
        assert got[0] > rev[0]  # "dcba" read backwards is "abcd": not a reversal
