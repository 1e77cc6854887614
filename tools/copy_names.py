#!/usr/bin/python3
"""copy_names.py — the copy mechanism on names never seen in training
(docs/RESULTS.md, "Copy"): trains the same model with and without --copy on
data/names/train.tsv (tools/make_names_data.py) for the same steps, decodes
data/names/test.tsv (every name unseen) greedily and reports the accuracy on
the name tokens (target tokens no training target holds) and on whole
sequences, then draws one alignment of the copy model.

    /usr/bin/python3 tools/copy_names.py [--attend build/attend] [--steps 1000] [--out DIR]

Only the standard library; runs the attend command.
"""
import argparse
import os
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def read_tsv(path):
    with open(path) as f:
        return [line.rstrip("\n").split("\t") for line in f if line.strip()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--attend", default=os.path.join(ROOT, "build", "attend"))
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--out", default="/tmp/attend-copy-names")
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "results", "copy-names.svg"))
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    data = os.path.join(ROOT, "data", "names")
    train, test = read_tsv(os.path.join(data, "train.tsv")), read_tsv(os.path.join(data, "test.tsv"))
    seen = {w for _, t in train for w in t.split()}
    env = dict(os.environ, ATTEND_THREADS="1", OPENBLAS_NUM_THREADS="1")
    rows = []
    for name, extra in (("without --copy", []), ("with --copy", ["--copy"])):
        model = os.path.join(a.out, "copy.safetensors" if extra else "plain.safetensors")
        cmd = [a.attend, "train", "--train", os.path.join(data, "train.tsv"), "--dev", os.path.join(data, "dev.tsv"),
               "--tokenizer", "space", "--steps", str(a.steps), "--batch", "32", "--emb", "32", "--hidden", "64",
               "--seed", "1", "--out", model, "--eval-every", "0", "--log-every", str(a.steps)] + extra
        log = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
        vocab = [l for l in log.splitlines() if l.startswith("data:")][0]
        src = "\n".join(s for s, _ in test) + "\n"
        out = subprocess.run([a.attend, "decode", model], input=src, env=env, check=True, capture_output=True,
                             text=True).stdout.splitlines()
        names_ok = names = seqs_ok = 0
        for (_, t), o in zip(test, out):
            want, got = t.split(), o.split()
            seqs_ok += want == got
            for k, w in enumerate(want):
                if w in seen:
                    continue
                names += 1
                names_ok += k < len(got) and got[k] == w
        rows.append((name, names_ok, names, seqs_ok, len(test), vocab.split(", ")[0].split("vocabularies of ")[-1]
                     if "vocabularies of" in vocab else vocab))
        print("%s: names %d/%d (%.1f%%), sequences %d/%d (%.1f%%); %s" % (
            name, names_ok, names, 100.0 * names_ok / names, seqs_ok, len(test), 100.0 * seqs_ok / len(test), vocab))
    print()
    print("| model | name tokens right | whole outputs right |")
    print("|---|---|---|")
    for name, nok, n, sok, s, _ in rows:
        print("| %s | %d / %d (%.1f%%) | %d / %d (%.1f%%) |" % (name, nok, n, 100.0 * nok / n, sok, s, 100.0 * sok / s))
    text = test[0][0]
    subprocess.run([a.attend, "align", os.path.join(a.out, "copy.safetensors"), text, "--svg", a.svg], env=env,
                   check=True)
    print("alignment of \"%s\": %s" % (text, os.path.relpath(a.svg, ROOT)))


if __name__ == "__main__":
    main()
