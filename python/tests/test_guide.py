"""Guided alignment from Python: attend.train(guided_alignment=...) on a TSV
with a third column of i-j links equals `attend train --guided-alignment`
byte for byte; what cannot be guided is refused."""
import pytest

import attend
from conftest import cli_args, run_cli

WORDS = ["cat", "dog", "bird", "fish", "horse", "mouse", "snake", "tiger", "lion", "bear"]
OPTS = dict(emb=6, hidden=5, attn=4, dec_hidden=7, batch=4, steps=30, seed=3)


def reversed_tsv(path, links=True):
    """Each word and its reversal; with links, the anti-diagonal alignment."""
    lines = []
    for w in WORDS:
        n = len(w)
        col = "\t" + " ".join("%d-%d" % (n - 1 - j, j) for j in range(n)) if links else ""
        lines.append("%s\t%s%s\n" % (w, w[::-1], col))
    path.write_text("".join(lines))
    return path


def test_guided_tsv_equals_cli(tmp_path):
    tsv = reversed_tsv(tmp_path / "train.tsv")
    opts = dict(OPTS, guided_alignment=0.5)
    run_cli("train", "--train", tsv, *cli_args(opts), "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(train_tsv=tsv, **opts)
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
    # the term changes training: without it the weights differ
    plain = attend.train(train_tsv=tsv, **OPTS)
    plain.save(tmp_path / "plain.safetensors")
    plain.close()
    assert (tmp_path / "plain.safetensors").read_bytes() != (tmp_path / "py.safetensors").read_bytes()


def test_guided_losses_include_the_term(tmp_path):
    tsv = reversed_tsv(tmp_path / "train.tsv")
    with_term, without = [], []
    attend.train(train_tsv=tsv, guided_alignment=2.0, progress=with_term.append, **OPTS).close()
    attend.train(train_tsv=tsv, progress=without.append, **OPTS).close()
    # the first step: the same batch and weights, the loss gains the (positive) term
    assert with_term[0]["loss"] > without[0]["loss"]


def test_refusals(tmp_path):
    plain = reversed_tsv(tmp_path / "plain.tsv", links=False)
    with pytest.raises(attend.AttendError, match="needs alignments"):
        attend.train(train_tsv=plain, guided_alignment=1.0, **OPTS)
    with pytest.raises(attend.AttendError, match="decoder none"):
        attend.train(train_tsv=reversed_tsv(tmp_path / "t.tsv"), decoder="none", guided_alignment=1.0, **OPTS)
    with pytest.raises(attend.AttendError, match="decoder pointer"):
        attend.train(task="sort", symbols=4, max_len=4, count=50, dev_count=5, guided_alignment=1.0, **OPTS)
    with pytest.raises(attend.AttendError, match="guided_alignment=-1"):
        attend.train(train_tsv=reversed_tsv(tmp_path / "t2.tsv"), guided_alignment=-1.0, **OPTS)
