#!/usr/bin/env bash
# run/experiments/zfp_check.sh - issue 37 on the GPU machine, one call: builds the tree,
# runs the GPU tests of the snapshot store, the migration and the codec (the codec's
# kernels = its C reference bit for bit, and their speed at 256^3; GPU_ALL=1: every GPU
# test), then, for iso (and tti with TTI=1), migrates one 512^3 shot (1000 steps,
# run/examples/bench_512.ini or bench_tti_512.ini, a constant model) with fp32 snapshots,
# zfp snapshots at each of RATES (rtm.snapshot_rate, default "6") and boundary, and
# validates each zfp image against the fp32 one; with STEP1=1 also each equation imaged every
# step (rtm.imaging_step = 1, where fp32 and fp16 snapshots do not fit), the ways of
# STEP1_WAYS (default "auto boundary"; "zfp": snapshots in zfp named), auto's image against
# boundary's. Logs under $OUT (or run/out/zfp), a short table last: each run's wall and its
# forward and backward passes (the codec's cost is zfp's excess over fp32's, a snapshot at a
# time).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/zfp || exit 1
device_summary
device_build build-new "$out/build.log" || exit 1
if [ "${GPU_ALL:-0}" = 1 ]; then
  device_gpu_tests build-new
else
  (cd build-new && ctest -R "imaging_gpu|migration_gpu|codec_gpu|checkpoint_gpu" --output-on-failure > "$out/ctest.log" 2>&1); row ctest "$(grep -E "tests passed|Failed" "$out/ctest.log" | head -4 | tr '\n' ' ')"
fi
build-new/tests/gpu/test_codec_gpu > "$out/codec_gpu.log" 2>&1; grep -E "^256" "$out/codec_gpu.log" >> "$summary"
w=$(mktemp -d)
keys=(--set model.file= --set time.steps=1000 --set shots.layout=grid --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200)
# migrate NAME DECK KEY=VALUE...: one migration of the gathers $w/obs_EQ.h5, a row of its times
migrate() {
  local name=$1 deck=$2; shift 2
  local sets=(); for kv in "$@"; do sets+=(--set "$kv"); done
  build-new/app/rtm3d migrate "$deck" "${keys[@]}" "${sets[@]}" --force --set output.dir=$w --set output.name="$name" > $w/log 2>&1; echo "exit $?" >> $w/log
  cat $w/log >> "$out/runs.log"
  row "$name" "$(grep -E "done in|round trip|exit" $w/log | tr '\n' ' ' | cut -c1-300)"
  # the store as the preflight counted it and as its allocation took it (issue 37: within 5%)
  row "$name store" "$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1]))["reconstruction"]; print("estimated %.3f GB, taken %.3f GB" % (r["estimate_bytes"] / 1e9, r["measured_bytes"] / 1e9))' "$w/$name.json" 2>&1 | tail -1)"
}
equations=(iso); [ "${TTI:-0}" = 1 ] && equations+=(tti)
for eq in "${equations[@]}"; do
  deck=run/examples/bench_512.ini; [ $eq = tti ] && deck=run/examples/bench_tti_512.ini
  build-new/app/rtm3d model $deck "${keys[@]}" --quiet --force --set output.dir=$w --set output.name=obs_$eq >> "$out/runs.log" 2>&1
  migrate ${eq}_snapshots_fp32 $deck rtm.observed=$w/obs_$eq.h5 rtm.reconstruction=snapshots rtm.snapshot_precision=fp32
  for rate in ${RATES:-6}; do
    migrate ${eq}_snapshots_zfp$rate $deck rtm.observed=$w/obs_$eq.h5 rtm.reconstruction=snapshots rtm.snapshot_precision=zfp rtm.snapshot_rate=$rate
    row "$eq zfp $rate vs fp32 image" "$(build-new/app/rtm3d validate $w/${eq}_snapshots_zfp$rate.h5 $w/${eq}_snapshots_fp32.h5 --rtol 1e-2 --datasets /image 2>&1 | grep -m2 -i "image" | tr '\n' ' ')"
  done
  migrate ${eq}_boundary_fp32 $deck rtm.observed=$w/obs_$eq.h5 rtm.reconstruction=boundary
done
if [ "${STEP1:-0}" = 1 ]; then
  for eq in "${equations[@]}"; do
    deck=run/examples/bench_512.ini; [ $eq = tti ] && deck=run/examples/bench_tti_512.ini
    for way in ${STEP1_WAYS:-auto boundary}; do
      if [ "$way" = zfp ]; then
        migrate ${eq}_step1_zfp $deck rtm.observed=$w/obs_$eq.h5 rtm.reconstruction=snapshots rtm.snapshot_precision=zfp rtm.imaging_step=1
      else
        migrate ${eq}_step1_$way $deck rtm.observed=$w/obs_$eq.h5 rtm.reconstruction=$way rtm.imaging_step=1
      fi
    done
    [ -e "$w/${eq}_step1_auto.h5" ] && [ -e "$w/${eq}_step1_boundary.h5" ] &&
      row "$eq step 1: auto vs boundary image" "$(build-new/app/rtm3d validate $w/${eq}_step1_auto.h5 $w/${eq}_step1_boundary.h5 --rtol 1e-2 --datasets /image 2>&1 | grep -m2 -i "image" | tr '\n' ' ')"
    grep -E "reconstruction = auto" "$out/runs.log" | tail -1 >> "$summary"
  done
fi
cat "$summary"
