"""Issue 14 parts 3 and 4 from Python: a stacked decoder (config key
dec_layers, attend.train(dec_layers=...)) and scheduled sampling
(attend.train(sampling_prob=..., sampling_ramp=...)), each byte for byte the
model `attend train` writes with --dec-layers / --sampling-prob / --sampling-ramp."""
import attend
from attend import AttendError
from conftest import cli_args, run_cli

OPTS = dict(task="reverse", symbols=5, min_len=2, max_len=5, count=300, dev_count=20, data_seed=2, emb=8,
            hidden=8, attn=8, dec_hidden=12, batch=16, steps=30, seed=4)


def test_config_key_dec_layers():
    cfg = {"cell": "lstm", "decoder": "luong", "score": "general", "src_vocab": 9, "tgt_vocab": 9, "emb": 4,
           "enc_hidden": 3, "enc_layers": 1, "dec_hidden": 5, "attn": 4, "max_batch": 2, "max_src_len": 4,
           "max_tgt_len": 4, "dec_layers": 3}
    with attend.Model.create(cfg) as m:
        assert m.config["dec_layers"] == 3
        t = m.tensors()
        for l in (1, 2):
            assert t["decoder.weight_ih_l%d" % l].shape == (4 * 5, 5)
            assert t["decoder.bias_hh_l%d" % l].shape == (4 * 5,)
        assert "decoder.weight_ih_l3" not in t
    one = dict(cfg)
    del one["dec_layers"]
    with attend.Model.create(one) as m:
        assert "dec_layers" not in m.config          # zero fields are left out, as in the model file
    try:
        attend.Model.create(dict(cfg, dec_layers=9))
        assert False, "dec_layers 9 was accepted"
    except AttendError as e:
        assert "dec_layers=9" in str(e)


def test_train_equals_cli(tmp_path):
    opts = dict(OPTS, dec_layers=2, sampling_prob=0.5, sampling_ramp=10)
    run_cli("train", *cli_args(opts), "--out", tmp_path / "cli.safetensors", cwd=tmp_path)
    m = attend.train(**opts)
    assert m.config["dec_layers"] == 2
    m.save(tmp_path / "py.safetensors")
    m.close()
    assert (tmp_path / "py.safetensors").read_bytes() == (tmp_path / "cli.safetensors").read_bytes()
    # sampling changed the training: without it, other weights
    m = attend.train(**dict(opts, sampling_prob=0.0))
    m.save(tmp_path / "tf.safetensors")
    m.close()
    assert (tmp_path / "tf.safetensors").read_bytes() != (tmp_path / "py.safetensors").read_bytes()


def test_sampling_refused_for_pointer():
    try:
        attend.train(task="sort", symbols=5, max_len=5, count=50, dev_count=10, emb=4, hidden=4, attn=4, batch=8,
                     steps=2, sampling_prob=0.3)
        assert False, "a pointer model trained with scheduled sampling"
    except AttendError as e:
        assert "pointer" in str(e) and "sampling_prob" in str(e)
