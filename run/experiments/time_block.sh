#!/usr/bin/env bash
# run/experiments/time_block.sh [N] [REPS] - builds and runs time_block.cu
# (two iso leapfrog steps fused in one z-march) on the GPU machine: its p[n+1] and p[n+2]
# against two single reference steps, bit for bit, then its MCells/s (cell-steps a second)
# against the copy bandwidth measured in the same process. Standalone nvcc, sm_90.
set -euo pipefail
cd "$(dirname "$0")/../.."
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
nvcc -O3 -arch=sm_90 -std=c++17 -lineinfo -Xptxas -v -o /tmp/time_block run/experiments/time_block.cu
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv,noheader
/tmp/time_block "${1:-512}" "${2:-20}"
