"""The ctypes mirrors of the public C structs (attend._lib) against C itself:
tests/struct_layout.c (built with the library) prints every mirrored struct's
size and its fields' offsets; each Structure of attend._lib names its C struct
(_c_name_), and must have the same size, the same fields in the same order and
the same offsets. A field added, moved or resized on one side fails here,
naming it."""
import os
import subprocess

import pytest

from attend import _lib

LAYOUT = os.environ.get("ATTEND_STRUCT_LAYOUT")


def c_layouts():
    out = subprocess.run([LAYOUT], capture_output=True, text=True, check=True).stdout
    structs = {}
    for line in out.splitlines():
        name, field, value = line.split()
        s = structs.setdefault(name, {"size": None, "fields": []})
        if field == "sizeof":
            s["size"] = int(value)
        else:
            s["fields"].append((field, int(value)))
    return structs


def mirrors():
    return [cls for cls in vars(_lib).values()
            if isinstance(cls, type) and issubclass(cls, _lib.Structure) and cls is not _lib.Structure]


@pytest.mark.skipif(not LAYOUT, reason="ATTEND_STRUCT_LAYOUT (the struct_layout program) not given")
def test_every_mirror_matches_c():
    c = c_layouts()
    classes = mirrors()
    assert classes, "no Structure in attend._lib"
    for cls in classes:
        name = getattr(cls, "_c_name_", None)
        assert name, "%s does not name its C struct (_c_name_)" % cls.__name__
        assert name in c, "%s: tests/struct_layout.c does not print %s" % (cls.__name__, name)
        want = c[name]
        got = [(f[0], getattr(cls, f[0]).offset) for f in cls._fields_]
        assert [f for f, _ in got] == [f for f, _ in want["fields"]], \
            "%s: fields %s, C has %s" % (name, [f for f, _ in got], [f for f, _ in want["fields"]])
        for (field, off), (_, c_off) in zip(got, want["fields"]):
            assert off == c_off, "%s.%s at offset %d, C's at %d" % (name, field, off, c_off)
        assert _lib.ctypes.sizeof(cls) == want["size"], \
            "%s: %d bytes, C's %d" % (name, _lib.ctypes.sizeof(cls), want["size"])
    mirrored = {cls._c_name_ for cls in classes}
    assert mirrored == set(c), "C structs without a mirror: %s" % sorted(set(c) - mirrored)
