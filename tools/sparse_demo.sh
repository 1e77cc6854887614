#!/usr/bin/env bash
# sparse_demo.sh — softmax vs sparsemax vs entmax15 attention at equal budgets
# (docs/RESULTS.md, "Sparse normalisers"): the share of exactly-zero attention
# weights and the accuracy, on the reversal task and on CMUdict G2P.
#
#   bash tools/sparse_demo.sh [OUTDIR] [reverse|g2p|all]   (default: sparse-demo all)
#
# reverse: `attend train --task reverse` (Bahdanau decoder, additive scores,
#   10 symbols, lengths 5-12, 600 steps of 64 pairs, seed 1), the same options
#   for each normaliser; then tools/sparse_zeros.py on 500 held-out strings.
# g2p: `attend g2p train` with the default recipe's model but ONE epoch (1891
#   steps of 64 words, warm-up 200, cosine decay over the epoch), the same for
#   each normaliser, capped at --max-minutes 15 of training; then the zero
#   share on 1000 dev words. Needs the dictionary (sh tools/get_cmudict.sh).
# Every run uses one thread (ATTEND_THREADS=1, --threads 1) at nice 10; the
# three runs of a task run side by side. Needs the build in build/.
set -eu
cd "$(dirname "$0")/.."
out=${1:-sparse-demo}
what=${2:-all}
mkdir -p "$out"
export ATTEND_THREADS=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
export PYTHONPATH=build/python
norms=(softmax sparsemax entmax15)

if [ "$what" = reverse ] || [ "$what" = all ]; then
  for n in "${norms[@]}"; do
    nice -n 10 ./build/attend train --threads 1 --task reverse --symbols 10 --min-len 5 --max-len 12 \
      --steps 600 --warmup 50 --decay 550 --min-lr 1e-4 --normalizer "$n" \
      --out "$out/rev-$n.safetensors" >"$out/rev-$n.log" 2>&1 &
  done
  wait
  grep -H "^dev:\|^trained:" "$out"/rev-*.log
  /usr/bin/python3 tools/sparse_zeros.py reverse "$out"/rev-{softmax,sparsemax,entmax15}.safetensors \
    | tee "$out/rev-zeros.tsv"
  ./build/attend align "$out/rev-sparsemax.safetensors" abcdefghij --svg "$out/align-reverse-sparsemax.svg"
fi

if [ "$what" = g2p ] || [ "$what" = all ]; then
  dict=data/g2p/cmudict-en-us.dict
  [ -f "$dict" ] || { echo "sparse_demo.sh: $dict missing (sh tools/get_cmudict.sh)" >&2; exit 1; }
  for n in "${norms[@]}"; do
    nice -n 10 ./build/attend g2p train --threads 1 --dict "$dict" --epochs 1 --warmup 200 --max-minutes 15 \
      --log-every 200 --normalizer "$n" --overwrite --out "$out/g2p-$n.safetensors" >"$out/g2p-$n.log" 2>&1 &
  done
  wait
  grep -H "dev PER\|^trained:\|time limit" "$out"/g2p-*.log
  /usr/bin/python3 tools/sparse_zeros.py g2p "$dict" "$out"/g2p-{softmax,sparsemax,entmax15}.safetensors \
    | tee "$out/g2p-zeros.tsv"
fi
