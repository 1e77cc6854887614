"""Coverage from Python (issue 13): the config key `coverage`, train's
`coverage` and `coverage_loss` keywords (the same model as `attend train
--coverage --coverage-loss` byte for byte) and beam's `coverage_penalty`
(Wu et al. 2016: the score gains β Σ_j log(min(Σ_t α_tj, 1)))."""
import numpy as np
import pytest

import attend
from conftest import cli_args, run_cli

SMALL = dict(task="copy", symbols=6, min_len=3, max_len=8, count=400, dev_count=20, emb=8, hidden=8, dec_hidden=16,
             attn=8, batch=16, steps=40, seed=2)


def test_train_equals_cli(tmp_path):
    run_cli("train", *cli_args(SMALL), "--coverage", "--coverage-loss", "0.5", "--out", tmp_path / "cli.safetensors",
            cwd=tmp_path)
    m = attend.train(coverage=True, coverage_loss=0.5, **SMALL)
    assert m.config["coverage"] == 1
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
    with attend.Model.load(tmp_path / "py.safetensors") as again:
        assert again.config["coverage"] == 1


def test_beam_coverage_penalty_formula():
    m = attend.train(coverage=True, **SMALL)
    try:
        plain = m.beam("abcdef", beam=4, nbest=4)
        beta = 1.5
        pen = m.beam("abcdef", beam=4, nbest=4, coverage_penalty=beta)
        assert len(pen) >= 2
        scores = [h.score for h in pen]
        assert scores == sorted(scores, reverse=True)
        checked = 0
        for h in pen:
            if len(h.ids) >= m.config["max_tgt_len"] + 1:   # unfinished at the length limit: no EOS step
                continue
            checked += 1
            logp, align = m.score("abcdef", h.ids)          # [len+1, S], EOS step last
            total = align.astype(np.float64).sum(axis=0)
            want = logp + beta * np.log(np.clip(np.minimum(total, 1.0), 1e-12, None)).sum()
            assert h.score == pytest.approx(want, abs=1e-4)
        assert checked >= 2
        assert [h.score for h in plain] != scores
        with pytest.raises(attend.AttendError):
            m.beam("abc", beam=2, coverage_penalty=-1.0)
    finally:
        m.close()


def test_bad_combinations():
    with pytest.raises(attend.AttendError, match="coverage"):
        attend.train(decoder="none", coverage=True, **dict(SMALL, steps=1))
    with pytest.raises(attend.AttendError, match="coverage_loss"):
        attend.train(decoder="none", coverage_loss=1.0, **dict(SMALL, steps=1))
