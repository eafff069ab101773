#!/usr/bin/env bash
# run/experiments/zfp_check.sh - issue 37 on the GPU machine, one call: builds the tree,
# runs the GPU tests of the snapshot store, the migration and the codec, then migrates one
# 512^3 iso shot (1000 steps, run/examples/bench_512.ini, a constant model) with fp32
# snapshots, zfp snapshots (rtm.snapshot_rate, default 6) and boundary, and validates the
# zfp image against the fp32 one. Logs under $OUT (or run/out/zfp), a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/zfp || exit 1
device_summary
device_build build-new "$out/build.log" || exit 1
(cd build-new && ctest -R "imaging_gpu|migration_gpu|codec_gpu|checkpoint_gpu" --output-on-failure > "$out/ctest.log" 2>&1); row ctest "$(grep -E "tests passed|Failed" "$out/ctest.log" | head -4 | tr '\n' ' ')"
grep -E "zfp|in the step" "$out/ctest.log" | head -12 >> "$summary"
w=$(mktemp -d); deck=run/examples/bench_512.ini
keys=(--set model.file= --set time.steps=1000 --set shots.layout=grid --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200)
build-new/app/rtm3d model $deck "${keys[@]}" --quiet --force --set output.dir=$w --set output.name=obs >> "$out/runs.log" 2>&1
for way in "snapshots fp32" "snapshots zfp" "boundary fp32"; do set -- $way
  build-new/app/rtm3d migrate $deck "${keys[@]}" --force --set output.dir=$w --set output.name=m_$1_$2 --set rtm.observed=$w/obs.h5 --set rtm.reconstruction=$1 --set rtm.snapshot_precision=$2 > $w/log 2>&1; echo "exit $?" >> $w/log
  cat $w/log >> "$out/runs.log"
  row "$1 $2" "$(grep -E "done in|round trip|exit" $w/log | tr '\n' ' ' | cut -c1-300)"
done
row "zfp vs fp32 image" "$(build-new/app/rtm3d validate $w/m_snapshots_zfp.h5 $w/m_snapshots_fp32.h5 --rtol 1e-2 --datasets /image 2>&1 | grep -m2 -i "image" | tr '\n' ' ')"
cat "$summary"
