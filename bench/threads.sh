#!/usr/bin/env bash
# Are the library's default threads a good default? Times attend_bench (the
# library called from a C program: training L=20, greedy batch 1 and 256) and
# `attend g2p bench` (batch 64, words per wall second) in the default
# environment (ATTEND_NUM_THREADS / OMP_NUM_THREADS unset: the library's
# automatic count, every CPU of the process) against one thread
# (ATTEND_NUM_THREADS=1), first on the idle machine, then with a busy loop
# pinned to the last core (another process keeping one core busy). The goal
# (issue 25): with the core busy, the default takes at most 1.3x the time of
# one thread. Prints one Markdown table; raw lines in
# build-bench/results/threads.jsonl.
# Usage: bash bench/threads.sh [REPS]   (builds build-bench/ as bench/run.sh does)
set -eu
cd "$(dirname "$0")/.."
reps=${1:-3}
dir=build-bench
cmake -S . -B "$dir" -DATTEND_BLAS=OFF -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$dir" -j"$(nproc 2>/dev/null || echo 2)" --target attend_bench attend_cli >/dev/null
B=$dir/tests/attend_bench
CLI=$dir/attend
DICT=data/g2p/cmudict-sample.dict
cores=$(nproc)
out=$dir/results/threads.jsonl
mkdir -p "$(dirname "$out")"
: >"$out"

# run LOAD CASE SETTING: one measurement (SETTING default or 1), one JSON line appended
run() {
  local load=$1 case=$2 set=$3 line
  local -a env=(env -u ATTEND_NUM_THREADS -u OMP_NUM_THREADS)
  [ "$set" = default ] || env+=(ATTEND_NUM_THREADS="$set")
  case $case in
    train) line=$("${env[@]}" $B train --len 20 --steps 10 --warmup 2 | tail -1) ;;
    greedy1) line=$("${env[@]}" $B greedy --batch 1 --iters 50 --warmup 5 | tail -1) ;;
    greedy256) line=$("${env[@]}" $B greedy --batch 256 --iters 5 --warmup 1 | tail -1) ;;
    g2p) # batch 64 words/s (wall) of `attend g2p bench`
      local w
      w=$("${env[@]}" $CLI g2p bench --dict $DICT | sed -n 's/^batch 64.*: \([0-9.]*\) words\/s,.*/\1/p')
      line="{\"bench\":\"g2p_batch64\",\"words_per_s\":$w}" ;;
  esac
  echo "{\"load\":\"$load\",\"case\":\"$case\",\"setting\":\"$set\",\"result\":$line}" >>"$out"
}

measure() {
  local load=$1
  for r in $(seq "$reps"); do
    for c in train greedy1 greedy256 g2p; do
      if [ $((r % 2)) = 1 ]; then run "$load" $c default; run "$load" $c 1
      else run "$load" $c 1; run "$load" $c default; fi
    done
    echo "threads.sh: $load, repetition $r done" >&2
  done
}

echo "threads.sh: idle machine (load $(cut -d' ' -f1 /proc/loadavg)), $cores cores" >&2
measure idle
taskset -c $((cores - 1)) sh -c 'while :; do :; done' &
hog=$!
trap 'kill $hog 2>/dev/null' EXIT
sleep 1
echo "threads.sh: core $((cores - 1)) busy (pid $hog)" >&2
measure busy
kill $hog
trap - EXIT

/usr/bin/python3 - "$out" "$cores" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
cores = int(sys.argv[2])
# (json key, label, higher is better)
key = {"train": ("samples_per_s", "library training L=20 (samples/s)", True),
       "greedy1": ("latency_ms", "library greedy batch 1 (ms)", False),
       "greedy256": ("seqs_per_s", "library greedy batch 256 (seqs/s)", True),
       "g2p": ("words_per_s", "attend g2p bench batch 64 (words/s)", True)}
print("| measurement | machine | 1 thread | default (%d threads) | default's time / 1 thread's |" % cores)
print("|---|---|---|---|---|")
for load in ("idle", "busy"):
    for c, (k, label, higher) in key.items():
        med = {}
        for s in ("1", "default"):
            v = [r["result"][k] for r in rows if r["load"] == load and r["case"] == c and r["setting"] == s]
            med[s] = statistics.median(v) if v else None
        if med["1"] and med["default"]:
            ratio = med["1"] / med["default"] if higher else med["default"] / med["1"]
            cell = "%.2fx" % ratio
        else:
            cell = "—"
        print("| %s | %s | %s | %s | %s |" % (label, "idle" if load == "idle" else "last core busy",
                                            "%.4g" % med["1"] if med["1"] else "—",
                                            "%.4g" % med["default"] if med["default"] else "—", cell))
EOF
