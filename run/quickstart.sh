#!/usr/bin/env bash
# run/quickstart.sh - fresh Debian/Ubuntu machine to a first result: installs the
# dependencies, builds rtm3d, runs the quickstart example (on the GPU when there is one,
# on the CPU otherwise) and plots a slice of the last snapshot and the gather. One line a
# stage (run/stages.sh); everything the stages print goes to out/quickstart.log. Arguments
# go to the example's `rtm3d model` (e.g. --set backend.name=cpu).
set -euo pipefail
from="$PWD"
cd "$(dirname "$0")/.."
root="$PWD"
source run/stages.sh
rtm_stages_begin quickstart out/quickstart.log 5
# the paths printed at the end, as the caller reaches them
here=""
[ "$from" = "$root" ] || here="$root/"
echo "quickstart: 5 stages, their whole output in ${here}out/quickstart.log"

# sudo's password prompt, if any, before the package manager's output goes to the log
[ "$(id -u)" -eq 0 ] || sudo -v
rtm_stage "installing packages (apt-get)" ./run/deps.sh install

if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then export PATH="/usr/local/cuda/bin:$PATH"; fi
if command -v nvcc >/dev/null; then cuda="with CUDA (nvcc found)"; else cuda="without CUDA (no nvcc)"; fi
rtm_stage "configuring $cuda" \
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DRTM3D_BUILD_TESTS=OFF
rtm_stage "building $(rtm_build_label build)" cmake --build build -j "$(nproc)"

# --force: a second run of the example replaces the first's out/quickstart.h5; the gather
# is corrected for the leapfrog's time dispersion by the default
# time.dispersion_correction = full (with none, rtm3d warns that the last arrivals are
# about 24% off at this dt: docs/modelling.md "Time dispersion")
run_example() {
  ./build/app/rtm3d info && ./build/app/rtm3d model run/examples/quickstart.ini --force "$@"
}
rtm_stage "running the example (400 steps)" run_example "$@"
plot_example() {
  ./build/app/rtm3d plot out/quickstart.h5 /snapshots/p --index 1 --slice y=80 \
      -o out/quickstart_snapshot.png &&
    ./build/app/rtm3d plot out/quickstart.h5 /traces/p -o out/quickstart_gather.png
}
rtm_stage "plotting a snapshot and the gather" plot_example

cat <<END
quickstart: done in $(rtm_elapsed "$SECONDS"); in ${here}out/ it wrote:
  quickstart.h5            snapshots (/snapshots/p) and the gather (/traces/p)
  quickstart.json          the run report: times, sizes, settings
  quickstart.xmf           the snapshots for ParaView (open this, not the .h5)
  quickstart_snapshot.png  a vertical slice through the source: the wavefront
  quickstart_gather.png    the shot gather
  quickstart.log           the stages' whole output
Next: the binary is ${here}build/app/rtm3d (not installed); to call it as rtm3d here:
  export PATH="$root/build/app:\$PATH"
then the tour in README.md, or a small migration (seconds on 2 cores):
  ${here}run/migrate_example.sh
END
