#!/usr/bin/env bash
# run/experiments/gathers_pass.sh - how many imaging steps a pass over the offset gathers
# should add: builds gathers_pass.cu with nvcc (no CMake) and runs it on the GPU, two rounds
# (docs/migration.md, "Several imaging steps go into one pass"). From the repository root on
# the GPU machine:
#   run/experiments/gathers_pass.sh
set -euo pipefail
cd "$(dirname "$0")"
binary="${TMPDIR:-/tmp}/rtm3d_gathers_pass"
nvcc -O3 -arch=sm_90 -o "$binary" gathers_pass.cu
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
"$binary"
