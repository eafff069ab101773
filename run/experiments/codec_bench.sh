#!/usr/bin/env bash
# run/experiments/codec_bench.sh BASE_SRC - the codec's CUDA kernels alone, the tree's
# against an earlier tree's (BASE_SRC: a source folder, `git archive REV | tar -x -C DIR`),
# each built with run/experiments/codec_bench.cu (nvcc, no CMake): at rates 6 and 4, the
# device's bytes and floats against the C reference at 256^3 (a Ricker shell), then
# compress, decompress and decompress-and-image timed at 512^3 (best of 18 after 2),
# two rounds. VARIANTS="name|nvcc flags;..." builds the tree's codec_cuda.cu more than once
# (codec_decode_masks.patch's CODEC_* macros). GPU machine, from the repository root:
#   run/experiments/codec_bench.sh .probe/base-src          (carry .probe/base-src)
# Logs under $OUT/codec_bench (or /tmp/codec_bench).
set -u
base=${1:?usage: codec_bench.sh BASE_SRC}
out=${OUT:-/tmp}/codec_bench
mkdir -p "$out"
bench=run/experiments/codec_bench.cu
inc() { echo "-I$1/solver/grid -I$1/solver/cuda -I$1/memory -I$1/config/status"; }
build() { # NAME SRC FLAGS
  local name=$1 src=$2 flags=$3 dir=$out/$1
  mkdir -p "$dir"
  # shellcheck disable=SC2046,SC2086 # word lists
  nvcc -O3 -std=c++17 -arch=sm_90 $(inc "$src") $flags -c "$src/solver/cuda/codec_cuda.cu" \
    -o "$dir/k.o" -Xptxas -v > "$dir/ptxas.log" 2>&1 &&
    gcc -O2 -std=c11 $(inc "$src") -c "$src/solver/grid/codec.c" -o "$dir/c.o" &&
    nvcc -O3 -std=c++17 -arch=sm_90 $(inc "$src") -Xcompiler -fopenmp -c "$bench" -o "$dir/b.o" &&
    nvcc -arch=sm_90 -Xcompiler -fopenmp "$dir/b.o" "$dir/k.o" "$dir/c.o" -o "$dir/bench" ||
    echo "$name: build failed"
}
names=(base)
build base "$base" "" &
IFS=';' read -r -a variants <<< "${VARIANTS:-tree|}"
for v in "${variants[@]}"; do
  names+=("${v%%|*}")
  build "${v%%|*}" . "${v#*|}" &
done
wait
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for round in 1 2; do
  for v in "${names[@]}"; do
    [ -x "$out/$v/bench" ] || continue
    echo "== $v (round $round)"
    "$out/$v/bench" $((round == 1)) 2>&1 | tee -a "$out/$v/run.log"
  done
done
