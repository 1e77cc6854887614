"""attend.g2p against `attend g2p` on the shipped model: pronunciations,
n-best lists with scores, and alignments (jsonl prints them to 4 decimals)."""
import json

import numpy as np
import pytest

import attend
import attend.g2p
from conftest import run_cli

WORDS = ["hello", "world", "speech", "attention", "Read", "xylophone", "cat"]


@pytest.fixture(scope="module")
def g(g2p_model):
    with attend.g2p.G2P(g2p_model) as model:
        yield model


def test_pronounce_matches_cli(g):
    out = run_cli("g2p", *WORDS).stdout.splitlines()
    assert out[0] == "hello HH EH L OW"
    for word, line in zip(WORDS, out):
        assert line == word + " " + g.pronounce(word)
    assert attend.g2p.pronounce("hello") == "HH EH L OW"   # the shipped model, found by the package


def test_nbest_and_alignment_match_cli(g):
    out = run_cli("g2p", "--format", "jsonl", "--align", "--nbest", 3, *WORDS).stdout.splitlines()
    for word, line in zip(WORDS, out):
        cli = json.loads(line)["hypotheses"]
        hyps = g.nbest(word, 3)
        assert [h.text for h in hyps] == [c["phonemes"] for c in cli]
        for h, c in zip(hyps, cli):
            assert h.score == pytest.approx(c["score"], abs=1e-6)
            assert h.alignment.shape == (len(h.ids), len(word))
            np.testing.assert_allclose(h.alignment, np.array(c["alignment"]), atol=5.1e-5)
            assert h.letters == list(word.lower())


def test_greedy_alignment_and_entropy(g):
    out = run_cli("g2p", "--format", "jsonl", "--align", "speech").stdout
    cli = json.loads(out)["hypotheses"][0]
    h = g.align("speech")
    assert h.text == cli["phonemes"] == "S P IY CH"
    np.testing.assert_allclose(h.alignment, np.array(cli["alignment"]), atol=5.1e-5)
    assert int(np.argmax(h.alignment[0])) == 0          # S reads s (as tests/data/g2p/cli_test.sh checks)
    assert int(np.argmax(h.alignment[3])) in (4, 5)     # CH reads c or h
    ent = attend.g2p.entropy(h.alignment)
    assert ent.shape == (4,) and np.all(ent >= 0) and np.all(ent <= np.log(6) + 1e-6)
    w = h.alignment.astype(np.float64)
    np.testing.assert_allclose(ent, -(w * np.log(np.where(w > 0, w, 1))).sum(1), atol=1e-12)


def test_lexicon(g, tmp_path):
    """attend.g2p.Lexicon (issue 29): lookups as `attend g2p --lexicon`, the
    compact form saved and read back, malformed lines and a stress mismatch."""
    import os
    from conftest import SOURCE_DIR
    sample = os.path.join(SOURCE_DIR, "data", "g2p", "cmudict-sample.dict")
    lx = attend.g2p.Lexicon(sample)
    assert lx.lookup("ai") == ["AY", "EY AY"] and lx.lookup("AI") == ["AY", "EY AY"]
    assert lx.lookup("hello") == [] and "ai" in lx and "hello" not in lx
    assert len(lx) == 3404 and lx.info["entries"] == 3639 and lx.info["stress"] == 0
    with attend.g2p.G2P(g.path, lexicon=lx) as gl:
        got = gl.pronounce(["ai", "hello", "aeromar"])
    tsv = run_cli("g2p", "--lexicon", sample, "--format", "tsv", "ai", "hello", "aeromar").stdout.splitlines()
    assert got == [row.split("\t")[4] for row in tsv]
    assert [row.split("\t")[5] for row in tsv] == ["lexicon", "model", "lexicon"]
    path = tmp_path / "lx.bin"
    lx.save(path)
    back = attend.g2p.Lexicon(path)
    assert back.lookup("aeromar") == lx.lookup("aeromar") and back.info["bytes"] == os.path.getsize(path)
    bad = tmp_path / "bad.dict"
    bad.write_text("ok OW K EY\nbad(x) B AE D\n")
    with pytest.raises(attend.AttendError, match="bad.dict:2:"):
        attend.g2p.Lexicon(bad)
    assert attend.g2p.Lexicon(bad, skip_malformed=True).lookup("ok") == ["OW K EY"]
    stressed = attend.g2p.Lexicon(os.path.join(SOURCE_DIR, "data", "g2p", "cmudict-stress-sample.dict"), stress=True)
    assert stressed.lookup("aardvark") == ["AA1 R D V AA2 R K"]
    with pytest.raises(attend.AttendError, match="stress digits"):
        attend.g2p.G2P(g.path, lexicon=stressed)


def test_to_ipa():
    """attend.g2p.to_ipa as `attend g2p --phones ipa` (issue 29)."""
    assert attend.g2p.to_ipa("AH0 T EH1 N SH AH0 N") == "əˈtɛnʃən"
    assert attend.g2p.to_ipa("HH EH L OW") == "hɛloʊ"
    out = run_cli("g2p", "--phones", "ipa", "speech").stdout
    assert out == "speech " + attend.g2p.to_ipa("S P IY CH") + "\n"
    with pytest.raises(attend.AttendError, match="'XX'"):
        attend.g2p.to_ipa("XX")


def test_text(g):
    """attend.g2p.normalize_text and G2P.pronounce_text (issue 29 item 2):
    the hand-written table of tests/data/g2p/text_cases.tsv through Python,
    and the same tokens and phonemes as `attend g2p --text`."""
    import os
    import re
    from conftest import SOURCE_DIR
    data = os.path.join(SOURCE_DIR, "tests", "data", "g2p")
    lx = attend.g2p.Lexicon(os.path.join(data, "text_lexicon.dict"))

    def unescape(s):
        s = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m.group(1), 16)), s)
        b = re.sub(rb"\\x([0-9a-fA-F]{2})", lambda m: bytes([int(m.group(1), 16)]), s.encode("utf-8"))
        return b.replace(b"\\t", b"\t").replace(b"\\n", b"\n").replace(b"\\\\", b"\\").decode("utf-8", "surrogateescape")

    n = 0
    with open(os.path.join(data, "text_cases.tsv"), encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            lex, text, want = line.split("\t")
            if "\\x" in text:  # raw bytes: the C table test covers them
                continue
            toks, _ = attend.g2p.normalize_text(unescape(text), lx if lex == "x" else None)
            assert " ".join(toks) == want, (text, toks, want)
            n += 1
    assert n >= 190
    toks, notes = attend.g2p.normalize_text("a\x01b 中")
    assert toks == ["ab", "中"] and notes == ["'a<U+0001>b': U+0001 skipped", "'中': U+4E2D kept"]
    with attend.g2p.G2P(g.path, lexicon=lx) as gl:
        got = gl.pronounce_text("NASA's OK, hello.")
        with pytest.warns(attend.AttendWarning, match=r"U\+0001 skipped"):
            gl.pronounce_text("a\x01b")
    assert got[:3] == [("nasa's", "N AE S AH Z", "lexicon+suffix"), ("ok", "OW K EY", "lexicon"), ("|", "", "break")]
    rows = run_cli("g2p", "--text", "--lexicon", os.path.join(data, "text_lexicon.dict"), "--format", "tsv",
                   "NASA's OK, hello.").stdout.splitlines()
    assert [(r.split("\t")[3], r.split("\t")[4], r.split("\t")[5]) for r in rows] == got
    with pytest.raises(attend.AttendTypeError):
        attend.g2p.normalize_text(b"bytes")
