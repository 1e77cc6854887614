#!/usr/bin/env python3
"""scaling_model.py — the step-time model of docs/SCALING.md (issue 16).

Data-parallel step time on P ranks for a global batch B:

    T(P) = (B/P) * t_s + T_comm(P)

t_s: measured compute seconds per sample on one core (bench/mpi_scaling.sh:
1 / the plain run's training samples/s). T_comm for G gradient bytes over links
of bw bytes/s with a per-message latency alpha:

    ring allreduce                      2 (P-1)/P * G/bw + 2 (P-1) alpha

which is also the shipped exchange's cost (cli/mpirun.c, --grad-shards = P: one
tree node per rank; MPI_Alltoallv of 1/P chunks, then MPI_Allgatherv of the
reduced chunks: each rank sends and receives 2 (P-1)/P G in 2 (P-1) messages).

Efficiency E(P) = T(1) / (P T(P)), T(1) = B t_s (one rank exchanges nothing).

    python3 tools/scaling_model.py --samples-per-s 1200 [--params 751403]
Prints markdown tables: E for batch x ranks at 10 and 25 Gbit/s, and per batch
the largest power-of-two rank count with E >= 0.9.
"""
import argparse


def t_comm(P, G, bw, alpha):
    if P == 1:
        return 0.0
    return 2 * (P - 1) / P * G / bw + 2 * (P - 1) * alpha


def eff(B, P, ts, G, bw, alpha):
    if B % P:
        return None
    return B * ts / (P * (B / P * ts + t_comm(P, G, bw, alpha)))


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
        print(f"### {gbit} Gbit/s: efficiency E(P) (step time in ms at B=64 and B=512 below)\n")
        print("| batch B | " + " | ".join(f"P={P}" for P in ranks) + " | largest P with E >= 0.9 |")
        print("|---" * (len(ranks) + 2) + "|")
        for B in batches:
            cells, best = [], 1
            for P in ranks:
                e = eff(B, P, ts, G, bw, alpha)
                cells.append("-" if e is None else f"{e:.2f}")
                if e is not None and e >= 0.9:
                    best = P
            print(f"| {B} | " + " | ".join(cells) + f" | {best} |")
        for B in (64, 512):
            print(f"| T(P) ms, B={B} | " + " | ".join(
                f"{1e3 * (B / P * ts + t_comm(P, G, bw, alpha)):.1f}" for P in ranks) + " | |")
        print()
    print("### per-rank batch b = B/P below which E < 0.9 (E = 1 / (1 + T_comm / (b t_s)))\n")
    print("| link | P=2 | P=8 | P=64 |")
    print("|---|---|---|---|")
    for gbit in (10, 25):
        bw = gbit * 1e9 / 8
        print(f"| {gbit} Gbit/s | " + " | ".join(f"{9 * t_comm(P, G, bw, alpha) / ts:.0f}" for P in (2, 8, 64)) + " |")
    print(f"\nT_comm per step: " + ", ".join(
        f"{gbit} Gbit/s P=2 {1e3 * t_comm(2, G, gbit * 1e9 / 8, alpha):.2f} ms, P=64 "
        f"{1e3 * t_comm(64, G, gbit * 1e9 / 8, alpha):.2f} ms" for gbit in (10, 25)))


if __name__ == "__main__":
    main()
