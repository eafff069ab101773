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
# One line a stage (run/stages.sh): the package manager's, CMake's and the compilers'
# output goes to out/test.log (its tail is printed when a stage fails); ctest's is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
source run/stages.sh
rtm_stages_begin test out/test.log 8
echo "test: 8 stages; the installation's and the builds' output in out/test.log;"
echo "  ctest prints a line as each test ends, some after a minute or two"
[ "$(id -u)" -eq 0 ] || sudo -v
rtm_stage "installing packages (apt-get)" ./run/deps.sh install
# nvcc lives outside PATH on many CUDA installs
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
jobs="$(nproc)"
# build DIR CMAKE_OPTION...: configure and build DIR
build() {
  local dir=$1
  shift
  cmake -S . -B "$dir" -G Ninja "$@" && cmake --build "$dir" -j "$jobs"
}
if command -v nvcc >/dev/null; then cuda="with CUDA (nvcc found)"; else cuda="without CUDA (no nvcc)"; fi
rtm_stage "building build-test $cuda" build build-test -DCMAKE_BUILD_TYPE=Release
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-$jobs}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# --progress: on a terminal one updating line names the test running, failures stay
rtm_phase "the quick tests (ctest -LE long in build-test)"
ctest --test-dir build-test -LE long --progress --output-on-failure "$@"
if command -v h5pcc >/dev/null; then
  rtm_stage "building build-phdf5 against the parallel HDF5" build build-phdf5 \
    -DCMAKE_BUILD_TYPE=Release -DRTM3D_ENABLE_CUDA=OFF -DHDF5_PREFER_PARALLEL=ON
  ./build-phdf5/app/rtm3d info | grep -q "HDF5 .*(parallel:" ||
    { echo "run/test.sh: build-phdf5 did not take the parallel HDF5" >&2; exit 1; }
  rtm_phase "the MPI tests against the parallel HDF5 (ctest -L mpi in build-phdf5)"
  ctest --test-dir build-phdf5 -L mpi --progress --output-on-failure
else
  rtm_stages_k=$(( rtm_stages_k + 2 ))
  echo "test: 4-5/8 skipped: no parallel HDF5 (h5pcc), so no build-phdf5 and its MPI tests"
fi
rtm_stage "building build-sanitize (address and undefined sanitizers)" build build-sanitize \
  -DCMAKE_BUILD_TYPE=Debug -DRTM3D_ENABLE_CUDA=OFF -DRTM3D_ENABLE_MPI=OFF \
  -DRTM3D_SANITIZE=address,undefined
rtm_phase "the tests under the sanitizers (ctest -L sanitize in build-sanitize)"
ctest --test-dir build-sanitize -L sanitize --progress --output-on-failure
rtm_phase "the long tests (ctest -L long in build-test): large grids, many steps;
  one test may run for minutes without a line"
ctest --test-dir build-test -L long --progress --output-on-failure
echo "test: every stage passed in $(rtm_elapsed "$SECONDS"); the build log: out/test.log"
