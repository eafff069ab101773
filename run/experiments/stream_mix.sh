#!/usr/bin/env bash
# run/experiments/stream_mix.sh [SIDE] [REPS] - builds and runs stream_mix.cu on the GPU
# machine: the DRAM rate of the iso step's streams (p and v^2 dt^2 read, p[n-1] read and
# written in place) without the stencil, beside the device's copy. Standalone nvcc, sm_90.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
nvcc -O3 -arch=sm_90 -std=c++17 -o /tmp/stream_mix run/experiments/stream_mix.cu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
/tmp/stream_mix "${1:-512}" "${2:-11}"
