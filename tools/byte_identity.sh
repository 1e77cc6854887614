#!/usr/bin/env bash
# byte_identity.sh — builds `attend` at two commits and checks that they train
# the same models and decode the same outputs, byte for byte (issue 26's proof;
# issue 12 did the same for its 6 model kinds). Every decoder kind and every
# mechanism is trained alone and in every pair the older build accepts (the
# pairs it refuses must be refused by the newer one too), each model and
# checkpoint file is compared with cmp, and each model is decoded greedy, with
# beam search, n-best, coverage penalty, alignments (decode --align, align),
# evaluated, intervened on, quantized to int8, and used in ensembles; the
# shipped G2P models are decoded alone and as an ensemble, and a small sweep's
# CSV (times cut off) is compared.
#
#   tools/byte_identity.sh [BASE [HEAD]]
#
# BASE defaults to 7bd037c (before issue 26), HEAD to the working tree ("."),
# either may be any commit. Builds go to $BI_DIR (default /tmp/attend_bi;
# a built commit is reused), -DATTEND_BLAS=OFF, one thread. Prints one line per
# difference and "compared N files: N identical, N differ"; exits 1 on any
# difference.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
base=${1:-7bd037c}
head=${2:-.}
work=${BI_DIR:-/tmp/attend_bi}
jobs=${BI_JOBS:-2}
mkdir -p "$work"
export OMP_NUM_THREADS=1

