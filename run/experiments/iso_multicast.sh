#!/usr/bin/env bash
# run/experiments/iso_multicast.sh - do two blocks that share halo rows, loading them once
# for both, lift the iso tma kernel on the GPU machine (issue 34, item 5: the H200's iso
# kernel is held by its tiles' traffic through the L2; run/results/kernels.md)?
# iso_multicast.patch runs the tma kernel in clusters of 2 blocks stacked in y: both keep
# the union of their tiles with halo (CL by + 2R rows) in each slot, each block loads half
# of its rows and the tensor copy multicasts them to both; a slot of p is refilled once both
# blocks' consumer warps released it (remote mbarrier arrivals). RTM3D_ISO_CLUSTER=1 runs
# the kernel as it is from the same binary; a shape whose clustered slots do not fit runs
# unclustered (the bench's log says which ran). Built for sm_90a (the multicast wants it).
# Runs: the tma tests of test_cuda_backend with clusters (every pipeline shape against the
# cpu reference; all of ctest -L gpu with GPU_TESTS=1), then `rtm3d bench` of iso 512^3
# (run/examples/bench_512.ini, a constant model) at each shape of SHAPES
# (STAGES:BLOCK_X:BLOCK_Y:ZBLOCK), clustered and not alternated, ROUNDS times (default 1);
# SKELETON=1 also with iso_skeleton.patch (the stencil one multiply-add: the loads alone).
# VARIANTS (default "1: 2:"): CLUSTER:SUSPEND pairs, SUSPEND the producer's suspend hint in
# ns waiting for a free slot of p (RTM3D_ISO_SUSPEND; 0 spins; empty: the kernel's 1 ms).
# L2=1 (with SKELETON=1): the skeleton's L2 and DRAM by ncu at tma 3 128x16 32, clustered
# and not (run/experiments/iso_l2_probe.sh).
# Logs under $OUT (or run/out/iso_multicast); a row a bench, last.
set -uo pipefail
here="$(realpath "$(dirname "$0")")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_multicast || exit 1
device_summary
mc="$(mktemp -d)" skel="$(mktemp -d)"
trap 'rm -rf "$mc" "$skel"' EXIT
export RTM3D_CUDA_ARCH=90a
STAMPS=run/experiments/iso_multicast.patch device_build_stamped . "$mc" "$out/build.log" ||
  { row "build (multicast)" FAILED; exit 1; }
builds=mc
if [ "${SKELETON:-0}" = 1 ]; then
  STAMPS=run/experiments/iso_multicast.patch EXTRA_PATCH="$here/iso_skeleton.patch" \
    device_build_stamped . "$skel" "$out/build_skeleton.log" ||
    { row "build (skeleton)" FAILED; exit 1; }
  builds="mc skel"
fi
row build ok
if [ "${GPU_TESTS:-0}" = 1 ]; then
  device_gpu_tests "$mc/build" || failed=1
else
  step "test_cuda_backend, tma, clustered"
  (cd "$mc/build/tests/gpu" && RTM3D_TEST_DATA="$mc/tests/data" RTM3D_TEST_FILTER='test_tma*' \
    timeout 400 ./test_cuda_backend) >"$out/test_tma.log" 2>&1
  row "test_cuda_backend test_tma* (clusters)" "status $? ($(grep -c "OK \]" "$out/test_tma.log") ok)"
  grep -E "FAILED|Error|error" "$out/test_tma.log" | head -5 | tee -a "$summary"
fi
shapes="${SHAPES:-4:128:16:32 3:128:16:32 2:128:16:32 4:128:8:32 3:128:8:32 2:128:8:32 3:64:16:32}"
for round in $(seq "${ROUNDS:-1}"); do
  for shape in $shapes; do
    IFS=: read -r stages bx by zblock <<<"$shape"
    for build in $builds; do
      dir=$mc
      [ "$build" = skel ] && dir=$skel
      for variant in ${VARIANTS:-1: 2:}; do
        IFS=: read -r cl suspend <<<"$variant"
        device_bench "$build cluster $cl suspend ${suspend:-default} $shape #$round" \
          env RTM3D_ISO_CLUSTER="$cl" RTM3D_ISO_SUSPEND="${suspend:-1000000}" timeout 90 \
          "$dir/build/app/rtm3d" bench run/examples/bench_512.ini \
          --set model.file= --set kernel.halo=tma --set kernel.stages="$stages" \
          --set kernel.block_x="$bx" --set kernel.block_y="$by" --set kernel.zblock="$zblock"
        ran=1
        grep -q "clusters of 2" "$bench_log" && ran=2
        row "$build ran-cl$ran${suspend:+ wait $suspend} $shape #$round" "$bench_figure"
      done
    done
  done
done
if [ "${L2:-0}" = 1 ] && [ "${SKELETON:-0}" = 1 ]; then
  # the skeleton's L2 and DRAM by ncu, tma 3 128x16 32, clustered and not
  for cl in 1 2; do
    step "the skeleton's L2 and DRAM, cluster $cl (iso_l2_probe.sh)"
    RTM3D_ISO_CLUSTER=$cl OUT="$out/l2_cl$cl" BUILD=0 SHAPES=128x16 \
      bash "$here/iso_l2_probe.sh" "$skel/build" >/dev/null 2>&1
    grep "^128x16" "$out/l2_cl$cl/summary.txt" | sed "s/^/cluster $cl /" | tee -a "$summary"
  done
fi
step summary
cat "$summary"
exit "$failed"
