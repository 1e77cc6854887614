"""The copy mechanism from Python: train(copy=True) on data/names, the config
key `copy`, copied tokens coming back as strings (greedy, beam, tokens and
text), Model.create with two vocabularies, and the same outputs as the
`attend` command on the saved file."""
import os

import pytest

import attend
from conftest import run_cli

NAMES = os.path.join(os.environ.get("ATTEND_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", "..")),
                     "data", "names")


@pytest.fixture(scope="module")
def copy_model():
    return attend.train(train_tsv=os.path.join(NAMES, "train.tsv"), tokenizer="space", copy=True, steps=300,
                        batch=32, emb=16, hidden=32, dec_hidden=64, attn=32)


def test_unseen_names_come_back_as_text(copy_model, tmp_path):
    m = copy_model
    assert m.config["copy"] == 1
    assert len(m.tgt_vocab) == 9          # the names are copies, not target tokens
    src = "call zimbrak at noon"          # zimbrak is in no vocabulary
    assert m.src_vocab.encode(src)[1] == 3
    h = m.greedy(src)[0]
    assert h.text == "CALL zimbrak noon"
    assert h.tokens == ["CALL", "zimbrak", "noon"]
    V = len(m.tgt_vocab)
    assert int(h.ids[1]) == V + 1          # the extended id: V + its source position
    assert h.alignment.shape == (3, 4) and h.alignment[1].argmax() == 1
    b = m.beam("tell zimbrak and quolo hi", beam=3)[0]
    assert b.text == "hello zimbrak hello quolo"
    # ids instead of text: copies are named by the source vocabulary's tokens
    g = m.greedy(m.src_vocab.encode("greet ann"))[0]
    assert g.tokens[0] == "hello"
    path = tmp_path / "copy.safetensors"
    m.save(path)
    with attend.Model.load(path) as m2:
        assert m2.config["copy"] == 1
        assert m2.greedy(src)[0].text == h.text
    out = run_cli("decode", path, stdin=src + "\n")
    assert out.stdout.strip() == h.text


def test_create_with_two_vocabularies(copy_model):
    m = copy_model
    c = dict(m.config)
    with attend.Model.create(c, 1, m.src_vocab, m.tgt_vocab, "space") as m2:
        a = attend.lib.attend_model_copy_target
        call_id = m.src_vocab.tokens().index("call")
        assert a(m2._handle(), call_id) == -1             # "call" is not a target token
        # the copy-aware reader left every source token out of the target vocabulary
        assert all(a(m2._handle(), i) == -1 for i in range(len(m.src_vocab)))
        assert set(m.tgt_vocab.tokens()[4:]) == {"hello", "CALL", "EMAIL", "REMIND", "ASK"}
        m2.src_vocab = m2.tgt_vocab = None                 # borrowed: closed with copy_model


def test_copy_with_none_is_refused():
    with pytest.raises(attend.AttendError, match="copy with decoder none"):
        attend.train(task="copy", decoder="none", copy=True, steps=1)
