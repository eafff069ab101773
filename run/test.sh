#!/usr/bin/env bash
# run/test.sh - fresh Debian/Ubuntu machine to a passing test suite: installs the
# dependencies, builds everything (CUDA kernels too when nvcc is present) and runs ctest
# without the tests labelled long (`ctest -LE long`: the suite a developer runs often);
# then, where a parallel HDF5 is installed (h5pcc), builds the C code against it
# (build-phdf5: no CUDA) and runs the tests labelled mpi there, whose slabs reach the file
# collectively; then builds the C code again under AddressSanitizer and
# UndefinedBehaviorSanitizer (build-sanitize: no CUDA, no MPI) and runs the tests labelled
# sanitize there; last, the tests labelled long in the first build (`ctest -L long`: the
# cases that need a large grid or many steps), so CI runs every test.
# GPU tests exit 77 without a GPU and count as skipped. Arguments go to the first ctest.
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
ctest --test-dir build-test -LE long --output-on-failure "$@"
if command -v h5pcc >/dev/null; then
  cmake -S . -B build-phdf5 -G Ninja -DCMAKE_BUILD_TYPE=Release -DRTM3D_ENABLE_CUDA=OFF \
    -DHDF5_PREFER_PARALLEL=ON
  cmake --build build-phdf5 -j "$jobs"
  ./build-phdf5/app/rtm3d info | grep -q "HDF5 .*(parallel:" ||
    { echo "run/test.sh: build-phdf5 did not take the parallel HDF5" >&2; exit 1; }
  ctest --test-dir build-phdf5 -L mpi --output-on-failure
fi
cmake -S . -B build-sanitize -G Ninja -DCMAKE_BUILD_TYPE=Debug -DRTM3D_ENABLE_CUDA=OFF \
  -DRTM3D_ENABLE_MPI=OFF -DRTM3D_SANITIZE=address,undefined
cmake --build build-sanitize -j "$jobs"
ctest --test-dir build-sanitize -L sanitize --output-on-failure
ctest --test-dir build-test -L long --output-on-failure
