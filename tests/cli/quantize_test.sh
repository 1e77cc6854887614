#!/bin/sh
# quantize_test.sh — `attend quantize` end to end: the shipped int8 G2P model
# is the fp16 default quantized, byte for byte; on a float model trained here,
# int8, f16 and f16 -> int8 files (smaller than the float one), which `attend
# g2p` and `g2p eval` read like any model; the refusals (quantizing a quantized
# file but fp16 to int8, bad options, --out over MODEL).
#   quantize_test.sh ATTEND SOURCE_DIR WORK_DIR
set -u
attend=$1 src=$2 work=$3
CASE=quantize PASSED=0
. "$src/tests/cli/lib.sh"
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
shipped=$src/models/g2p-cmudict.safetensors
dict=$src/data/g2p/cmudict-sample.dict

# the shipped default model is stored as fp16; its int8 file is made from it
run 0 "$attend" quantize "$shipped" --to int8 --out shipped-int8.safetensors
cmp -s shipped-int8.safetensors "$src/models/g2p-cmudict-int8.safetensors" ||
    fail "models/g2p-cmudict-int8.safetensors is not what attend quantize makes of models/g2p-cmudict.safetensors"
for m in "$shipped" "$src/models/g2p-cmudict-int8.safetensors"; do
    size=$(wc -c < "$m")
    [ "$size" -le 5000000 ] || fail "$m is $size bytes, over 5 MB"
    run 0 "$attend" g2p --model "$m" hello world phoneme
    has out "^hello HH EH L OW$"
    has out "^phoneme F OW N IY M$"
done
ok "the shipped int8 model is the fp16 default quantized, byte for byte; both under 5 MB"

# the mechanics on a float model made here (a tiny G2P model of the sample)
run 0 "$attend" g2p train --dict "$dict" --epochs 1 --warmup 10 --emb 8 --hidden 32 --dec-hidden 64 --attn 16 \
    --out float.safetensors
model=float.safetensors
fsize=$(wc -c < $model)
run 0 "$attend" quantize "$model" --to int8 --out int8.safetensors
has out "^int8.safetensors: int8, [0-9]+ bytes"
size=$(wc -c < int8.safetensors)
[ $((size * 100)) -le $((fsize * 40)) ] || fail "int8 file is $size bytes, float $fsize"
ok "int8 file, $size bytes (float: $fsize)"
run 0 "$attend" quantize "$model" --to f16 --out f16.safetensors
size=$(wc -c < f16.safetensors)
[ $((size * 100)) -le $((fsize * 60)) ] || fail "f16 file is $size bytes, float $fsize"
ok "f16 file, $size bytes"
run 0 "$attend" quantize f16.safetensors --to int8 --out f16-int8.safetensors
[ "$(wc -c < f16-int8.safetensors)" -eq "$(wc -c < int8.safetensors)" ] || fail "f16 -> int8 size differs from int8"
ok "f16 -> int8"

for q in int8 f16 f16-int8; do
    run 0 "$attend" g2p --model $q.safetensors hello world phoneme
    has out "^hello [A-Z]"
    run 0 "$attend" g2p --model $q.safetensors --nbest 2 read
    has out "^read\(2\) "
    run 0 "$attend" g2p eval --model $q.safetensors --dict "$dict" --split dev --max-words 40 --beam 2
    has out "^dev +greedy +40 "
    ok "$q: g2p words, n-best and eval"
done

run 1 "$attend" quantize int8.safetensors --to f16 --out again.safetensors
has err "already quantized: tensor 'encoder.weight_ih_l0' is I8"
[ ! -e again.safetensors ] || fail "a file was written"
run 1 "$attend" quantize f16.safetensors --to f16 --out again.safetensors
has err "already quantized: tensor 'encoder.weight_ih_l0' is F16"
[ ! -e again.safetensors ] || fail "a file was written"
ok "quantizing a quantized model (but fp16 to int8) is refused, naming the tensor"
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
