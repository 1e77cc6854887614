"""The Python API's policies (issue 30): one unknown= policy for text in every
call, lists where a batch makes sense, AttendError subclasses of the built-in
exceptions, the pointer exclusion, interventions and rendering bound (and
checked against the command), and every public function with a docstring and
type hints (py.typed)."""
import inspect
import os
import re
import warnings

import numpy as np
import pytest

import attend
import attend.g2p
import attend.kernels as K
import attend.render as R
from conftest import cli_args, run_cli


# ------------------------------------------------------------------ unknown=
def test_unknown_policy_model(reverse_model):
    with attend.Model.load(reverse_model) as m:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            good = m.greedy(["abcd", "dcb"])                       # nothing unknown: no warning
        with pytest.warns(attend.AttendWarning, match=r"source 1 'ab#c': 1 of 4 symbols unknown to the model \(#\)"):
            hs = m.greedy(["abcd", "ab#c"])                        # the default: warn, read as <unk>
        assert hs[0].text == good[0].text and hs[1] is not None
        with pytest.raises(attend.AttendValueError, match="source 1 'ab#c'.*not decoded") as e:
            m.greedy(["abcd", "ab#c"], unknown="error")
        assert isinstance(e.value, ValueError) and e.value.code == attend.ERR_ARG
        hs = m.greedy(["abcd", "ab#c", "dcb"], unknown="skip")
        assert hs[1] is None and [hs[0].text, hs[2].text] == [good[0].text, good[1].text]
        assert m.beam("ab#c", beam=2, unknown="skip") == []
        assert m.score("ab#c", "cba", unknown="skip") is None
        with pytest.raises(ValueError, match="target 0 'c#a'"):
            m.score("abc", "c#a", unknown="error")
        with pytest.raises(ValueError, match="unknown='ignore'"):
            m.greedy("abc", unknown="ignore")
        ids = m.src_vocab.encode("ab#")                            # ids are taken as they are
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert m.greedy(ids)[0] is not None
        assert m.src_vocab.unknown_tokens("ab#c#") == ["#", "#"]
        assert attend.ensemble.greedy([m], ["ab#c"], unknown="skip") == [None]
        assert attend.ensemble.beam([m], "ab#c", unknown="skip") == []
        assert attend.ensemble.rescore(m, "ab#c", ["cba"], unknown="skip") is None


def test_unknown_policy_matches_the_command(reverse_model):
    """warn decodes what `attend decode` decodes (it warns and reads <unk>)."""
    r = run_cli("decode", reverse_model, stdin="ab#c\n")
    assert "unknown to the model" in r.stderr
    with attend.Model.load(reverse_model) as m, pytest.warns(attend.AttendWarning):
        assert m.greedy("ab#c")[0].text == r.stdout.split("\n")[0].split("\t")[-1].strip()


def test_g2p_lists_are_batched(g2p_model):
    words = ["hello", "world", "phoneme", "attention", "read", "naïve", "a"]
    with attend.g2p.G2P(g2p_model) as g:
        with pytest.warns(attend.AttendWarning, match="word 5 'naïve'"):
            batch = g.pronounce(words)
        with pytest.warns(attend.AttendWarning):
            one = [g.pronounce(w) for w in words]
        assert batch == one and batch[:2] == ["HH EH L OW", "W ER L D"]
        assert g.pronounce(words, unknown="skip")[5] is None
        with pytest.raises(ValueError, match="word 5"):
            g.pronounce(words, unknown="error")
        hs = g.align(["speech", "read"])
        assert [h.text for h in hs] == ["S P IY CH", "R IY D"] and hs[0].letters == list("speech")
        nb = g.nbest(["read", "naïve"], 2, unknown="skip")
        assert [h.text for h in nb[0]] == ["R IY D", "R EH D"] and nb[1] == []
    r = run_cli("g2p", "hello", "world", "phoneme")
    assert [ln.split(" ", 1)[1] for ln in r.stdout.splitlines()] == batch[:3]
    assert attend.g2p.pronounce(["hello", "world"]) == ["HH EH L OW", "W ER L D"]


def test_model_lists(reverse_model):
    with attend.Model.load(reverse_model) as m:
        lists = m.beam(["abcd", "dcb"], beam=3, nbest=2)
        assert [[h.text for h in hs] for hs in lists] == [[h.text for h in m.beam(s, beam=3, nbest=2)]
                                                           for s in ("abcd", "dcb")]
        scored = m.score(["abcd", "dcb"], ["dcba", "bcd"])
        assert [round(x[0], 6) for x in scored] == [round(m.score(s, t)[0], 6)
                                                     for s, t in (("abcd", "dcba"), ("dcb", "bcd"))]
        with pytest.raises(ValueError, match="2 sources but 1 targets"):
            m.score(["abcd", "dcb"], ["dcba"])


