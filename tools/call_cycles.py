#!/usr/bin/env python3
"""call_cycles.py — no circle between the library's source files.

Reads every src/**/*.c, finds the non-static at_*/attend_* functions each one
defines, and draws an edge A -> B when A calls a function defined in B. Prints
every strongly connected group of more than one file (a circle), with the
calls that close it, and exits 1 if there is any; 0 otherwise. A textual
check (comments stripped, macros not expanded), which is what the layering
rule needs: docs/ARCHITECTURE.md, "Where things are".

    /usr/bin/python3 tools/call_cycles.py [SRC_DIR]   (default: src beside tools/)
"""
import glob
import os
import re
import sys


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    files = sorted(glob.glob(os.path.join(root, "**", "*.c"), recursive=True))
    defs, text = {}, {}
    for f in files:
        s = re.sub(r"/\*.*?\*/", "", open(f, encoding="utf-8").read(), flags=re.S)
        s = re.sub(r"//[^\n]*", "", s)
        text[f] = s
        for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*?\b((?:at|attend)_\w+)\s*\([^;{]*\)\s*\{", s, flags=re.M):
            defs.setdefault(m.group(1), f)
    calls = {f: {} for f in files}
    for f, s in text.items():
        for name in set(re.findall(r"\b((?:at|attend)_\w+)\s*\(", s)):
            d = defs.get(name)
            if d and d != f:
                calls[f].setdefault(d, []).append(name)
    # Tarjan's strongly connected components, iteratively
    index, low, on, stack, groups, n = {}, {}, set(), [], [], [0]
    for v0 in files:
        if v0 in index:
            continue
        work = [(v0, iter(calls[v0]))]
        index[v0] = low[v0] = n[0]; n[0] += 1; stack.append(v0); on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(calls[w])))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                g = []
                while True:
                    w = stack.pop(); on.discard(w); g.append(w)
                    if w == v:
                        break
                if len(g) > 1:
                    groups.append(sorted(g))
    rel = lambda p: os.path.relpath(p, os.path.join(root, ".."))
    for g in groups:
        print("circle: " + ", ".join(rel(f) for f in g))
        for a in g:
            for b in g:
                if b in calls[a]:
                    print("  %s -> %s (%s)" % (rel(a), rel(b), ", ".join(sorted(set(calls[a][b]))[:4])))
    edges = sum(len(c) for c in calls.values())
    print("%d source files, %d file-to-file call edges, %d circles" % (len(files), edges, len(groups)))
    return 1 if groups else 0


if __name__ == "__main__":
    sys.exit(main())
