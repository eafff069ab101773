#!/usr/bin/env bash
# run/test.sh - fresh Debian/Ubuntu machine to a passing test suite: installs the
# dependencies, builds everything (CUDA kernels too when nvcc is present) and runs ctest.
# GPU tests exit 77 without a GPU and count as skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
./run/deps.sh install
# nvcc lives outside PATH on many CUDA installs
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
jobs="$(nproc)"
cmake -S . -B build-test -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build build-test -j "$jobs"
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$jobs}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ctest --test-dir build-test --output-on-failure "$@"
