#!/usr/bin/env bash
# run/tools/gpu_check.sh - the GPU machine's check of the cuda backend, in one call:
#   configure + build (offline deps from .deps/), ctest -L gpu, compute-sanitizer memcheck
#   and racecheck on a short run of every variant, the bench matrix on a 512^3 volume, and
#   a short table last.
#
#   run/tools/gpu_check.sh [all|test|bench|tune] [BUILD_DIR]
#
#   test   ctest -L gpu, compute-sanitizer, bad input, the recommended variant
#   bench  the --matrix sweep and ncu of each halo variant (long)
#   tune   the gate (bench_512.ini as it is, device and vmm-compressed memory), a sweep
#          of tma tile x zblock x stages on device memory, and ncu of the gate's kernel
#          with the bytes it moves per cell
#
# Logs go under $OUT (or run/out/ when OUT is unset), at most 8 files (the device tool's
# limit): device, cmake, build, ctest, sanitizer_{memcheck,racecheck}; bench.{log,csv,json},
# ncu.txt; tune.log, ncu_tune.txt. SANITIZER_TIMEOUT (seconds, default 400) bounds each
# compute-sanitizer run. Exit status: non-zero when a build,
# a test or a sanitizer run failed.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1 # repo root, $out, .deps, nvcc
mode="${1:-all}"
build="${2:-build-gpu}"
failed=0
device_info "$out/device.txt"

step "configure + build ($build)"
device_configure "$build" > "$out/cmake.log" 2>&1 || { tail -30 "$out/cmake.log"; exit 1; }
targets="test_cuda_backend rtm3d"
ninja -C "$build" $targets > "$out/build.log" 2>&1 || { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
grep -E "warning" "$out/build.log" | head -10

if [ "$mode" = all ] || [ "$mode" = test ]; then
  step "ctest -L gpu"
  ctest --test-dir "$build" -L gpu -R "^test_cuda_backend$" --output-on-failure > "$out/ctest.log" 2>&1 || failed=1
  grep -E "rel L2|tests passed|Failed|FAILED|Passed|seed" "$out/ctest.log" | tail -40

  step "compute-sanitizer (50 steps per variant)"
  for tool in memcheck racecheck; do
    RTM3D_TEST_STEPS=50 timeout "${SANITIZER_TIMEOUT:-400}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$build/tests/gpu/test_cuda_backend" > "$out/sanitizer_$tool.log" 2>&1
    rc=$?
    summary="$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer_$tool.log" | tail -1)"
    echo "$tool: exit $rc ${summary:-no summary}"
    [ "$rc" -eq 0 ] || failed=1
  done

  step "bad input: each a clear error, non-zero exit, no output file"
  bad() { # expected-exit description --set ...
    local want="$1" what="$2"
    shift 2
    rm -f "$out/bad.csv"
    "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set model.file= --csv "$out/bad.csv" "$@" \
      > "$out/bad.log" 2>&1
    local rc=$?
    local verdict=ok
    { [ "$rc" -eq "$want" ] && [ ! -e "$out/bad.csv" ]; } || { verdict=WRONG; failed=1; }
    echo "$what: exit $rc (want $want) $verdict: $(grep -m1 'error' "$out/bad.log")"
  }
  bad 2 "block 33x16" --set kernel.block_x=33
  bad 2 "block 128x32 (1024 threads)" --set kernel.block_x=128 --set kernel.block_y=32
  bad 1 "4096^3 volume" --set grid.nx=4096 --set grid.ny=4096 --set grid.nz=4096
  bad 2 "memory.strategy = host" --set memory.strategy=host
  rm -f "$out/bad.log" "$out/bad.csv"

  step "recommended variant (tma, 128x8, zblock 32, 3 stages), constant model, device and vmm-compressed"
  for strategy in device vmm-compressed; do
    "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set model.file= \
      --set kernel.halo=tma --set kernel.block_x=128 --set kernel.block_y=8 \
      --set kernel.zblock=32 --set kernel.stages=3 --set memory.strategy=$strategy 2>&1 |
      grep -E "^(copy|best)"
  done
