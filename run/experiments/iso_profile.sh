#!/usr/bin/env bash
# run/experiments/iso_profile.sh [BUILD_DIR] - what holds the iso kernel below the copy
# bandwidth (issue 34, item 5), on the GPU machine in one call: ncu (--clock-control none)
# of one step of `rtm3d bench run/examples/bench_512.ini` (512^3, kernel.* auto, a constant
# model) after the bench's warm-up: speed of light, memory workload (DRAM bytes against the
# 16 a cell counted, L2 hit rate), occupancy, warp states and scheduler statistics. Files
# under $OUT (or run/out/iso_profile): ncu_iso.txt (the details page), a short table last.
# BUILD_DIR: the build of the tree to profile (default build-new; built or brought up to date
# first, BUILD=0 to take it as it is).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_profile || exit 1
device_summary
build="${1:-build-new}"
device_build_once "$build" || exit 1
timeout 240 ncu --clock-control none -k regex:iso_zmarch --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
  --section WarpStateStats --section LaunchStats --section SchedulerStats \
  --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__warps_active.avg.pct_of_peak_sustained_active \
  "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set model.file= \
  --set bench.warmup=3 --set bench.steps=1 > "$out/ncu_iso.txt" 2>&1
echo "ncu exit $?"
grep -E "iso_zmarch|DRAM Throughput|Memory Throughput|dram__bytes_(read|write)|lts__t_sector_hit_rate|Achieved Occupancy|Theoretical Occupancy|Registers Per Thread|Block Limit|Duration|Eligible Warps|Issued Warp|No Eligible|Active Warps Per Scheduler|Warp Cycles Per Issued|L2 Hit Rate|Mem Busy|Max Bandwidth" \
  "$out/ncu_iso.txt" | head -40
