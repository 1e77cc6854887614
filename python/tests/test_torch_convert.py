"""tools/torch_convert.py: a PyTorch model (tools/ref_model.py) converted to
an attend file gives the same log-probabilities and alignments in attend, an
attend model converted to PyTorch gives the same in PyTorch, and the round
trips are exact (identical state_dict, identical file bytes)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import attend
import attend.g2p
from conftest import SOURCE_DIR, run_cli

torch = pytest.importorskip("torch")
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import ref_model  # noqa: E402
import torch_convert  # noqa: E402

TOOL = os.path.join(SOURCE_DIR, "tools", "torch_convert.py")
VOCAB_SRC = ref_model.SPECIALS + list("abcdef")
VOCAB_TGT = ref_model.SPECIALS + list("ABCDEFG")
ARCHS = [
    dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4),
    dict(cell="lstm", decoder="luong", score="general", enc_hidden=4, enc_layers=2, dec_hidden=6, attn=4),
    dict(cell="lstm", decoder="bahdanau", score="scaled_dot", enc_hidden=4, enc_layers=1, dec_hidden=8, attn=4),
    # stacked decoders (dec_layers): decoder.*_l1, decoder.*_l2
    dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=1, dec_hidden=7, attn=4,
         dec_layers=2),
    dict(cell="lstm", decoder="luong", score="general", enc_hidden=4, enc_layers=1, dec_hidden=6, attn=4,
         dec_layers=3),
    # issue 27: the transformer and conv encoders (nn.TransformerEncoder, nn.Conv1d), the transformer decoder
    # (nn.TransformerDecoder); emb 6 is their width
    dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=10, enc_layers=2, dec_hidden=7, attn=4,
         encoder="transformer", heads=2),
    dict(cell="lstm", decoder="luong", score="general", enc_hidden=8, enc_layers=1, dec_hidden=6, attn=4,
         encoder="transformer", heads=3, positions="learned", post_norm=1, max_positions=8),
    dict(cell="gru", decoder="bahdanau", score="additive", enc_hidden=5, enc_layers=2, dec_hidden=7, attn=4,
         encoder="conv", kernel=3),
    dict(cell="gru", decoder="luong", score="dot", enc_hidden=5, enc_layers=1, dec_hidden=6, attn=4,
         encoder="conv", kernel=5, conv_relu=1, positions="learned", max_positions=8),
    dict(cell="gru", decoder="transformer", score="additive", enc_hidden=10, enc_layers=2, dec_hidden=12, attn=4,
         encoder="transformer", heads=2, dec_layers=2),
    dict(cell="gru", decoder="transformer", score="additive", enc_hidden=8, enc_layers=1, dec_hidden=9, attn=4,
         encoder="transformer", heads=3, positions="learned", post_norm=1, max_positions=8),
]
PAIRS = [("abc", "CBA"), ("fedcba", "AB"), ("a", "GGGG"), ("cafe", "EFAC")]


class Run:
    def __init__(self, returncode, stderr):
        self.returncode, self.stderr = returncode, stderr


def convert(*args, capsys=None):
    """The tool's main() in this process (importing torch once, not per run)."""
    rc = torch_convert.main([str(a) for a in args])
    return Run(rc, capsys.readouterr().err if capsys else "")


