#!/usr/bin/env python3
"""scaling_model.py — the step-time model of docs/SCALING.md (issue 16).

Data-parallel step time on P ranks for a global batch B:

    T(P) = (B/P) * t_s + T_comm(P)

t_s: measured compute seconds per sample on one core (bench/mpi_scaling.sh:
1 / the plain run's training samples/s). T_comm for G gradient bytes over links
of bw bytes/s with a per-message latency alpha:

    ring allreduce (bandwidth-optimal)  2 (P-1)/P * G/bw + 2 (P-1) alpha
    shipped exchange (ring allgather of one tree node per rank, --grad-shards = P)
                                        (P-1) * G/bw + (P-1) alpha

Efficiency E(P) = T(1) / (P T(P)), T(1) = B t_s (one rank exchanges nothing).

    python3 tools/scaling_model.py --samples-per-s 1200 [--params 751403]
Prints markdown tables: E for batch x ranks at 10 and 25 Gbit/s, and per batch
the largest power-of-two rank count with E >= 0.9.
"""
import argparse


def t_comm(kind, P, G, bw, alpha):
    if P == 1:
        return 0.0
    if kind == "ring":
        return 2 * (P - 1) / P * G / bw + 2 * (P - 1) * alpha
    return (P - 1) * G / bw + (P - 1) * alpha


def eff(kind, B, P, ts, G, bw, alpha):
    if B % P:
        return None
    return B * ts / (P * (B / P * ts + t_comm(kind, P, G, bw, alpha)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--samples-per-s", type=float, required=True, help="measured, one core, plain run")
    ap.add_argument("--params", type=int, default=751403, help="the G2P recipe's parameters")
    ap.add_argument("--alpha-us", type=float, default=25.0, help="per-message latency (TCP over Ethernet)")
    a = ap.parse_args()
    ts = 1.0 / a.samples_per_s
    G = 4 * (a.params + 6)  # float32 gradient + 6 statistics per tree node
    alpha = a.alpha_us * 1e-6
    ranks = [1, 2, 4, 8, 16, 32, 64]
    batches = [64, 128, 256, 512, 1024, 2048]
    print(f"t_s = {ts * 1e3:.3f} ms/sample, G = {G} bytes, alpha = {a.alpha_us:g} us\n")
    for gbit in (10, 25):
        bw = gbit * 1e9 / 8
        for kind, name in (("ring", "ring allreduce"), ("gather", "shipped allgather")):
            print(f"### {gbit} Gbit/s, {name}: efficiency E(P)\n")
            print("| batch B | " + " | ".join(f"P={P}" for P in ranks) + " | largest P with E >= 0.9 |")
            print("|---" * (len(ranks) + 2) + "|")
            for B in batches:
                cells, best = [], 1
                for P in ranks:
                    e = eff(kind, B, P, ts, G, bw, alpha)
                    cells.append("-" if e is None else f"{e:.2f}")
                    if e is not None and e >= 0.9:
                        best = P
                print(f"| {B} | " + " | ".join(cells) + f" | {best} |")
            print()
    # per-rank batch below which E < 0.9 at large P (T_comm -> its P-limit)
    print("### per-rank batch b = B/P below which E < 0.9 (E = 1 / (1 + T_comm / (b t_s)))\n")
    print("| link | P | ring allreduce: b_min | shipped allgather: b_min |")
    print("|---|---|---|---|")
    for gbit in (10, 25):
        bw = gbit * 1e9 / 8
        for P in (2, 8, 64):
            r = 9 * t_comm("ring", P, G, bw, alpha) / ts
            g = 9 * t_comm("gather", P, G, bw, alpha) / ts
            print(f"| {gbit} Gbit/s | {P} | {r:.0f} | {g:.0f} |")


if __name__ == "__main__":
    main()
