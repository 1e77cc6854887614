#!/bin/sh
# mpi_scaling.sh — throughput of data-parallel `attend train` with the shipped
# G2P recipe's model (docs/SCALING.md, issue 16): one plain process, then
# mpirun -np 1 and -np 2 (one rank per core), printing each run's training
# samples/s and, under MPI, the exchange's time and bytes per step.
#
#   sh bench/mpi_scaling.sh ATTEND [STEPS]
#
# ATTEND: an `attend` built with -DATTEND_MPI=ON (OpenBLAS for the recipe's
# speed). The data: data/g2p/cmudict-sample.dict as TSV pairs, each ARPAbet
# phoneme mapped to one character so that the char tokenizer gives the G2P
# shapes (letters in, phonemes out); the model: emb 64, bi-GRU 128, decoder
# 256, additive attention 128, batch 64 (docs/G2P.md "The default recipe").
# Run it on a quiet machine: it measures wall time.
set -eu
A=$1
STEPS=${2:-60}
HERE=$(cd "$(dirname "$0")/.." && pwd)
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
awk '!/^;;;/ && NF >= 2 { w = $1; sub(/\([0-9]+\)$/, "", w); p = "";
       for (i = 2; i <= NF; i++) { if (!($i in id)) id[$i] = sprintf("%c", 65 + n++); p = p id[$i] }
       print w "\t" p }' "$HERE/data/g2p/cmudict-sample.dict" >"$W/g2p.tsv"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1
R="train --train $W/g2p.tsv --emb 64 --hidden 128 --dec-hidden 256 --attn 128 --batch 64 --steps $STEPS --log-every 100000 --out $W/model.st"
echo "data: $(wc -l <"$W/g2p.tsv") pairs; $STEPS steps of batch 64"
show() { grep -E '^(model|data-parallel|trained|exchange):' "$W/out" | sed "s/^/  /"; }
echo "plain, 1 shard:"
"$A" $R >"$W/out" 2>/dev/null
show
echo "plain, --grad-shards 2 (the sharding's own cost):"
"$A" $R --grad-shards 2 >"$W/out" 2>/dev/null
show
for np in 1 2; do
    echo "mpirun -np $np --bind-to core (one shard per rank):"
    mpirun -np $np --bind-to core "$A" $R >"$W/out" 2>/dev/null
    show
done
