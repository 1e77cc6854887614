#!/usr/bin/python3
"""make_names_data.py — the word-level task with unseen names of the copy
mechanism's results (docs/RESULTS.md, "Copy"): template commands whose names
in the test file never occur in the training file.

    /usr/bin/python3 tools/make_names_data.py

writes data/names/train.tsv (4000 pairs), data/names/dev.tsv (200 pairs,
training names) and data/names/test.tsv (400 pairs, names never seen in
training), space-tokenized, e.g.
    call zorbu at noon          CALL zorbu noon
    greet kelvo                 hello kelvo
    tell mira and tosk hi       hello mira hello tosk
Names are syllable strings from a fixed seed; the 600 names are split 450
training / 150 test. Deterministic: running it twice writes identical files.
"""
import os
import random

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "names"))
SEED = 20261201
ONSETS = ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "ch", "sh", "tr", "br"]
VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]
CODAS = ["", "", "n", "r", "l", "s", "k", "m"]
TIMES = ["noon", "midnight", "9am", "10am", "11am", "2pm", "3pm", "5pm", "dawn", "dusk"]
TOPICS = ["lunch", "the report", "the budget", "dinner", "the trip", "the meeting", "taxes", "the game"]
TEMPLATES = [
    ("call {a} at {t}", "CALL {a} {t}"),
    ("greet {a}", "hello {a}"),
    ("email {a} about {p}", "EMAIL {a} {p}"),
    ("remind {a} about {p} at {t}", "REMIND {a} {p} {t}"),
    ("tell {a} and {b} hi", "hello {a} hello {b}"),
    ("ask {a} to call {b}", "ASK {a} CALL {b}"),
]


def names(rng, n):
    out = set()
    while len(out) < n:
        k = rng.choice([2, 2, 3])
        out.add("".join(rng.choice(ONSETS) + rng.choice(VOWELS) for _ in range(k - 1))
                + rng.choice(ONSETS) + rng.choice(VOWELS) + rng.choice(CODAS))
    return sorted(out)


def pairs(rng, pool, n):
    rows = []
    for _ in range(n):
        src, tgt = rng.choice(TEMPLATES)
        a, b = rng.sample(pool, 2)
        v = dict(a=a, b=b, t=rng.choice(TIMES), p=rng.choice(TOPICS))
        rows.append((src.format(**v), tgt.format(**v)))
    return rows


def write(name, rows):
    path = os.path.join(OUT, name)
    with open(path, "w") as f:
        for s, t in rows:
            f.write("%s\t%s\n" % (s, t))
    print("wrote %s (%d pairs)" % (os.path.relpath(path), len(rows)))


def main():
    rng = random.Random(SEED)
    all_names = names(rng, 600)
    rng.shuffle(all_names)
    train_names, test_names = all_names[:450], all_names[450:]
    os.makedirs(OUT, exist_ok=True)
    write("train.tsv", pairs(rng, train_names, 4000))
    write("dev.tsv", pairs(rng, train_names, 200))
    write("test.tsv", pairs(rng, test_names, 400))


if __name__ == "__main__":
    main()
