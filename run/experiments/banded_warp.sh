#!/usr/bin/env bash
# run/experiments/banded_warp.sh [BUILD_DIR] [NU] [HALF] - builds and runs banded_warp.c (the
# time-dispersion warp as one banded matrix for every trace, against the whole-trace warp)
# on the cpu, linked against BUILD_DIR's libraries (default build). Figures in
# run/results/accuracy.md ("At the defaults").
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build}"
work=/tmp/rtm3d_banded_warp
mkdir -p "$work"
cc -O2 -fopenmp -Isolver/traces -Iconfig -Iconfig/status -Imemory run/experiments/banded_warp.c \
  -o "$work/banded_warp" "$build/solver/librtm3d_solver.a" "$build/config/librtm3d_config.a" \
  "$build/memory/librtm3d_memory.a" "$build/config/librtm3d_status.a" -lfftw3f -lm
"$work/banded_warp" "${2:-0.1}" "${3:-64}" | sort -k14 -g | head -12