# ------------------------------------------------------------------ exceptions
def test_exception_classes():
    cases = {attend.ERR_IO: OSError, attend.ERR_FORMAT: OSError, attend.ERR_ALLOC: MemoryError,
             attend.ERR_SHAPE: ValueError, attend.ERR_ARG: ValueError, attend.ERR_NULL: ValueError,
             attend.ERR_CAPACITY: ValueError, attend.ERR_NONFINITE: ValueError, attend.ERR_MASKED_ROW: ValueError}
    for code, base in cases.items():
        e = attend.AttendError(code, "what")
        assert isinstance(e, base) and isinstance(e, attend.AttendError), (code, type(e))
        assert e.code == code and e.message == "what" and str(e) == e.status + ": what"
    e = attend.AttendTypeError(attend.ERR_ARG, "x")
    assert isinstance(e, TypeError) and isinstance(e, attend.AttendError) and e.code == attend.ERR_ARG
    with pytest.raises(TypeError):
        K.masked_softmax([[[1.0, 2.0]]])                           # not an array
    with pytest.raises(TypeError):
        attend.g2p.pronounce(3)
    with pytest.raises(OSError) as e:
        attend.Model.load("/nonexistent/m.safetensors")
    assert e.value.code == attend.ERR_IO
    with pytest.raises(ValueError):
        K.masked_softmax(np.zeros((1, 1, 2), np.float32), valid=np.zeros((1, 2), bool))   # every position masked


# ------------------------------------------------------------------ pointer exclusion
def test_pointer_exclusion(tmp_path):
    opts = dict(task="sort", symbols=6, max_len=6, count=300, emb=8, hidden=8, attn=8, batch=16, steps=20)
    m = attend.train(**opts)
    assert m.pointer_exclude
    src = "fedcbaab"[:6]
    for h in m.beam(src, beam=3, nbest=3):
        assert sorted(h.ids.tolist()) == list(range(6))            # permutations
    m.pointer_exclude = False
    m.save(tmp_path / "repeat.safetensors")
    m2 = attend.train(pointer_repeat=True, **opts)
    assert not m2.pointer_exclude
    m.close()
    m2.close()
    with attend.Model.load(tmp_path / "repeat.safetensors") as m3:
        assert not m3.pointer_exclude                             # saved in the file
    m4 = attend.train(task="reverse", symbols=4, max_len=4, count=100, emb=8, hidden=8, attn=8, batch=8, steps=2)
    with pytest.raises(ValueError):
        m4.pointer_exclude = True                                 # not a pointer model
    with pytest.raises(ValueError, match="pointer_repeat"):
        attend.train(task="reverse", symbols=4, max_len=4, count=100, emb=8, hidden=8, attn=8, batch=8, steps=2,
                     pointer_repeat=True)
    m4.close()


# ------------------------------------------------------------------ interventions
def test_interventions_match_the_command(reverse_model):
    """Model.intervene gives the numbers `attend intervene` prints."""
    r = run_cli("intervene", reverse_model, "abcdef")
    rows = {}
    for ln in r.stdout.splitlines():
        f = ln.split()
        if len(f) >= 9 and f[0] in ("0", "2", "all"):
            kind = f[2] if f[0] != "all" else f[1]
            rows[(f[0], kind)] = f
    with attend.Model.load(reverse_model) as m:
        for (pos, kind), f in rows.items():
            iv = m.intervene("abcdef", kind, position=int(pos) if pos != "all" else 0)
            off = 3 if pos != "all" else 2
            assert abs(iv.tv_mean - float(f[off])) < 1e-4 and abs(iv.tv_max - float(f[off + 1])) < 1e-4, (f, iv)
            assert abs(iv.js_mean - float(f[off + 3])) < 1e-4 and abs(iv.kl_mean - float(f[off + 4])) < 1e-4, f
            assert iv.output.text == f[off + 5] and iv.changed == (f[off + 6] == "yes"), (f, iv)
            assert iv.tv.shape == (iv.forced_alignment.shape[0],) and iv.forced_alignment.shape[1] == iv.src_len
        assert len(rows) >= 6
        iv = m.intervene("abcdef", "delete-token", position=1)
        assert iv.src_len == 5 and iv.output.source_tokens == list("acdef")
        iv = m.intervene("abcdef", "replace-token", position=1, token="c")
        assert iv.src_len == 6
        with pytest.raises(ValueError, match="replace-token needs token"):
            m.intervene("abcdef", "replace-token", position=1)
        with pytest.raises(ValueError, match="intervention 'erase'"):
            m.intervene("abcdef", "erase")


