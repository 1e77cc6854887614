#!/usr/bin/env bash
# The `attend` commands of issue 25's first table, two builds side by side:
# OLD (e.g. 7bd037c's default build: OpenBLAS + OpenMP) and NEW (today's
# default build), one thread (--threads 1), wall seconds, medians of REPS runs
# alternating OLD and NEW. OLD runs twice per repetition: with
# OPENBLAS_CORETYPE=Prescott (what a CPU newer than Debian's OpenBLAS gets: its
# generic kernels) and with OpenBLAS's own choice for this CPU. NEW runs with
# OPENBLAS_CORETYPE=Prescott set too (the own GEMM ignores it; an OpenBLAS
# build would refuse generic kernels). Prints one Markdown table.
#
#   bash bench/cli_ab.sh OLD/attend NEW/attend [REPS]
#
# CASES="train decode" runs only those rows.
# Needs the full CMUdict in data/g2p (sh tools/get_cmudict.sh) and the shipped
# default G2P model (models/g2p-cmudict.safetensors) for the g2p rows.
set -eu
cd "$(dirname "$0")/.."
old=$(realpath "$1") new=$(realpath "$2") reps=${3:-3}
dict=data/g2p/cmudict-en-us.dict
model=models/g2p-cmudict.safetensors
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
unset ATTEND_NUM_THREADS OMP_NUM_THREADS ATTEND_ISA OPENBLAS_NUM_THREADS ATTEND_GEMM

# 2 560 reversal sources, lengths 10-20 over a-j (seeded: the same every run)
/usr/bin/python3 - "$tmp/src.txt" <<'EOF'
import random, sys
r = random.Random(25)
with open(sys.argv[1], "w") as f:
    for _ in range(2560):
        f.write("".join(r.choice("abcdefghij") for _ in range(r.randint(10, 20))) + "\n")
EOF

# seconds CMD...: wall time of one run (output discarded; a failure stops the script)
seconds() {
  local t0 t1
  t0=$(date +%s%N)
  "$@" >"$tmp/out" 2>"$tmp/err" || { echo "failed: $*" >&2; cat "$tmp/err" >&2; exit 1; }
  t1=$(date +%s%N)
  printf '%d.%09d\n' $(((t1 - t0) / 1000000000)) $(((t1 - t0) % 1000000000))
}

# one SIDE CORETYPE CASE: prints "SIDE CASE value" (seconds, or words/s for g2p_bench)
one() {
  local side=$1 core=$2 case=$3 bin
  bin=$([ "${side%%-*}" = old ] && echo "$old" || echo "$new")
  local -a env=(env)
  [ -n "$core" ] && env+=(OPENBLAS_CORETYPE="$core")
  case $case in
    train) rm -f "$tmp/m_$side.safetensors"
      echo "$side $case $(seconds "${env[@]}" "$bin" --threads 1 train --task reverse --min-len 10 --max-len 20 \
        --hidden 128 --steps 60 --out "$tmp/m_$side.safetensors")" ;;
    decode) echo "$side $case $(seconds "${env[@]}" "$bin" --threads 1 decode "$tmp/m_$side.safetensors" \
        "$tmp/src.txt" --batch 256)" ;;
    g2p_eval) echo "$side $case $(seconds "${env[@]}" "$bin" --threads 1 g2p eval --model $model --dict $dict)" ;;
    g2p_bench) "${env[@]}" "$bin" --threads 1 g2p bench --model $model --dict $dict --words 1000 >"$tmp/b" 2>&1
      echo "$side $case $(sed -n 's/^batch 64.* \([0-9.][0-9.]*\) words per CPU-second.*/\1/p' "$tmp/b")" ;;
  esac
}

sides=("old-prescott Prescott" "old-native " "new Prescott")
: >"$tmp/raw"
for ((r = 0; r < reps; r++)); do
  for case in ${CASES:-train decode g2p_eval g2p_bench}; do
    for s in "${sides[@]}"; do
      read -r side core <<<"$s"
      one "$side" "${core:-}" "$case" | tee -a "$tmp/raw" >&2
    done
  done
  echo "repetition $((r + 1)) of $reps done ($(date -u +%H:%M:%S), load $(cut -d' ' -f1 /proc/loadavg))" >&2
done

/usr/bin/python3 - "$tmp/raw" <<'EOF'
import statistics, sys
v = {}
for line in open(sys.argv[1]):
    side, case, x = line.split()
    v.setdefault((case, side), []).append(float(x))
names = {"train": "train --task reverse, 60 steps, L 10-20, hidden 128 (s)",
         "decode": "decode 2 560 sources, batch 256 (s)",
         "g2p_eval": "g2p eval, default model, test split (s)",
         "g2p_bench": "g2p bench, batch 64 (words per CPU-second)"}
print("| one thread | old, OPENBLAS_CORETYPE=Prescott | old, OpenBLAS's own kernels | new, default | new vs old Prescott | new vs old own kernels |")
print("|---|---|---|---|---|---|")
for case, name in names.items():
    if (case, "new") not in v:
        continue
    m = {s: statistics.median(v[(case, s)]) for s in ("old-prescott", "old-native", "new")}
    f = (lambda a, b: b / a) if case == "g2p_bench" else (lambda a, b: a / b)  # > 1: new is faster
    print("| %s | %.3g | %.3g | %.3g | %.2f× | %.2f× |" % (name, m["old-prescott"], m["old-native"], m["new"],
                                                        f(m["old-prescott"], m["new"]), f(m["old-native"], m["new"])))
EOF
