#!/usr/bin/env python3
"""core_names.py — the model's core files name no mechanism (issue 26).

Coverage, copy, monotonic attention, the sparse normalisers, guided
alignment, dropout, label smoothing and scheduled sampling are extensions
(src/seq2seq/extensions/, one interface: src/seq2seq/extension.h). The files
that run every model — model.c, encoder.c, decode.c, beam.c, train.c and
io/model_io.c — reach them only through that interface, so they name none of
them: this script strips comments and string literals, reads every
identifier, and fails naming the file, line, identifier and mechanism of each
one that matches a mechanism's names below. Comments may still explain what
an extension does; code may not branch on it.

    /usr/bin/python3 tools/core_names.py [SRC_DIR] [FILE...]

SRC_DIR defaults to src beside tools/; FILE... replaces the core files
(relative to SRC_DIR or absolute), which the test uses to check that a file
that does name one fails.
"""
import os
import re
import sys

CORE = ["seq2seq/model.c", "seq2seq/encoder.c", "seq2seq/decode.c", "seq2seq/beam.c", "seq2seq/train.c",
        "io/model_io.c"]

# mechanism: a regular expression over one identifier (case-insensitive)
MECHANISMS = {
    "coverage": r"cov",
    "copy": r"copy",
    "monotonic attention": r"mono",
    "sparse normalisers": r"sparse|entmax|normalizer",
    "guided alignment": r"guide",
    "dropout": r"drop",
    "label smoothing": r"smooth|^ls$|_ls$|^ls_",
    "scheduled sampling": r"sampl|^ss$|^ss_|_ss_|_ss$",
}


def strip(text):
    """Comments and string/char literals replaced by spaces, newlines kept (so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", text[i:j + 1]))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def main():
    args = sys.argv[1:]
    root = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    files = args[1:] or CORE
    found = 0
    for f in files:
        path = f if os.path.isabs(f) else os.path.join(root, f)
        with open(path, encoding="utf-8") as fh:
            text = strip(fh.read())
        for lineno, line in enumerate(text.split("\n"), 1):
            for ident in re.findall(r"[A-Za-z_]\w*", line):
                for mech, rx in MECHANISMS.items():
                    if re.search(rx, ident, flags=re.I):
                        print("%s:%d: '%s' names %s" % (f, lineno, ident, mech))
                        found += 1
    print("%d core files, %d mechanism names" % (len(files), found))
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