def test_textbook_intervention():
    """seed 000, Table 14.2: the colour state removed, weights [0, 1/2, 1/2]."""
    a = np.float32(np.log(2))
    h = np.array([[a, 0], [0, a], [0, 0]], dtype=np.float32)
    q = np.array([1, 0], dtype=np.float32)
    ctx, w = K.attention_intervene(q, h, h, "remove-state", position=0)
    assert np.allclose(w, [0, 0.5, 0.5]) and np.allclose(ctx, [0, a / 2])
    ctx, w = K.attention_intervene(q, h, h, "uniform")
    assert np.allclose(w, [1 / 3] * 3)


# ------------------------------------------------------------------ rendering
def test_rendering_matches_the_command(reverse_model, tmp_path):
    """attend.render draws the heatmaps `attend align` writes, byte for byte."""
    svg, html = tmp_path / "a.svg", tmp_path / "a.html"
    r = run_cli("align", reverse_model, "abcdef", "--svg", svg, "--html", html)
    with attend.Model.load(reverse_model) as m:
        h = m.greedy("abcdef")[0]
        text = R.heatmap(h, style="ramp")
        assert text in r.stdout, (text, r.stdout)
        # the same pictures as the command's, numbers within rounding (the command
        # loads the model with other capacities: its products may round differently)
        for ours, theirs in ((R.heatmap_svg(h, title="attend align: abcdef"), svg.read_text()),
                             (R.heatmap_html(h, title="attend align: abcdef"), html.read_text())):
            num = re.compile(r"\d+\.\d{6}")
            assert num.sub("#", ours) == num.sub("#", theirs)
            assert np.allclose([float(x) for x in num.findall(ours)], [float(x) for x in num.findall(theirs)],
                               atol=2e-6)
        grid = R.heatmap(h.alignment, h.source_tokens, h.tokens)
        assert grid.splitlines()[0].split() == list("abcdef")
        tsv = R.heatmap(h, style="tsv").splitlines()
        assert np.allclose([[float(x) for x in ln.split("\t")[1:]] for ln in tsv[1:]], h.alignment, atol=1e-4)
    with pytest.raises(ValueError, match="style 'bars'"):
        R.heatmap(np.zeros((1, 1), np.float32), style="bars")
    with pytest.raises(ValueError, match="2 labels for 3 columns"):
        R.heatmap(np.zeros((1, 3), np.float32), ["a", "b"], ["x"])
    plot = R.line_plot_svg([("attention", [5, 10, 20], [1.0, 0.9, 0.8]), ("none", [5, 10, 20], [0.9, 0.4, 0.1])],
                           "accuracy", "length", "seq acc", 0, 1)
    assert "<svg" in plot and ">attention<" in plot and ">none<" in plot and plot.count("<circle") == 3 + 1  # series 0: circles (3 points, 1 in the legend)
    # no y range: the data's (the C call needs one; a range of 100-300 is no 0-1 plot's)
    auto = R.line_plot_svg([("loss", [1, 2, 3], [300.0, float("nan"), 100.0])], "loss", "step", "loss")
    assert "<svg" in auto and ">200<" in auto and ">200<" not in plot
    flat = R.line_plot_svg([("c", [1, 2], [5.0, 5.0])])
    assert "<svg" in flat


# ------------------------------------------------------------------ docstrings, hints, py.typed
def _public(mod):
    for name in getattr(mod, "__all__", []):
        obj = getattr(mod, name)
        if inspect.isfunction(obj):
            yield "%s.%s" % (mod.__name__, name), obj
        elif inspect.isclass(obj) and obj.__module__.startswith("attend") and not issubclass(obj, BaseException):
            for mname, m in vars(obj).items():
                if mname.startswith("_") and mname != "__init__":
                    continue
                f = m.fget if isinstance(m, property) else getattr(m, "__func__", m)
                if inspect.isfunction(f):
                    yield "%s.%s.%s" % (mod.__name__, name, mname), f


def test_docstrings_and_type_hints():
    assert os.path.isfile(os.path.join(os.path.dirname(attend.__file__), "py.typed"))
    missing_doc, missing_hint, checked = [], [], set()
    for mod in (attend, attend.kernels, attend.g2p, attend.ensemble, attend.render, attend.model):
        for name, f in _public(mod):
            checked.add(name)
            if not name.endswith("__init__") and not (f.__doc__ or "").strip():
                missing_doc.append(name)
            sig = inspect.signature(f)
            params = [p for p in sig.parameters.values() if p.name not in ("self", "cls")
                      and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if any(p.annotation is p.empty for p in params) or sig.return_annotation is sig.empty:
                missing_hint.append(name)
    assert len(checked) >= 60 and "attend.model.Model.intervene" in checked, sorted(checked)
    assert not missing_doc, missing_doc
    assert not missing_hint, missing_hint

