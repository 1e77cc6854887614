#!/usr/bin/python3
"""Reads `attend decode|g2p --align --format jsonl` output on stdin and prints
how many outputs have an alignment that never moves left: the attended
position of each output step (the argmax of its weights; a row of zeros, as
hard monotonic attention gives once it has read past the end, counts as the
position after the last) is never smaller than the step before's. Also counts
the outputs whose every row is hard (one weight 1 or all 0).

    attend decode MODEL --align --format jsonl < sources | tools/monotonic_share.py

Prints one line: outputs N, never-left K (P%), hard H; with --diagonal also
how many output steps t attend to source position t (the copy task's
alignment). Used by tools/monotonic_demo.sh (docs/RESULTS.md, monotonic
attention).
"""
import json
import sys


def main():
    diagonal = "--diagonal" in sys.argv[1:]
    n = left_ok = hard = steps = on_diag = 0
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        obj = json.loads(line)
        for hyp in obj.get("hypotheses", [obj]):
            rows = hyp.get("alignment")
            if rows is None:
                continue
            n += 1
            prev, ok, all_hard = -1, True, True
            for t, row in enumerate(rows):
                S = len(row)
                if max(row) <= 0:
                    at = S
                else:
                    at = max(range(S), key=lambda j: (row[j], -j))
                steps += 1
                on_diag += at == t
                if at < prev:
                    ok = False
                prev = at
                all_hard &= all(w in (0, 1) for w in row) and sum(row) <= 1
            left_ok += ok
            hard += all_hard
    pct = 100.0 * left_ok / n if n else float("nan")
    line = "outputs %d, never-left %d (%.2f%%), hard %d" % (n, left_ok, pct, hard)
    if diagonal:
        line += ", steps %d, on the diagonal %d (%.1f%%)" % (steps, on_diag, 100.0 * on_diag / steps if steps else 0)
    print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
