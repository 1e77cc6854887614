"""Every ```python block of docs/PYTHON.md runs, in order, in one namespace
(in a scratch directory): the page's examples cannot rot."""
import os
import re

from conftest import SOURCE_DIR


def test_docs_python_examples(tmp_path, monkeypatch, capsys):
    text = open(os.path.join(SOURCE_DIR, "docs", "PYTHON.md"), encoding="utf-8").read()
    blocks = re.findall(r"^```python\n(.*?)^```$", text, flags=re.S | re.M)
    assert len(blocks) >= 5
    monkeypatch.chdir(tmp_path)
    prefix = os.environ.get("ATTEND_EXPECT_PREFIX")    # python_wheel: the pip-installed package
    if prefix:
        import attend
        assert os.path.realpath(attend.__file__).startswith(os.path.realpath(prefix) + "/"), attend.__file__
    ns = {}
    for i, code in enumerate(blocks):
        exec(compile(code, "docs/PYTHON.md block %d" % (i + 1), "exec"), ns)
    out = capsys.readouterr().out
    assert "HH EH L OW" in out and "R IY D -0.3475" in out and "dcba" in out
    assert "[[[0.5  0.25 0.25]]]" in out and "ATTEND_ERR_ARG" in out and "closed" in out
    assert "[[[0.8465736  0.15342641 0.        ]]]" in out and "(0.53972" in out
