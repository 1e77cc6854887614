#!/bin/sh
# readout_test.sh — `attend readout` (an encoder read out per position on the
# shift task, issue 27's Table 8.1): its report lines, a saved model that
# `attend decode` reads (labels, the blank first), usage errors naming both
# sides; `attend train --task bag` (the order-free task).
#
#   sh tests/cli/readout_test.sh CASE ATTEND WORK_DIR     CASE: usage | run
set -u
CASE=readout_$1
A=$2
WORK=$3
. "$(dirname "$0")/lib.sh"
A=$(abs "$A")
D=$(abs "$WORK")/$CASE
rm -rf "$D"
mkdir -p "$D" || exit 1
cd "$D" || exit 1
PASSED=0

case $1 in
usage)
    run 0 "$A" readout --help
    has out "usage: attend readout --encoder rnn\|transformer\|conv --shift K"
    ok "--help"
    run 2 "$A" readout --encoder conv
    has err "needs --shift K"
    ok "no --shift"
    run 2 "$A" readout --shift 5 --len 5
    has err "--shift 5 leaves no label to read in sequences of --len 5"
    ok "--shift not below --len"
    run 2 "$A" readout --shift 1 --encoder rnn --heads 2
    has err "--heads and --post-norm apply to --encoder transformer, not --encoder rnn"
    ok "--heads with the recurrent encoder"
    run 2 "$A" readout --shift 1 --encoder transformer --kernel 3
    has err "--kernel and --conv-relu apply to --encoder conv, not --encoder transformer"
    ok "--kernel with the transformer encoder"
    run 2 "$A" readout --shift 1 --encoder rnn --positions none
    has err "--positions applies to --encoder transformer or conv, not --encoder rnn"
    ok "--positions with the recurrent encoder"
    run 2 "$A" readout --shift 1 --encoder lstm
    has err "lstm"
    ok "an unknown --encoder"
    run 1 "$A" readout --shift 1 --emb 6 --heads 4
    has err "heads=4"
    ok "--heads not dividing --emb: the library's message"
    run 2 "$A" train --task bags --steps 1
    has err "copy\|reverse\|sort\|bag"
    ok "an unknown --task lists bag"
    # attend train --decoder readout: a pair whose lengths differ is named before training
    printf 'a b c\tx y z\na b\tx y z\n' > uneven.tsv
    run 2 "$A" train --train uneven.tsv --tokenizer space --decoder readout --steps 1 --out u.safetensors
    has err "^attend train: --decoder readout labels each source token: pair 2 of uneven.tsv has 3 target tokens for 2 source tokens$"
    if grep -q "^training:" out; then fail "train --decoder readout trained on uneven pairs"; fi
    [ ! -e u.safetensors ] || fail "train --decoder readout wrote a model from uneven pairs"
    ok "train --decoder readout: uneven pairs named (pair, file, lengths), no training"
    ;;
run)
    # one conv layer of kernel 3 sees one neighbour: shift 1 is learned, and the model decodes
    run 0 "$A" --threads 1 readout --encoder conv --layers 1 --shift 1 --len 10 --steps 200 --count 1000 \
        --dev-count 50 --out m.safetensors
    has out "^data: task=shift shift=1 symbols=10 len=10 train_pairs=1000 dev_pairs=50$"
    has out "^model: encoder=conv layers=1 emb=32 width=32 hidden=64 kernel=3 positions=sinusoidal params=[0-9]+ dependent_steps_per_layer=1 reach=1$"
    has out "^train: steps=200 batch=32 final_loss=[0-9.]+ ms_per_step=[0-9.]+ min_ms_per_step=[0-9.]+ cpu_ms_per_step=[0-9.]+$"
    has out "^eval: acc_path=(0\.9[5-9][0-9]*|1\.0000) labels_path=450 acc_blank=1\.0000 labels_blank=50 "
    has out "^encode: batch=32 len=10 ms_per_batch=[0-9.]+ min_ms_per_batch=[0-9.]+ cpu_ms_per_batch=[0-9.]+ threads=1$"
    has out "^memory: peak_rss_kb=[0-9]+ param_bytes=[0-9]+$"
    ok "readout conv shift 1: accuracy >= 0.95, the report lines"
    printf 'abcdefghij\ncab\n' > in.txt
    run 0 "$A" decode m.safetensors in.txt
    has out "^_abcdefghi$"
    has out "^_ca$"
    ok "decode of the readout model: the blank, then the source shifted by one"
    # the recurrent encoder: dependent steps = T
    run 0 "$A" --threads 1 readout --encoder rnn --hidden 8 --shift 2 --len 12 --steps 2 --count 40 --dev-count 8
    has out "dependent_steps_per_layer=12 reach=-1$"
    ok "readout rnn: T dependent steps per layer"
    run 0 "$A" --threads 1 train --task bag --symbols 5 --min-len 4 --max-len 4 --steps 3 --out bag.safetensors
    has out "^data: bag task, 5 symbols, sequences of 4-4 symbols"
    ok "train --task bag"
    # attend train --decoder readout on even TSV pairs: the model line names the readout; decode reads it
    printf 'a b c\tc b a\nb c\tc b\nc a\ta c\n' > even.tsv
    run 0 "$A" --threads 1 train --train even.tsv --tokenizer space --decoder readout --steps 3 --out r.safetensors
    has out "^model: gru encoder 1x64 bidirectional, a readout \(one label per source position\), emb 32: [0-9]+ parameters$"
    printf 'a b c\n' > rin.txt
    run 0 "$A" decode r.safetensors rin.txt
    [ "$(wc -w <out)" = 3 ] || fail "decode of a readout model: $(cat out) is not one label per source token"
    ok "train --decoder readout on a TSV: the model line, decode gives one label per token"
    ;;
*)
    echo "unknown case $1" >&2
    exit 2
    ;;
esac
echo "$PASSED passed, 0 failed"
