#!/usr/bin/env bash
# run/experiments/codec_profile.sh - the zfp codec's kernels under ncu on the GPU machine,
# one call: builds the tree, runs the GPU tests (GPU_TESTS=0 skips them) and, with
# SANITIZE=1, test_codec_gpu under compute-sanitizer's memcheck, racecheck, initcheck and
# synccheck (sanitizer.log); then (NCU=0 skips it) profiles
# test_codec_gpu's timed launches (256^3, a Ricker wavefront, rate 4: the second round of
# test_throughput, seven launches: analyse, allocate, encode; locate, decompress; locate,
# image) with ncu's default set plus the warp-state, instruction and source sections;
# MIGRATE=1: also the codec's kernels in a 512^3 iso migration (a snapshot's compression, a
# decompression in the backward pass: the field of a whole shot, not a wavefront). Logs
# under $OUT (or run/out/codec_profile), a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/codec_profile || exit 1
device_summary
device_build build-new "$out/build.log" || exit 1
if [ "${GPU_TESTS:-1}" = 1 ]; then
  device_gpu_tests build-new || failed=1
fi
build-new/tests/gpu/test_codec_gpu > "$out/codec_gpu.log" 2>&1
status=$?
[ $status = 0 ] || failed=1
row test_codec_gpu "exit $status $(grep -cE "OK \]" "$out/codec_gpu.log") ok"
grep -E "^256" "$out/codec_gpu.log" >> "$summary"
if [ "${SANITIZE:-0}" = 1 ]; then
  for tool in memcheck racecheck initcheck synccheck; do
    echo "== $tool" >> "$out/sanitizer.log"
    compute-sanitizer --tool $tool --error-exitcode 3 build-new/tests/gpu/test_codec_gpu \
      >> "$out/sanitizer.log" 2>&1
    status=$?
    [ $status = 0 ] || failed=1
    row "compute-sanitizer $tool" "exit $status $(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" \
      "$out/sanitizer.log" | tail -1)"
  done
fi
[ "${NCU:-1}" = 1 ] || { cat "$summary"; exit "$failed"; }
rep="$(mktemp -d)"
RTM3D_TEST_FILTER=test_throughput ncu --clock-control none -k regex:codec_ --launch-skip 7 \
  --launch-count 7 --import-source yes -o "$rep/codec" \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis --section SchedulerStats \
  --section SourceCounters build-new/tests/gpu/test_codec_gpu > "$out/ncu.txt" 2>&1
ncu -i "$rep/codec.ncu-rep" >> "$out/ncu.txt" 2>&1
grep -E "^  codec_|Duration|DRAM Throughput|Compute \(SM\) Th|Registers Per|Achieved Occupancy|Executed Instructions  |No Eligible|Active Threads Per Warp|Branch Efficiency" \
  "$out/ncu.txt" >> "$summary"
if [ "${MIGRATE:-0}" = 1 ]; then
  # the codec's kernels in a 512^3 iso shot (1000 steps, imaged every 5, zfp at 6 bits):
  # the 101st snapshot's compression (3 launches) and a decompression of the backward pass
  # (locate and decode; the forward pass launched 602: 600 for its 200 snapshots, 2 for the
  # round trip it reports, so skipping 800 reaches the backward pass's 100th)
  w="$(mktemp -d)"
  keys=(--set model.file= --set time.steps=1000 --set shots.layout=grid --set shots.x_count=1
    --set shots.y_count=1 --set shots.z=200 --set output.dir="$w")
  build-new/app/rtm3d model run/examples/bench_512.ini "${keys[@]}" --quiet --force \
    --set output.name=obs > "$out/runs.log" 2>&1
  : > "$out/ncu_migrate.txt"
  for range in "300 3" "800 2"; do
    read -r skip count <<< "$range"
    ncu --clock-control none -k regex:codec_ --launch-skip "$skip" --launch-count "$count" \
      --section SpeedOfLight --section WarpStateStats --section InstructionStats \
      --section Occupancy build-new/app/rtm3d migrate run/examples/bench_512.ini "${keys[@]}" \
      --force --set rtm.observed="$w/obs.h5" --set rtm.reconstruction=snapshots \
      --set rtm.snapshot_precision=zfp --set output.name=zfp >> "$out/ncu_migrate.txt" 2>&1
  done
  row "512^3 iso shot, the codec's kernels" ""
  grep -E "^  codec_|Duration|Active Threads Per Warp|Executed Instructions  |Achieved Occ" \
    "$out/ncu_migrate.txt" | sed 's/(const.*//; s/(CodecShape.*//' >> "$summary"
  rm -rf "$w"
fi
rm -rf "$rep"
cat "$summary"
exit "$failed"