fi

if [ "$mode" = tune ]; then
  run/tools/bench_model.sh iso "$build/app/rtm3d" || exit 1
  tune() { # label --set ... : one row of the bench table
    local label="$1"
    shift
    local row
    row="$(timeout 90 "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet "$@" 2>&1 |
      tee -a "$out/tune.log" | grep -E "^single|error" | head -1)"
    printf "%-26s %s\n" "$label" "$row"
  }
  step "gate: rtm3d bench run/examples/bench_512.ini (as it is; then vmm-compressed)"
  timeout 90 "$build/app/rtm3d" bench run/examples/bench_512.ini 2>&1 | tee -a "$out/tune.log" |
    grep -E "^(device|copy|best)"
  tune "gate vmm-compressed" --set memory.strategy=vmm-compressed
  step "tma tile x zblock x stages, device memory, constant model"
  T="--set model.file= --set kernel.halo=tma"
  for shape in 128x8 128x4 64x16; do
    for zblock in 16 32 48 64; do
      for stages in 2 3; do
        tune "tma $shape z$zblock s$stages" $T --set kernel.block_x="${shape%x*}" \
          --set kernel.block_y="${shape#*x}" --set kernel.zblock=$zblock --set kernel.stages=$stages
      done
    done
  done
  for halo in sync ldgsts; do
    tune "$halo 128x8 z32 s2 (same tile)" --set model.file= --set kernel.halo=$halo \
      --set kernel.stages=2
  done
  step "ncu: the gate's kernel, one 512^3 step (--clock-control none)"
  timeout 240 ncu --clock-control none -k regex:iso_zmarch --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
    --section WarpStateStats --section LaunchStats \
    --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
    "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set bench.warmup=3 \
    --set bench.steps=1 > "$out/ncu_tune.txt" 2>&1
  grep -E "^ +(Duration|DRAM Throughput|L2 Cache Throughput|L2 Hit Rate|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued|dram__bytes|lts__t_sector_hit)" \
    "$out/ncu_tune.txt" | head -12
  awk '/dram__bytes_(read|write).sum/ { v = $NF; gsub(",", "", v); u = $(NF-1);
         f = u == "Gbyte" ? 1e9 : u == "Mbyte" ? 1e6 : u == "Kbyte" ? 1e3 : 1; b += v * f }
       END { if (b > 0) printf "DRAM bytes per cell: %.2f (16 counted)\n", b / (512 * 512 * 512) }' \
    "$out/ncu_tune.txt"
fi

if [ "$mode" = all ] || [ "$mode" = bench ]; then
  run/tools/bench_model.sh iso "$build/app/rtm3d" || exit 1
  step "bench matrix, 512^3"
  timeout 300 "$build/app/rtm3d" bench run/examples/bench_512.ini --matrix --csv "$out/bench.csv" \
    --json "$out/bench.json" > "$out/bench.log" 2>&1 || failed=1

  step "ncu: one 512^3 step per halo variant (--clock-control none)"
  for v in sync:2 ldgsts:2 ldgsts:3 tma:2; do
    halo="${v%%:*}" stages="${v##*:}"
    timeout 240 ncu --clock-control none -k regex:iso_zmarch --launch-skip 3 --launch-count 1 \
      --section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy \
      --section WarpStateStats --section LaunchStats \
      "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set kernel.halo="$halo" \
      --set kernel.stages="$stages" --set bench.warmup=3 --set bench.steps=1 \
      > "$out/ncu_one.txt" 2>&1
    { echo "==== $halo stages $stages"; cat "$out/ncu_one.txt"; } >> "$out/ncu.txt"
    echo "-- $halo stages $stages"
    grep -E "^ +(Duration|DRAM Throughput|Memory Throughput|L2 Hit Rate|Achieved Occupancy|Registers Per Thread|Stall|Warp Cycles Per Issued|Theoretical Occupancy|Block Limit)" \
      "$out/ncu_one.txt" | head -14
  done
  rm -f "$out/ncu_one.txt"
  step "bench table"
  tail -70 "$out/bench.log"
fi
exit "$failed"
