#!/usr/bin/env python3
"""call_cycles.py — no circle between the rooms of the library or the command.

A room is a .c file together with the header it owns (X.c owns X.h and
X_internal.h beside it: model.c and model.h are one room); a header no .c
owns is a room of its own. An edge runs from room A to room B when a file of
A calls a function defined (not static) in B, or includes a header of B. A
header's calls are those in the bodies of its inline functions (its
declarations call nothing); a macro's calls count where it is used. The
script reads every *.c and *.h under each tree given, draws the edges, and
prints every strongly connected group of more than one room (a circle) with
the calls and includes that close it; it exits 1 if there is any, 0 otherwise.
A textual check (comments stripped, macros not expanded), which is what the
layering rule needs: docs/ARCHITECTURE.md, "Where things are".

    /usr/bin/python3 tools/call_cycles.py [DIR...]   (default: src and cli beside tools/)

Each DIR is its own graph (the command is a program over the library, which
it reaches through the public header only).
"""
import glob
import os
import re
import sys


def strip_comments(s):
    s = re.sub(r"/\*.*?\*/", "", s, flags=re.S)
    return re.sub(r"//[^\n]*", "", s)


def room_of(path, cfiles):
    """The room of a file: a .c is its own; X.h / X_internal.h belong to X.c beside them when it exists."""
    if path.endswith(".c"):
        return path
    d, base = os.path.split(path)
    stem = base[:-2]
    for cand in (stem, stem[:-len("_internal")] if stem.endswith("_internal") else None):
        if cand and os.path.join(d, cand + ".c") in cfiles:
            return os.path.join(d, cand + ".c")
    return path


MACRO = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)(\([^)]*\))?((?:[^\n]*\\\n)*[^\n]*)", re.M)
CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


def bodies(s):
    """The text of the function bodies in s: each {...} that follows a ')' at the top level."""
    out, depth, start = [], 0, None
    for i, c in enumerate(s):
        if c == "{":
            if depth == 0 and re.search(r"\)\s*$", s[max(0, i - 200):i]):
                start = i
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and start is not None:
                out.append(s[start:i + 1])
                start = None
    return "\n".join(out)


def graph(root):
    files = sorted(glob.glob(os.path.join(root, "**", "*.c"), recursive=True) +
                   glob.glob(os.path.join(root, "**", "*.h"), recursive=True))
    cfiles = {f for f in files if f.endswith(".c")}
    fileset = set(files)
    text, defs, macros = {}, {}, {}
    for f in files:
        s = strip_comments(open(f, encoding="utf-8").read())
        for m in MACRO.finditer(s):
            macros.setdefault(m.group(1), set()).update(CALL.findall(m.group(3)))
        s = MACRO.sub("", s)
        text[f] = s
        if f.endswith(".c"):
            for m in re.finditer(r"^(?!static\b)[A-Za-z_][\w \*]*?\b([A-Za-z_]\w*)\s*\([^;{]*\)\s*\{", s, flags=re.M):
                defs.setdefault(m.group(1), f)

    def calls_of(f):
        s = text[f] if f.endswith(".c") else bodies(text[f])
        names, todo = set(), set(CALL.findall(s)) | {w for w in re.findall(r"\b[A-Za-z_]\w*\b", s) if w in macros}
        while todo:  # a macro's calls where it is used
            n = todo.pop()
            if n in names:
                continue
            names.add(n)
            todo |= macros.get(n, set())
        return names

    rooms = sorted({room_of(f, cfiles) for f in files})
    edges = {r: {} for r in rooms}  # room -> room -> [what]
    for f in files:
        a = room_of(f, cfiles)
        for name in calls_of(f):
            d = defs.get(name)
            if d and room_of(d, cfiles) != a:
                edges[a].setdefault(room_of(d, cfiles), []).append("calls " + name)
        for inc in re.findall(r'^\s*#\s*include\s*"([^"]+)"', text[f], flags=re.M):
            for base in (os.path.dirname(f), root, os.path.dirname(root)):
                h = os.path.normpath(os.path.join(base, inc))
                if h in fileset:
                    b = room_of(h, cfiles)
                    if b != a:
                        edges[a].setdefault(b, []).append("includes " + inc)
                    break
    return rooms, edges


def circles(rooms, edges):
    """Tarjan's strongly connected components, iteratively: the groups of more than one room."""
    index, low, on, stack, groups, n = {}, {}, set(), [], [], [0]
    for v0 in rooms:
        if v0 in index:
            continue
        work = [(v0, iter(edges[v0]))]
        index[v0] = low[v0] = n[0]; n[0] += 1; stack.append(v0); on.add(v0)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = n[0]; n[0] += 1; stack.append(w); on.add(w)
                    work.append((w, iter(edges[w])))
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
    return groups


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    roots = sys.argv[1:] or [os.path.join(here, "..", "src"), os.path.join(here, "..", "cli")]
    total = 0
    for root in roots:
        root = os.path.normpath(root)
        rooms, edges = graph(root)
        groups = circles(rooms, edges)
        rel = lambda p: os.path.relpath(p, os.path.dirname(root))
        for g in groups:
            print("circle: " + ", ".join(rel(r) for r in g))
            for a in g:
                for b in g:
                    if b in edges[a]:
                        print("  %s -> %s (%s)" % (rel(a), rel(b), ", ".join(sorted(set(edges[a][b]))[:4])))
        nedges = sum(len(e) for e in edges.values())
        print("%s: %d rooms, %d room-to-room edges (calls and includes), %d circles" %
              (rel(root), len(rooms), nedges, len(groups)))
        total += len(groups)
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
