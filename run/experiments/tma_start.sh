#!/usr/bin/env bash
# run/experiments/tma_start.sh - builds and runs tma_start.cu for aligned and unaligned starts
cd "$(dirname "$0")"
export PATH=/usr/local/cuda/bin:$PATH
nvcc -O2 -arch=sm_90 -o /tmp/tma_start tma_start.cu -lcuda || exit 1
for c in "1 0 64" "1 4 64" "1 8 64" "0 4 64" "0 2 64" "0 1 64" "1 2 64" "1 4 8"; do
  /tmp/tma_start $c
done