# build REV -> prints the path of its `attend`
build() {
    local rev=$1 dir
    if [ "$rev" = "." ]; then
        dir=$work/worktree
        rm -rf "$dir/src" # files deleted since the last copy must go too
        mkdir -p "$dir/src"
        # the working tree's files (tracked and untracked, not ignored)
        (cd "$here" && git ls-files -co --exclude-standard -z | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$dir/src"
    else
        local sha
        sha=$(cd "$here" && git rev-parse --short=12 "$rev") || { echo "byte_identity: unknown commit $rev" >&2; exit 2; }
        dir=$work/$sha
        if [ ! -x "$dir/build/attend" ]; then
            rm -rf "$dir/src"
            mkdir -p "$dir/src"
            (cd "$here" && git archive "$sha") | tar -xf - -C "$dir/src"
        fi
    fi
    if [ ! -x "$dir/build/attend" ] || [ "$rev" = "." ]; then
        cmake -S "$dir/src" -B "$dir/build" -DATTEND_BLAS=OFF -DCMAKE_BUILD_TYPE=Release >"$dir/cmake.log" 2>&1 &&
            cmake --build "$dir/build" --target attend_cli -j "$jobs" >"$dir/build.log" 2>&1 ||
            { echo "byte_identity: building $rev failed (see $dir/build.log)" >&2; exit 2; }
    fi
    echo "$dir/build/attend"
}

A=$(build "$base") || exit 2
B=$(build "$head") || exit 2
echo "base $base: $A"
echo "head $head: $B"

out=$work/run
rm -rf "$out"
mkdir -p "$out/a" "$out/b"
compared=0
differ=0
refused=0
# cmp_file NAME: $out/a/NAME against $out/b/NAME
cmp_file() {
    compared=$((compared + 1))
    if ! cmp -s "$out/a/$1" "$out/b/$1"; then
        differ=$((differ + 1))
        echo "DIFFER: $1"
    fi
}
# both NAME CMD...: runs CMD with attend = each build in its directory, stdout
# and stderr (timings cut) to NAME.out, exit status to NAME.rc; compares both
both() {
    local name=$1
    shift
    for side in a b; do
        local bin=$A
        [ $side = b ] && bin=$B
        (cd "$out/$side" && "$bin" "$@" >"$name.out" 2>"$name.err"; echo $? >"$name.rc")
        # wall-clock numbers are not results
        sed -i -e '/^trained: /d' -e '/^pairs\/s /d' -e 's/ pairs\/s [0-9.e+]*//' -e '/s\/word\|words\/s\|ms\/word/d' "$out/$side/$name.out"
    done
    [ -n "${NO_CMP:-}" ] && return
    [ -n "${NO_OUT:-}" ] || cmp_file "$name.out"
    cmp_file "$name.rc"
}

common="--symbols 6 --min-len 2 --max-len 7 --count 240 --dev-count 24 --steps 14 --batch 16 --emb 8 --hidden 12
        --attn 12 --eval-every 7 --seed 3 --threads 1"
# one feature: its flags (a model option or a training option)
declare -A F=(
    [luong]="--decoder luong"
    [none]="--decoder none"
    [lstm]="--cell lstm"
    [declayers]="--dec-layers 2"
    [general]="--score general"
    [dot]="--score dot --dec-hidden 24"
    [coverage]="--coverage"
    [monotonic]="--monotonic"
    [copy]="--copy"
    [sparsemax]="--normalizer sparsemax"
    [entmax15]="--normalizer entmax15"
    [dropout]="--dropout 0.2"
    [smoothing]="--label-smoothing 0.1"
    [sampling]="--sampling-prob 0.5 --sampling-ramp 6"
    [covloss]="--coverage-loss 0.5"
    [guided]="--guided-alignment 1"
)
names=(luong none lstm declayers general dot coverage monotonic copy sparsemax entmax15 dropout smoothing sampling covloss guided)
input=$out/input.txt
printf 'abc\ncdeab\nf\nfedcba\naabbcc\nbe\nddddd\nacefb\ncab\nefefefe\n' >"$input"
cp "$input" "$out/a/in.txt"
cp "$input" "$out/b/in.txt"

trained=()
# train NAME FLAGS...: trains model NAME with both builds; compares the files
# (a combination both builds refuse is not compared further: how it is refused
# may change, e.g. a usage error before the data is read instead of the
# library's error after)
train() {
    local name=$1
    shift
    NO_CMP=1 both "train_$name" train --task reverse $common --dec-hidden 24 "$@" --out "$name.st" --checkpoint "$name.ckpt"
    local ra rb
    ra=$(cat "$out/a/train_$name.rc")
    rb=$(cat "$out/b/train_$name.rc")
    if [ "$ra" != 0 ] || [ "$rb" != 0 ]; then
        if [ "$ra" != 0 ] && [ "$rb" != 0 ]; then
            refused=$((refused + 1))
            [ "$ra" = "$rb" ] || echo "note: $name: refused by both (exit $ra before, $rb now)"
        else
            differ=$((differ + 1))
            echo "DIFFER: $name: exit $ra before, $rb now"
        fi
        return
    fi
    cmp_file "train_$name.out"
    cmp_file "$name.st"
    cmp_file "$name.ckpt"
    trained+=("$name")
}

# decode_all NAME: the model's outputs
decode_all() {
    local n=$1
    both "dec_greedy_$n" decode "$n.st" in.txt --batch 4
    both "dec_greedy_align_$n" decode "$n.st" in.txt --batch 3 --format jsonl --align
    both "dec_beam_$n" decode "$n.st" in.txt --beam 4 --format tsv
    both "dec_nbest_$n" decode "$n.st" in.txt --beam 5 --nbest 3 --alpha 0.6 --format jsonl --align
    both "dec_cp_$n" decode "$n.st" in.txt --beam 4 --nbest 2 --coverage-penalty 0.4 --format tsv
    both "dec_text_align_$n" decode "$n.st" in.txt --beam 3 --align --align-format percent
    both "eval_$n" eval "$n.st" --task reverse --symbols 6 --min-len 2 --max-len 7 --count 30 --data-seed 9
    both "align_$n" align "$n.st" cdeab --beam 3 --nbest 2 --format tsv
    both "intervene_$n" intervene "$n.st" cdeab --per-step
}

train base
for n in "${names[@]}"; do
    # dot needs its own decoder width; the flags repeat --dec-hidden harmlessly
    train "$n" ${F[$n]}
done
for ((i = 0; i < ${#names[@]}; i++)); do
    for ((j = i + 1; j < ${#names[@]}; j++)); do
        a=${names[$i]} b=${names[$j]}
        train "$a+$b" ${F[$a]} ${F[$b]}
    done
done
# a pointer model (sort) with the options it takes
for flags in "" "--cell lstm" "--dec-layers 2" "--dropout 0.2" "--label-smoothing 0.1" "--pointer-repeat"; do
    nm="pointer${flags// /}"
    both "train_$nm" train --task sort $common --dec-hidden 24 $flags --out "$nm.st" --checkpoint "$nm.ckpt"
    cmp_file "$nm.st"
    cmp_file "$nm.ckpt"
    both "dec_greedy_$nm" decode "$nm.st" in.txt --format jsonl --align
    both "dec_nbest_$nm" decode "$nm.st" in.txt --beam 4 --nbest 3 --format jsonl --align
    both "eval_$nm" eval "$nm.st" --task sort --symbols 6 --min-len 2 --max-len 7 --count 30 --data-seed 9
done
for n in "${trained[@]}"; do decode_all "$n"; done

# resuming from a checkpoint continues to the same model
both resume train --task reverse $common --dec-hidden 24 --dropout 0.2 --coverage --steps 20 --warmup 1 --decay 13 \
    --resume coverage+dropout.ckpt --out resumed.st --checkpoint resumed.ckpt
cmp_file resumed.ckpt
cmp_file resumed.st

# ensembles (the same vocabulary): pairs and a triple
ens=("base luong" "base lstm" "coverage monotonic" "base dropout" "luong declayers" "sparsemax entmax15"
     "base luong lstm" "base none")
for e in "${ens[@]}"; do
    files=""
    for n in $e; do files="$files $n.st"; done
    tag=${e// /_}
    both "ens_greedy_$tag" decode $files in.txt --format jsonl --align
    both "ens_beam_$tag" decode $files in.txt --beam 4 --format tsv
    both "ens_nbest_$tag" decode $files in.txt --beam 5 --nbest 3 --alpha 0.5 --format jsonl --align
    both "ens_rescore_$tag" decode base.st in.txt --beam 4 --nbest 3 --rescore ${e%% *}.st --format tsv
done

# int8 and fp16 models
for n in base luong coverage copy monotonic; do
    for d in int8 f16; do
        both "quant_${d}_$n" quantize "$n.st" --to $d --out "$n.$d.st"
        cmp_file "$n.$d.st"
        both "dec_q${d}_$n" decode "$n.$d.st" in.txt --beam 3 --nbest 2 --format jsonl --align
        both "dec_qg${d}_$n" decode "$n.$d.st" in.txt
    done
done

# the shipped G2P models
words="hello attention seq2seq pronunciation xylophone quick brown fox"
if [ -f "$here/models/g2p-cmudict.safetensors" ]; then
    for m in models/g2p-cmudict.safetensors models/g2p-cmudict-int8.safetensors; do
        [ -f "$here/$m" ] || continue
        tag=$(basename "$m" .safetensors)
        both "g2p_greedy_$tag" g2p --model "$here/$m" $words
        both "g2p_nbest_$tag" g2p --model "$here/$m" --nbest 3 --align --format jsonl $words
        both "g2p_cp_$tag" g2p --model "$here/$m" --beam 4 --coverage-penalty 0.3 --format tsv $words
    done
    ens2=""
    for m in models/g2p-cmudict.safetensors models/g2p-cmudict-b-int8.safetensors; do
        [ -f "$here/$m" ] && ens2="$ens2${ens2:+,}$here/$m"
    done
    both g2p_ensemble g2p --model "$ens2" --nbest 2 --align --format jsonl $words
    both g2p_ensemble_greedy g2p --model "$ens2" $words
fi

# a small sweep (its CSV without the timing columns)
NO_OUT=1 both sweep sweep --task reverse --lengths 3,5 --decoders none,additive,dot+sparsemax,additive+coverage,additive+monotonic,additive+copy \
    --steps 12 --batch 8 --emb 8 --hidden 8 --attn 8 --train-pairs 120 --dev-pairs 16 --csv sweep.csv --svg sweep.svg --threads 1
for side in a b; do cut -d, -f1-13 "$out/$side/sweep.csv" >"$out/$side/sweep.cut"; done
cmp_file sweep.cut

echo "trained ${#trained[@]} models (and 6 pointer models); $refused combinations refused by both builds"
echo "compared $compared files: $((compared - differ)) identical, $differ differ"
[ $differ = 0 ]
