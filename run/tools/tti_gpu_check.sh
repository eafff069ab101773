#!/usr/bin/env bash
# run/tools/tti_gpu_check.sh - the GPU machine's check of the vti/tti cuda kernel, in one call:
#   configure + build, test_cuda_tti (and test_cuda_backend: the iso path goes through the
#   same dispatch), compute-sanitizer memcheck (50 steps) and racecheck (RACECHECK_STEPS,
#   20), SANITIZER_TOOLS="" for neither, and tti/vti bench
#   figures per halo variant and tile on a 512^3 volume (constant anisotropic model;
#   TTI_VARIANTS="eq:halo:stages:tile:zblock[:fp16] ..." overrides the list), a short table last.
#
#   run/tools/tti_gpu_check.sh [all|test|bench|study] [BUILD_DIR]
#
#   study  the 512^3 tti model (run/tools/bench_model.sh tti), the gate deck
#          run/examples/bench_tti_512.ini on device and vmm-compressed memory, fp32 and fp16,
#          and `rtm3d bench --compression` (vmm vs vmm-compressed, early/middle/late)
#
# Logs under $OUT (or run/out/), at most 8 files: device.txt, build.log, ctest.log,
# sanitizer_memcheck.log, sanitizer_racecheck.log, bench.log. Exit status non-zero when a
# build, a test or a sanitizer run failed.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1 # repo root, $out, .deps, nvcc
mode="${1:-all}"
build="${2:-build-ttigpu}"
failed=0
device_info "$out/device.txt"

# the constant anisotropic model of the bench rows (and of the study without h5py)
constant_model=(--set model.file= --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20)

step "configure + build ($build)"
device_configure "$build" > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
ninja -C "$build" test_cuda_tti test_cuda_backend rtm3d >> "$out/build.log" 2>&1 ||
  { grep -E "error|FAILED" "$out/build.log" | head -30; exit 1; }
grep -E "warning|spill" "$out/build.log" | grep -v " 0 bytes spill" | head -10

if [ "$mode" = all ] || [ "$mode" = test ]; then
  step "ctest test_cuda_tti, test_cuda_backend"
  timeout 420 ctest --test-dir "$build" -R "^test_cuda_(tti|backend)$" -V \
    > "$out/ctest.log" 2>&1 || failed=1
  grep -E "rel L2|tests passed|Failed|FAILED|Passed|seed|TEST_SEED|\[  ERROR|failure" "$out/ctest.log" | tail -45

  step "compute-sanitizer on test_cuda_tti (50 steps, every halo variant on device memory)"
  for tool in ${SANITIZER_TOOLS-memcheck racecheck}; do # SANITIZER_TOOLS="" skips them
    # one memory strategy per halo variant (RTM3D_TEST_FEW); racecheck (slow) only on the
    # tti halo variants unless RACECHECK_FILTER says otherwise
    filter=""
    [ "$tool" = racecheck ] && filter="${RACECHECK_FILTER:-test_tti_every_variant}"
    # racecheck is ~100x slower: RACECHECK_STEPS (default 20) steps instead of 50
    steps=50
    [ "$tool" = racecheck ] && steps="${RACECHECK_STEPS:-20}"
    RTM3D_TEST_STEPS=$steps RTM3D_TEST_FEW=1 RTM3D_TEST_FILTER="$filter" timeout "${SANITIZER_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 3 \
      "$build/tests/gpu/test_cuda_tti" > "$out/sanitizer_$tool.log" 2>&1
    rc=$?
    summary="$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/sanitizer_$tool.log" | tail -1)"
    echo "$tool: exit $rc ${summary:-no summary}"
    [ "$rc" -eq 0 ] || failed=1
  done
fi

if [ "$mode" = all ] || [ "$mode" = bench ]; then
  step "bench 512^3 (constant model vp 2000, eps 0.2, delta 0.1, theta 30, phi 20; device memory)"
  : > "$out/bench.log"
  timing=(--set memory.strategy=device --set bench.warmup=5 --set bench.steps=20)
  # equation:halo:stages:tile:zblock[:fp16]
  variants="${TTI_VARIANTS:-tti:sync:2:32x8:32 tti:ldgsts:2:32x8:32 tti:ldgsts:3:32x8:32
tti:tma:2:32x8:32 tti:tma:3:32x8:32 tti:tma:2:32x16:32 tti:tma:2:64x4:32 tti:tma:2:32x4:32
tti:tma:2:64x8:32 tti:tma:3:32x8:64 tti:ldgsts:2:32x16:32 vti:sync:2:32x8:32 vti:tma:2:32x8:32
vti:tma:3:64x4:64 vti:ldgsts:2:32x8:32 tti:tma:3:32x8:64:fp16 tti:tma:3:32x8:32:fp16
tti:ldgsts:3:32x8:64:fp16 vti:tma:3:64x4:64:fp16}"
  for v in $variants; do
    IFS=: read -r eq halo st tile zb precision <<< "$v"
    # shellcheck disable=SC2086
    timeout 120 "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet "${constant_model[@]}" "${timing[@]}" \
      --set physics.equation=$eq --set kernel.halo=$halo --set kernel.stages=$st \
      --set kernel.block_x=${tile%x*} --set kernel.block_y=${tile#*x} --set kernel.zblock=$zb \
      --set memory.model_precision="${precision:-fp32}" > "$out/bench_one.log" 2>&1 || failed=1
    { echo "#### $v"; cat "$out/bench_one.log"; } >> "$out/bench.log"
    printf "%-4s %-7s s%s %-6s z%-3s %-4s " "$eq" "$halo" "$st" "$tile" "$zb" "${precision:-fp32}"
    grep -E "^single" "$out/bench_one.log" | tail -1 || tail -2 "$out/bench_one.log"
  done
  grep -m1 -E "^copy" "$out/bench.log"
  rm -f "$out/bench_one.log"
fi
if [ "$mode" = study ]; then
  # the layered model from its description (rtm3d makemodel, no Python)
  model=()
  run/tools/bench_model.sh tti "$build/app/rtm3d" || exit 1
  step "gate: rtm3d bench run/examples/bench_tti_512.ini (layered tti model)"
  for precision in fp32 fp16; do
    for strategy in device vmm-compressed; do
      printf "%-4s %-15s " "$precision" "$strategy"
      timeout 150 "$build/app/rtm3d" bench run/examples/bench_tti_512.ini --quiet "${model[@]}" \
        --set memory.model_precision=$precision --set memory.strategy=$strategy 2>&1 |
        tee -a "$out/study.log" | grep -E "^single|error" | tail -1
    done
  done
  step "compression study (time.steps 800, windows of bench.steps)"
  timeout 400 "$build/app/rtm3d" bench run/examples/bench_tti_512.ini --compression --quiet \
    "${model[@]}" --csv "$out/compression.csv" > "$out/compression.log" 2>&1 || failed=1
  grep -E "^(copy|early|middle|late)" "$out/compression.log"
fi
exit "$failed"
