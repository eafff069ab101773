#!/usr/bin/env bash
# run/tools/refactor_check.sh BASE_SRC - the GPU machine's check that a refactor changed no
# behaviour, in one call: builds the tree and an earlier tree (BASE_SRC, a source folder such
# as `git archive COMMIT | tar -x -C base-src` made before the call) with the kernels, runs
# run/tools/compare_builds.sh on the cuda backend (every output bit for bit), ctest -L gpu of
# the tree, and the iso and tti bench of both builds, alternated twice (kernel MCells/s
# within noise). Logs under $OUT (or run/out/), a short table last.
set -uo pipefail
base_src="$(realpath "${1:?usage: run/tools/refactor_check.sh BASE_SRC}")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1
device_summary
device_build_pair "$base_src" || exit 1

device_compare_builds "$base_src" || failed=1

step "ctest -L gpu"
device_gpu_tests build-new || failed=1

step "bench A/B"
for deck in bench_512 bench_tti_512; do
  for round in 1 2; do
    for side in base new; do
      binary=build-new/app/rtm3d
      [ "$side" = base ] && binary="$base_src/build-base/app/rtm3d"
      line="$("$binary" bench "run/examples/$deck.ini" --quiet --set model.file= 2>&1 |
        tee -a "$out/bench.log" | grep -E "^best" | head -1)"
      row "$deck $side #$round" "${line:-no result}"
    done
  done
done
grep -E "^(device|copy)" "$out/bench.log" | sort -u | head -4 | tee -a "$summary"
echo
cat "$summary"
exit "$failed"
