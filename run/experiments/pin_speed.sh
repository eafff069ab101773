#!/usr/bin/env bash
# run/experiments/pin_speed.sh [GB] [THREADS] - builds and runs pin_speed.c (how fast
# page-locked host memory can be had) on the GPU machine, with the kernel's huge-page
# settings beside it. Defaults: 8 GB, 16 threads.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
command -v nvcc > /dev/null || export PATH="/usr/local/cuda/bin:$PATH"
bin=$(mktemp -d)/pin_speed
cuda=$(dirname "$(dirname "$(command -v nvcc)")")
gcc -O2 -std=gnu11 run/experiments/pin_speed.c -o "$bin" -I"$cuda/include" -L"$cuda/lib64" -lcudart -lpthread || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "THP: $(cat /sys/kernel/mm/transparent_hugepage/enabled) defrag: $(cat /sys/kernel/mm/transparent_hugepage/defrag)"
"$bin" "${1:-8}" "${2:-16}"
