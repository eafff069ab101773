#!/usr/bin/env bash
# run/experiments/warm_up_check.sh BASE_SRC - what making the GPU's context on a thread of
# its own (rtm_backend_warm_up of run/experiments/warm_up.patch, not in the product: apply
# it to the tree first, `git apply run/experiments/warm_up.patch`) takes off a run's set-up,
# on the GPU machine in one call: builds the tree and an earlier tree (BASE_SRC, `git
# archive COMMIT | tar -x -C DIR` made before the call), runs ctest -L gpu of the tree (GPU_TESTS=0 skips it), writes the iso
# bench deck's model file (rtm3d makemodel), then runs `rtm3d model` of 100 steps with each
# build in turn, ROUNDS times (default 2): iso with the model file, and tti on a constant
# model. A row a run: the process's wall and the report's set-up (its model load and its
# propagator's creation, where CUDA's context is made or waited for). Logs under $OUT (or
# run/out/warm_up).
set -uo pipefail
base_src="$(realpath "${1:?usage: run/experiments/warm_up_check.sh BASE_SRC}")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/warm_up || exit 1
device_summary
device_build_pair "$base_src" || exit 1
if [ "${GPU_TESTS:-1}" != 0 ]; then
  step "ctest -L gpu"
  device_gpu_tests build-new || failed=1
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
build-new/app/rtm3d makemodel run/examples/bench_512.ini >"$out/makemodel.log" 2>&1 ||
  { tail -3 "$out/makemodel.log"; exit 1; }
cases=("iso run/examples/bench_512.ini" "tti run/examples/bench_tti_512.ini --set model.file=")
for round in $(seq "${ROUNDS:-2}"); do
  for c in "${cases[@]}"; do
    read -r name deck sets <<<"$c"
    for side in base new; do
      binary=build-new/app/rtm3d
      [ "$side" = base ] && binary="$base_src/build-base/app/rtm3d"
      start=$(date +%s.%N)
      # shellcheck disable=SC2086
      "$binary" model "$deck" $sets --set time.steps=100 --set receivers.layout=none --force \
        --quiet --set output.dir="$work" --set output.name="$side" >>"$out/runs.log" 2>&1 ||
        failed=1
      wall=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      row "$name $side #$round" "wall $wall s; $(run/tools/report_timings.py "$work/$side.json" \
        setup setup_load setup_propagator propagate)"
    done
  done
done
echo
cat "$summary"
exit "${failed:-0}"
