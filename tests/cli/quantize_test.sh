#!/bin/sh
# quantize_test.sh — `attend quantize` end to end on the shipped G2P model:
# int8 and f16 files (sizes under the issue's limits), which `attend g2p`,
# `g2p eval` and `decode` read like any model, and the refusals (quantizing a
# quantized file, bad options, --out over MODEL, resuming training from it).
#   quantize_test.sh ATTEND SOURCE_DIR WORK_DIR
set -u
attend=$1 src=$2 work=$3
CASE=quantize PASSED=0
. "$src/tests/cli/lib.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
model=$src/models/g2p-cmudict.safetensors
dict=$src/data/g2p/cmudict-sample.dict

run 0 "$attend" quantize "$model" --to int8 --out int8.safetensors
has out "^int8.safetensors: int8, [0-9]+ bytes"
size=$(wc -c < int8.safetensors)
[ "$size" -le 1000000 ] || fail "int8 file is $size bytes"
ok "int8 file, $size bytes (at most 1 MB)"
cmp -s int8.safetensors "$src/models/g2p-cmudict-int8.safetensors" ||
    fail "models/g2p-cmudict-int8.safetensors is not what attend quantize makes of the float model"
run 0 "$attend" g2p --model "$src/models/g2p-cmudict-int8.safetensors" hello
has out "^hello HH EH L OW$"
ok "the shipped int8 model is the float model quantized, byte for byte"
run 0 "$attend" quantize "$model" --to f16 --out f16.safetensors
size=$(wc -c < f16.safetensors)
[ "$size" -le 1600000 ] || fail "f16 file is $size bytes"
ok "f16 file, $size bytes (at most 1.6 MB)"

for q in int8 f16; do
    run 0 "$attend" g2p --model $q.safetensors hello world phoneme
    has out "^hello HH EH L OW$"
    has out "^phoneme F OW N IY M$"
    run 0 "$attend" g2p --model $q.safetensors --nbest 2 read
    has out "^read\(2\) "
    run 0 "$attend" g2p eval --model $q.safetensors --dict "$dict" --split dev --max-words 40 --beam 2
    has out "^dev +greedy +40 "
    ok "$q: g2p words, n-best and eval"
done

run 1 "$attend" quantize int8.safetensors --to f16 --out again.safetensors
has err "already quantized: tensor 'encoder.weight_ih_l0' is I8"
[ ! -e again.safetensors ] || fail "a file was written"
ok "quantizing a quantized model is refused, naming the tensor"
run 2 "$attend" quantize "$model" --to int4 --out x.safetensors
has err "int8\|f16"
run 2 "$attend" quantize "$model" --out x.safetensors
has err "needs --to"
run 2 "$attend" quantize "$model" --to int8
has err "needs --out"
cp int8.safetensors copy.safetensors
run 1 "$attend" quantize copy.safetensors --to int8 --out copy.safetensors
cmp -s copy.safetensors int8.safetensors || fail "MODEL was changed"
ok "usage errors; --out may not be MODEL"
run 0 "$attend" quantize --help
has out "usage: attend quantize MODEL --to int8\|f16 --out PATH"
ok "--help"
echo "$PASSED passed, 0 failed"
