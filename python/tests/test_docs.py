"""docs/PYTHON.md as a test (python_docs; python_wheel runs it against the
pip-installed package): every ```python block runs, in order, in one
namespace, in a scratch directory, and

  - what each print() line prints is compared with the comment on that line:
    the comment *is* the output (`print(x)   # dcba [7 6 5 4]`). `...` stands
    for any text; a number in the comment matches a printed number within 1.5
    units of its last written digit (an integer exactly). A print() that runs
    more than once (in a loop) shows its outputs joined by " | ". A print()
    line without a comment fails: each must show what it prints.
  - every public function, method and property of the package (the names in
    each module's __all__, and the public members of its classes) must have
    been called while the blocks ran: the page documents the whole API by
    running it.
"""
import builtins
import inspect
import io
import os
import re
import sys

from conftest import SOURCE_DIR

BLOCK = re.compile(r"^```python\n(.*?)^```$", re.S | re.M)
NUMBER = re.compile(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?")


def _blocks():
    text = open(os.path.join(SOURCE_DIR, "docs", "PYTHON.md"), encoding="utf-8").read()
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 5, "docs/PYTHON.md: no ```python blocks found"
    return blocks


def _comment(line):
    """The trailing comment of a code line (outside quotes), or None."""
    q = None
    for i, c in enumerate(line):
        if q:
            if c == "\\":
                continue
            if c == q:
                q = None
        elif c in "\"'":
            q = c
        elif c == "#":
            return line[i + 1:].strip()
    return None


def _text(t):
    """Literal text, any run of spaces matching any run of white space."""
    return "\\s+".join(re.escape(x) for x in re.split(r" +", t))


def _pattern(expected):
    """A regex for an expected output: `...` any text, numbers as groups."""
    out, nums, pos = [], [], 0
    parts = re.split(r"(\.\.\.)", expected)
    for p in parts:
        if p == "...":
            out.append(".*?")
            continue
        last = 0
        for m in NUMBER.finditer(p):
            out.append(_text(p[last:m.start()]))
            out.append("(" + NUMBER.pattern + ")")
            nums.append(m.group(0))
            last = m.end()
        out.append(_text(p[last:]))
    return re.compile("^\\s*" + "".join(out) + "\\s*$", re.S), nums


def _matches(expected, got):
    pat, nums = _pattern(expected)
    m = pat.match(got)
    if not m:
        return False
    for e, g in zip(nums, m.groups()):
        if "." not in e and "e" not in e:
            if e != g:
                return False
            continue
        decimals = len(e.split(".")[1].split("e")[0]) if "." in e else 0
        if abs(float(g) - float(e)) > 1.5 * 10 ** (-decimals) + 1e-12:
            return False
    return True


def _public_callables():
    """(name, code object) of every public function, method and property."""
    import attend
    import attend.model
    mods = [attend, attend.kernels, attend.g2p, attend.ensemble, attend.render, attend.model]
    seen = {}
    for mod in mods:
        for name in getattr(mod, "__all__", []):
            obj = getattr(mod, name)
            if inspect.isfunction(obj):
                seen.setdefault(obj.__code__, "%s.%s" % (obj.__module__, name))
            elif inspect.isclass(obj) and obj.__module__.startswith("attend") and not issubclass(obj, BaseException):
                for klass in obj.__mro__:
                    if not klass.__module__.startswith("attend"):
                        continue
                    for mname, m in vars(klass).items():
                        if mname.startswith("_") and mname not in ("__init__", "__len__"):
                            continue
                        label = "%s.%s.%s" % (obj.__module__, obj.__name__, mname)
                        if isinstance(m, property):
                            fns = [(m.fget, label), (m.fset, label + " (setter)")]
                        else:
                            fns = [(getattr(m, "__func__", m), label)]
                        for f, lab in fns:
                            if inspect.isfunction(f):
                                seen.setdefault(f.__code__, lab)
    return seen


def test_docs_python_examples(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    prefix = os.environ.get("ATTEND_EXPECT_PREFIX")    # python_wheel: the pip-installed package
    if prefix:
        import attend
        assert os.path.realpath(attend.__file__).startswith(os.path.realpath(prefix) + "/"), attend.__file__
    blocks = _blocks()
    printed = {}                                        # (block, line) -> [outputs]
    real_print = builtins.print

    def doc_print(*args, **kw):
        if "file" in kw and kw["file"] not in (None, sys.stdout):
            return real_print(*args, **kw)
        buf = io.StringIO()
        real_print(*args, **dict(kw, file=buf))
        f = sys._getframe(1)
        if f.f_code.co_filename.startswith("docs/PYTHON.md block "):
            key = (int(f.f_code.co_filename.rsplit(" ", 1)[1]), f.f_lineno)
            printed.setdefault(key, []).append(buf.getvalue().rstrip("\n"))
        real_print(buf.getvalue(), end="")

    codes = _public_callables()
    called = set()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            called.add(frame.f_code)

    ns = {"print": doc_print}
    sys.setprofile(profile)
    try:
        for i, code in enumerate(blocks, 1):
            exec(compile(code, "docs/PYTHON.md block %d" % i, "exec"), ns)
    finally:
        sys.setprofile(None)

    problems = []
    for i, code in enumerate(blocks, 1):
        for n, line in enumerate(code.splitlines(), 1):
            if not re.search(r"(^|[^\w.])print\(", line):
                continue
            comment = _comment(line)
            got = printed.get((i, n))
            where = "block %d line %d: %s" % (i, n, line.strip())
            if comment is None:
                problems.append("%s\n    has no comment showing its output" % where)
            elif got is None:
                problems.append("%s\n    never ran" % where)
            else:
                want = comment.split(" | ") if len(got) > 1 else [comment]
                if len(want) != len(got) or not all(_matches(w, g) for w, g in zip(want, got)):
                    problems.append("%s\n    shows:  %s\n    prints: %s" % (where, comment, " | ".join(got)))
    missing = sorted(name for code, name in codes.items() if code not in called)
    if missing:
        problems.append("public functions docs/PYTHON.md never calls (add an example):\n    " + "\n    ".join(missing))
    assert not problems, "docs/PYTHON.md:\n" + "\n".join(problems)


def test_the_comparison_itself():
    """The rule the page is held to: exact text, numbers to their last digit."""
    assert _matches("2 (384, 128)", "2 (384, 128)")
    assert not _matches("2 (24, 8)", "2 (384, 128)")                # the stale comment of issue 30
    assert _matches("R IY D -0.3475", "R IY D -0.34747404")
    assert not _matches("R IY D -0.3475", "R IY D -0.3490")
    assert _matches("bahdanau additive ...", "bahdanau additive 8417")
    assert _matches("(0.53972..., 2)", "(0.5397207708399179, 2)")
    assert not _matches("dcba", "dcbb")
    assert _matches("[[[0.5  0.25 0.25]]]", "[[[0.5  0.25 0.25]]]")
    assert _comment('print("a # b")   # a # b') == "a # b"
