"""Monotonic attention from Python: the config key, attend.train(monotonic=True)
equal to `attend train --monotonic` byte for byte, hard alignments that never
move left in greedy and beam decoding, and the combinations refused."""
import numpy as np
import pytest

import attend
from attend._lib import AttendError
from conftest import cli_args, run_cli

COPY = dict(task="copy", symbols=6, min_len=2, max_len=6, count=1000, dev_count=20, emb=12, hidden=12, attn=12,
            dec_hidden=24, batch=16, steps=120, seed=3)


def never_left(alignment):
    """Each row one 1 or all 0; the attended position never decreases (a row of
    zeros is past the end, after every position)."""
    a = np.asarray(alignment)
    prev = -1
    for row in a:
        assert set(np.unique(row)) <= {0.0, 1.0} and row.sum() <= 1
        at = int(np.argmax(row)) if row.sum() == 1 else a.shape[1]
        assert at >= prev
        prev = at
    return True


def test_config_key_and_tensor():
    cfg = dict(cell="gru", decoder="luong", score="general", src_vocab=8, tgt_vocab=8, emb=4, enc_hidden=3,
               enc_layers=1, dec_hidden=5, attn=4, max_batch=2, max_src_len=5, max_tgt_len=5, monotonic=1)
    with attend.Model.create(cfg) as m:
        assert m.config["monotonic"] == 1
        r = m.tensors()["attention.r"]
        assert r.shape == (1,) and r[0] == -4
    cfg.pop("monotonic")
    with attend.Model.create(cfg) as m:
        assert "monotonic" not in m.config and "attention.r" not in m.tensors()


def test_train_equals_cli_and_alignments_never_left(tmp_path):
    run_cli("train", *cli_args(COPY), "--monotonic", "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(monotonic=True, **COPY)
    try:
        assert m.config["monotonic"] == 1
        m.save(tmp_path / "py.safetensors")
        assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
        hyps = m.greedy(["abcdef", "fedcba", "aabbcc", "abc"])
        assert all(never_left(h.alignment) for h in hyps)
        for h in m.beam("abcdef", beam=4, nbest=4, max_len=6):
            never_left(h.alignment)
            # forced scoring runs the same hard process
            _, forced = m.score("abcdef", h.text)
            assert np.array_equal(forced[:len(h.ids)], h.alignment)
    finally:
        m.close()


def test_monotonic_with_a_pointer_or_no_attention_is_refused():
    base = dict(cell="gru", score="additive", src_vocab=8, tgt_vocab=8, emb=4, enc_hidden=3, enc_layers=1,
                dec_hidden=5, attn=4, max_batch=2, max_src_len=5, max_tgt_len=5, monotonic=1)
    for dec in ("pointer", "none"):
        with pytest.raises(AttendError, match="monotonic with decoder " + dec):
            attend.Model.create(dict(base, decoder=dec))
    with pytest.raises(AttendError, match="monotonic"):
        attend.train(task="sort", monotonic=True, steps=1)
