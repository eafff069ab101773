#!/usr/bin/env bash
# run/experiments/codec_profile.sh - the zfp codec's kernels under ncu on the GPU machine,
# one call: builds the tree, runs test_codec_gpu (the kernels = the C reference, bit for
# bit), then profiles test_codec_gpu's timed launches (256^3, a Ricker
# wavefront, rate 6: the last compress, decompress and decompress-and-image of test_throughput) with ncu's
# default set plus the warp-state and instruction sections. Logs under $OUT (or
# run/out/codec_profile), a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/codec_profile || exit 1
device_summary
device_build build-new "$out/build.log" || exit 1
build-new/tests/gpu/test_codec_gpu > "$out/codec_gpu.log" 2>&1
row test_codec_gpu "exit $? $(grep -E "PASSED|FAILED" "$out/codec_gpu.log" | tr '\n' ' ')"
grep -E "^256" "$out/codec_gpu.log" >> "$summary"
RTM3D_TEST_FILTER=test_throughput ncu --clock-control none -k regex:codec_ --launch-skip 9 --launch-count 3 \
  --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
  --section InstructionStats --section MemoryWorkloadAnalysis --section SchedulerStats \
  build-new/tests/gpu/test_codec_gpu > "$out/ncu.txt" 2>&1
grep -E "codec_|Duration|Memory Throughput|DRAM Throughput|Compute \(SM\)|Registers Per|Achieved Occupancy|Executed Instructions |Issue Slots Busy|No Eligible|Stall|Warp Cycles Per Issued" "$out/ncu.txt" | head -60 >> "$summary"
cat "$summary"
