#!/usr/bin/env bash
# run/quickstart.sh - fresh Debian/Ubuntu machine to a first result: installs the
# dependencies, builds rtm3d, runs the quickstart example (on the GPU when there is one,
# on the CPU otherwise) and plots a slice of the last snapshot and the gather.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p out
# the package manager's many lines go to a log; one line here
if ./run/deps.sh install > out/deps.log 2>&1; then
  echo "quickstart: dependencies installed (log: out/deps.log)"
else
  echo "quickstart: installing the dependencies failed; the end of out/deps.log:" >&2
  tail -20 out/deps.log >&2
  exit 1
fi
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRTM3D_BUILD_TESTS=OFF
cmake --build build -j "$(nproc)"
./build/app/rtm3d info
# --force: a second run of the example replaces the first's out/quickstart.h5; the gather
# corrected for the leapfrog's time dispersion (without it rtm3d warns that the last
# arrivals are about 24% off at this dt: docs/modelling.md "Time dispersion")
./build/app/rtm3d model run/examples/quickstart.ini --force \
  --set time.dispersion_correction=full "$@"
./build/app/rtm3d plot out/quickstart.h5 /snapshots/p --index 1 --slice y=80 -o out/quickstart_snapshot.png
./build/app/rtm3d plot out/quickstart.h5 /traces/p -o out/quickstart_gather.png
echo "quickstart: wrote out/quickstart.h5, out/quickstart.json, out/quickstart_snapshot.png, out/quickstart_gather.png"
echo "quickstart: the binary is build/app/rtm3d (README: Building by hand, to put it on PATH)"