def test_command_line(tmp_path, reverse_model):
    """Once as a program: /usr/bin/python3 tools/torch_convert.py ..."""
    r = subprocess.run([sys.executable, TOOL, "to-torch", str(reverse_model), str(tmp_path / "r.pt")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and "wrote" in r.stdout, r.stderr
    r = subprocess.run([sys.executable, TOOL, "to-attend", str(tmp_path / "none.pt"), str(tmp_path / "x")],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "none.pt" in r.stderr


def torch_logp(model, vocab_src, vocab_tgt, src, tgt):
    """log p(tgt + EOS | src) and the attention weights [T+1,S], in float64."""
    s = torch.tensor([[vocab_src.index(c) for c in src]])
    y = [vocab_tgt.index(c) for c in tgt]
    tin = torch.tensor([[ref_model.BOS] + y])
    tout = torch.tensor([y + [ref_model.EOS]])
    with torch.no_grad():
        _, out, ws = model(s, torch.tensor([len(src)]), tin, tout)
        logp = torch.log_softmax(out[0], dim=-1).gather(1, tout[0][:, None]).sum()
    return float(logp), np.stack([w[0].numpy() for w in ws])


def arch_id(a):
    return "%s%s_%s_%s%s" % (a.get("encoder", "rnn") + "_" if "encoder" in a else "", a["cell"], a["decoder"],
                             a["score"], "_dl%d" % a["dec_layers"] if "dec_layers" in a else "")


@pytest.mark.parametrize("arch", ARCHS, ids=arch_id)
def test_torch_to_attend(arch, tmp_path):
    cfg = dict(arch, src_vocab=len(VOCAB_SRC), tgt_vocab=len(VOCAB_TGT), emb=6, max_batch=4, max_src_len=6,
               max_tgt_len=7)
    torch.manual_seed(11)
    m = ref_model.Seq2Seq(cfg)
    torch.save({"config": cfg, "state_dict": m.state_dict(), "src_vocab": VOCAB_SRC, "tgt_vocab": VOCAB_TGT,
                "tokenizer": "char"}, tmp_path / "m.pt")
    r = convert("to-attend", tmp_path / "m.pt", tmp_path / "m.safetensors")
    assert r.returncode == 0, r.stderr
    m.double()
    with attend.Model.load(tmp_path / "m.safetensors") as am:
        assert am.config == cfg
        for src, tgt in PAIRS:
            want, walign = torch_logp(m, VOCAB_SRC, VOCAB_TGT, src, tgt)
            got, galign = am.score(src, tgt)
            assert got == pytest.approx(want, abs=1e-4), (src, tgt)
            np.testing.assert_allclose(galign, walign, atol=1e-5)
        # attend's writer lays the file out as the tool does
        am.save(tmp_path / "again.safetensors")
    assert (tmp_path / "again.safetensors").read_bytes() == (tmp_path / "m.safetensors").read_bytes()
    # and back: the same state_dict, tensor for tensor, in the same order
    r = convert("to-torch", tmp_path / "m.safetensors", tmp_path / "back.pt")
    assert r.returncode == 0, r.stderr
    back = torch.load(tmp_path / "back.pt")
    sd = ref_model.Seq2Seq(cfg).state_dict()
    m.float()
    assert list(back["state_dict"]) == list(sd) == list(m.state_dict())
    for name, t in m.state_dict().items():
        assert torch.equal(back["state_dict"][name], t), name
    assert back["config"] == cfg and back["src_vocab"] == VOCAB_SRC and back["tgt_vocab"] == VOCAB_TGT


def test_attend_to_torch(reverse_model, tmp_path):
    """A model trained by `attend train` runs in PyTorch with the same numbers."""
    r = convert("to-torch", reverse_model, tmp_path / "r.pt")
    assert r.returncode == 0, r.stderr
    b = torch.load(tmp_path / "r.pt")
    m = ref_model.Seq2Seq(b["config"])
    m.load_state_dict(b["state_dict"])
    m.double()
    voc = b["src_vocab"]
    with attend.Model.load(reverse_model) as am:
        for src in ("abcd", "fedcb", "ab"):
            want, walign = torch_logp(m, voc, voc, src, src[::-1])
            got, galign = am.score(src, src[::-1])
            assert got == pytest.approx(want, abs=1e-4)
            np.testing.assert_allclose(galign, walign, atol=1e-5)
    r = convert("to-attend", tmp_path / "r.pt", tmp_path / "r.safetensors")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "r.safetensors").read_bytes() == reverse_model.read_bytes()


@pytest.mark.parametrize("kinds", [
    ("--encoder", "transformer", "--decoder", "transformer", "--heads", "2", "--dec-layers", "2",
     "--positions", "learned"),
    ("--encoder", "conv", "--kernel", "3", "--layers", "2"),
], ids=["transformer_transformer", "conv_bahdanau"])
def test_attend_to_torch_new_kinds(kinds, tmp_path):
    """Issue 27: a transformer or conv model trained by `attend train` runs in
    PyTorch (nn.TransformerEncoder/Decoder, nn.Conv1d) with the same numbers
    and greedy outputs, and converts back to the same bytes."""
    path = tmp_path / "m.safetensors"
    run_cli("train", "--task", "reverse", "--symbols", "6", "--min-len", "2", "--max-len", "6", "--count", "500",
            "--dev-count", "20", "--emb", "16", "--hidden", "32", "--batch", "16", "--steps", "60", *kinds,
            "--out", path, cwd=tmp_path)
    r = convert("to-torch", path, tmp_path / "m.pt")
    assert r.returncode == 0, r.stderr
    b = torch.load(tmp_path / "m.pt")
    m = ref_model.Seq2Seq(b["config"])
    m.load_state_dict(b["state_dict"])
    m.double()
    voc = b["src_vocab"]
    with attend.Model.load(path) as am:
        for src in ("abcd", "fedcb", "ab"):
            want, walign = torch_logp(m, voc, voc, src, src[::-1])
            got, galign = am.score(src, src[::-1])
            assert got == pytest.approx(want, abs=1e-4)
            np.testing.assert_allclose(galign, walign, atol=1e-5)
            s = torch.tensor([[voc.index(c) for c in src]])
            out, out_len, _, gap = m.greedy(s, torch.tensor([len(src)]), 7)
            hyp = am.greedy(src, max_len=7)[0]
            assert out[0, :int(out_len[0])].tolist() == [int(i) for i in hyp.ids], (src, gap)
    r = convert("to-attend", tmp_path / "m.pt", tmp_path / "back.safetensors")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "back.safetensors").read_bytes() == path.read_bytes()


def test_bad_input(tmp_path, reverse_model, capsys):
    cfg = dict(ARCHS[0], src_vocab=len(VOCAB_SRC), tgt_vocab=len(VOCAB_TGT), emb=6, max_batch=4, max_src_len=6,
               max_tgt_len=7)
    sd = ref_model.Seq2Seq(cfg).state_dict()
    sd["bridge.weight"] = torch.zeros(8, 10)
    torch.save({"config": cfg, "state_dict": sd, "src_vocab": VOCAB_SRC, "tgt_vocab": VOCAB_TGT,
                "tokenizer": "char"}, tmp_path / "bad.pt")
    r = convert("to-attend", tmp_path / "bad.pt", tmp_path / "bad.safetensors", capsys=capsys)
    assert r.returncode == 1 and "bridge.weight" in r.stderr and not (tmp_path / "bad.safetensors").exists()
    torch.save(ref_model.Seq2Seq(cfg).state_dict(), tmp_path / "plain.pt")
    r = convert("to-attend", tmp_path / "plain.pt", tmp_path / "plain.safetensors", capsys=capsys)
    assert r.returncode == 1 and "--meta" in r.stderr
    (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 7)
    r = convert("to-torch", tmp_path / "junk.safetensors", tmp_path / "junk.pt", capsys=capsys)
    assert r.returncode == 1 and "too short" in r.stderr


def test_quantized_files_refused_or_dequantized(tmp_path):
    """The shipped G2P models are quantized (f16, int8): to-torch refuses them
    naming the tensor, and with --dequantize writes the float32 values the
    library computes with (Model.tensors() of the loaded file, exactly); back
    in attend (to-attend) that float model pronounces as the quantized one."""
    for name, dtype in (("g2p-cmudict.safetensors", "F16"), ("g2p-cmudict-int8.safetensors", "I8")):
        src = os.path.join(SOURCE_DIR, "models", name)
        pt = tmp_path / (name + ".pt")
        r = subprocess.run([sys.executable, TOOL, "to-torch", src, str(pt)], capture_output=True, text=True)
        assert r.returncode == 1 and ("is %s, expected F32: the file is quantized" % dtype) in r.stderr, r.stderr
        assert "--dequantize" in r.stderr and not pt.exists()
        r = subprocess.run([sys.executable, TOOL, "to-torch", "--dequantize", src, str(pt)], capture_output=True,
                           text=True)
        assert r.returncode == 0, r.stderr
        b = torch.load(str(pt))
        with attend.Model.load(src) as m:
            want = m.tensors()
        assert list(b["state_dict"]) == list(want)
        for n, t in b["state_dict"].items():
            assert np.array_equal(t.numpy(), want[n]), n
        back = tmp_path / (name + ".f32.safetensors")
        r = subprocess.run([sys.executable, TOOL, "to-attend", str(pt), str(back)], capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        words = ["hello", "world", "phoneme", "attention"]
        with attend.g2p.G2P(src) as q, attend.g2p.G2P(back) as f:
            assert q.pronounce(words) == f.pronounce(words)
