#!/usr/bin/env bash
# run/experiments/cufft_jit.sh: cufft_jit.cu on the GPU machine, each length in a process of
# its own with the JIT cache off (CUDA_CACHE_DISABLE=1), then on.
set -u
dir="$(dirname "$0")"
nvcc -O2 -arch=sm_90 -o /tmp/cufft_jit "$dir/cufft_jit.cu" -lcufft || exit 1
for cache in off on; do
  echo "JIT cache $cache"
  for n in ${LENGTHS:-32016 32256 32400 32768 8064 8192 16128}; do
    env $([ "$cache" = off ] && echo CUDA_CACHE_DISABLE=1) /tmp/cufft_jit "$n"
  done
done
