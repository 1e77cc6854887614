#!/usr/bin/env bash
# Should the `attend` command use threads by default? Times attend_bench
# (training L=20, greedy batch 1 and 256) and `attend g2p bench` at 1 thread,
# 2 threads with libgomp's default (active: spin at the end of every parallel
# loop) and 2 threads with OMP_WAIT_POLICY=passive (sleep; what `attend`
# sets for itself), first on the idle machine, then with a busy loop pinned
# to the last core (another process keeping one core busy). Prints one
# Markdown table; raw lines in build-bench/results/threads.jsonl.
# Usage: bash bench/threads.sh [REPS]   (after bench/run.sh built build-bench/)
set -eu
cd "$(dirname "$0")/.."
reps=${1:-3}
B=build-bench/tests/attend_bench
CLI=build-bench/attend
DICT=data/g2p/cmudict-sample.dict
[ -x "$B" ] && [ -x "$CLI" ] || { echo "build build-bench first (bash bench/run.sh, or cmake --build build-bench)" >&2; exit 1; }
cores=$(nproc)
out=build-bench/results/threads.jsonl
mkdir -p "$(dirname "$out")"
: >"$out"

# run LOAD CASE THREADS POLICY: one measurement, one JSON line appended
run() {
  local load=$1 case=$2 t=$3 pol=$4 line
  case $case in
    train) line=$(OMP_NUM_THREADS=$t OMP_WAIT_POLICY=$pol OPENBLAS_NUM_THREADS=1 $B train --len 20 --steps 10 --warmup 2 | tail -1) ;;
    greedy1) line=$(OMP_NUM_THREADS=$t OMP_WAIT_POLICY=$pol OPENBLAS_NUM_THREADS=1 $B greedy --batch 1 --iters 50 --warmup 5 | tail -1) ;;
    greedy256) line=$(OMP_NUM_THREADS=$t OMP_WAIT_POLICY=$pol OPENBLAS_NUM_THREADS=1 $B greedy --batch 256 --iters 5 --warmup 1 | tail -1) ;;
    g2p) # batch 64 words/s (wall) of `attend g2p bench`
      local w
      w=$(OMP_WAIT_POLICY=$pol OPENBLAS_NUM_THREADS=1 $CLI g2p bench --threads "$t" --dict $DICT | sed -n 's/^batch 64.*: \([0-9.]*\) words\/s,.*/\1/p')
      line="{\"bench\":\"g2p_batch64\",\"words_per_s\":$w}" ;;
  esac
  echo "{\"load\":\"$load\",\"case\":\"$case\",\"threads\":$t,\"policy\":\"$pol\",\"result\":$line}" >>"$out"
}

measure() {
  local load=$1
  for r in $(seq "$reps"); do
    for c in train greedy1 greedy256 g2p; do
      run "$load" $c 1 active
      run "$load" $c 2 active
      run "$load" $c 2 passive
    done
    echo "threads.sh: $load, repetition $r done" >&2
  done
}

echo "threads.sh: idle machine (load $(cut -d' ' -f1 /proc/loadavg))" >&2
measure idle
taskset -c $((cores - 1)) sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
sleep 1
echo "threads.sh: core $((cores - 1)) busy (pid $hog)" >&2
measure busy
kill $hog
trap - EXIT

/usr/bin/python3 - "$out" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
key = {"train": ("samples_per_s", "train L=20 (samples/s)"), "greedy1": ("latency_ms", "greedy batch 1 (ms)"),
       "greedy256": ("seqs_per_s", "greedy batch 256 (seqs/s)"), "g2p": ("words_per_s", "g2p bench batch 64 (words/s)")}
print("| measurement | machine | 1 thread | 2 threads, active wait | 2 threads, passive wait |")
print("|---|---|---|---|---|")
for load in ("idle", "busy"):
    for c, (k, label) in key.items():
        cells = []
        for t, p in ((1, "active"), (2, "active"), (2, "passive")):
            v = [r["result"][k] for r in rows if r["load"] == load and r["case"] == c and r["threads"] == t
                 and r["policy"] == p]
            cells.append("%.4g" % statistics.median(v) if v else "—")
        print("| %s | %s | %s |" % (label, "idle" if load == "idle" else "last core busy", " | ".join(cells)))
EOF
