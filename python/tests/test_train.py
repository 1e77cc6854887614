"""attend.train equals `attend train` byte for byte with the same options,
and reports progress through its callback."""
import numpy as np

import attend
from conftest import REVERSE, cli_args, run_cli


def test_task_model_equals_cli_byte_for_byte(reverse_model, tmp_path):
    seen = []
    m = attend.train(progress=seen.append, **REVERSE)
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == reverse_model.read_bytes()
    assert [s["step"] for s in seen] == list(range(1, REVERSE["steps"] + 1))
    assert all(s["steps"] == REVERSE["steps"] and s["tokens"] > 0 and not s["skipped"] for s in seen)
    assert seen[-1]["loss"] < seen[0]["loss"] / 10
    assert 0 < seen[0]["lr"] < 3e-3 and seen[0]["grad_norm"] > 0


def test_tsv_lstm_luong_equals_cli(tmp_path):
    words = ["cat", "dog", "bird", "fish", "horse", "mouse", "snake", "tiger", "lion", "bear"]
    (tmp_path / "train.tsv").write_text("".join("%s\t%s\n" % (w, w.upper()) for w in words))
    (tmp_path / "dev.tsv").write_text("cow\tCOW\nowl\tOWL\n")
    opts = dict(cell="lstm", decoder="luong", score="general", emb=6, hidden=5, attn=4, dec_hidden=7, batch=4,
                steps=40, seed=9, optimizer="sgd", momentum=0.5, clip=0.5, lr=0.05)
    run_cli("train", "--train", tmp_path / "train.tsv", "--dev", tmp_path / "dev.tsv", *cli_args(opts), "--out",
            tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(train_tsv=tmp_path / "train.tsv", dev_tsv=tmp_path / "dev.tsv", **opts)
    assert m.tgt_vocab.tokens()[4:] == sorted(set("".join(words).upper()), key="".join(words).upper().index)
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()


def test_progress_false_stops_early():
    steps = []
    m = attend.train(task="copy", symbols=4, max_len=4, count=100, dev_count=10, emb=4, hidden=4, attn=4,
                     batch=8, steps=50, progress=lambda s: steps.append(s["step"]) or s["step"] < 5)
    assert steps == [1, 2, 3, 4, 5]
    assert m.greedy("ab", max_len=3)[0].ids.dtype.name == "int32"
    m.close()


def test_pointer_model(tmp_path, reverse_model):
    """The sort task trains a pointer model: outputs are source positions."""
    m = attend.train(task="sort", symbols=5, max_len=5, count=300, dev_count=10, emb=8, hidden=8, attn=8,
                     batch=16, steps=40, seed=2)
    assert m.config["decoder"] == "pointer" and m.tgt_vocab is not None
    h = m.greedy("ecab")[0]
    assert h.ids.tolist() == [int(t) for t in h.tokens] and len(h.ids) == 4   # one position per source symbol
    assert all(0 <= i < 4 for i in h.ids) and h.alignment.shape == (4, 4)
    logp, align = m.score("ecab", np.array([2, 3, 1, 0], dtype=np.int32))    # positions, no EOS step
    assert logp < 0 and align.shape == (4, 4)
    m.save(tmp_path / "sort.safetensors")
    m.close()
    with attend.Model.load(tmp_path / "sort.safetensors") as again:
        assert again.tgt_vocab is None
        assert again.greedy("ecab")[0].ids.tolist() == h.ids.tolist()


def test_pointer_model_equals_cli(tmp_path):
    opts = dict(task="sort", symbols=5, max_len=5, count=300, dev_count=10, emb=8, hidden=8, attn=8, batch=16,
                steps=40, seed=2)
    run_cli("train", *cli_args(opts), "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(**opts)
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()


def test_dropout_label_smoothing_equal_cli(tmp_path):
    """train(dropout=, label_smoothing=) is `attend train --dropout --label-smoothing`, byte for byte; the
    options change the model; values outside [0, 1) are refused naming the option."""
    opts = dict(REVERSE, steps=60, dropout=0.2, label_smoothing=0.1)
    run_cli("train", *cli_args(opts), "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(**opts)
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
    plain = attend.train(**dict(opts, dropout=0.0, label_smoothing=0.0))
    plain.save(tmp_path / "plain.safetensors")
    plain.close()
    assert (tmp_path / "plain.safetensors").read_bytes() != (tmp_path / "py.safetensors").read_bytes()
    for key, bad in (("dropout", 1.0), ("dropout", -0.5), ("label_smoothing", 1.0)):
        try:
            attend.train(**dict(opts, steps=1, **{key: bad}))
        except attend.AttendError as e:
            assert key in str(e)
        else:
            raise AssertionError("%s=%g accepted" % (key, bad))
