#!/usr/bin/env bash
# run/experiments/iso_skeleton.sh - how fast the iso tma kernel's memory traffic alone can go
# on the GPU machine (issue 34, item 5: is the H200's 79% of copy held by the stencil's work
# or by the pattern of its loads?). Two copies of the tree, both with iso_stages.patch (a tma
# instance of 5 stages): the kernel as it is, and with iso_skeleton.patch (the same
# TMA loads, waits and stores; one multiply-add a cell in place of the stencil). `rtm3d
# bench` of iso 512^3 (run/examples/bench_512.ini, a constant model) at each shape of SHAPES
# (STAGES:BLOCK_X:BLOCK_Y:ZBLOCK), ROUNDS times (default 2), the two builds alternated; then
# run/experiments/iso_l2_probe.sh of the skeleton (the table's shape and L2_SHAPES, default
# 128x16). Logs under $OUT (or run/out/iso_skeleton); a row a bench, and the probe's, last.
set -uo pipefail
here="$(realpath "$(dirname "$0")")"
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_skeleton || exit 1
device_summary
full="$(mktemp -d)" skel="$(mktemp -d)" work="$(mktemp)"
trap 'rm -rf "$full" "$skel" "$work"' EXIT
# each a copy of the tree with the patches applied, built into COPY/build
STAMPS=run/experiments/iso_stages.patch device_build_stamped . "$full" "$out/build_full.log" ||
  { row "build (kernel)" FAILED; exit 1; }
STAMPS=run/experiments/iso_stages.patch EXTRA_PATCH="$here/iso_skeleton.patch" \
  device_build_stamped . "$skel" "$out/build_skeleton.log" ||
  { row "build (skeleton)" FAILED; exit 1; }
row build ok
shapes="${SHAPES:-3:128:8:32 4:128:16:32}"
for round in $(seq "${ROUNDS:-2}"); do
  for shape in $shapes; do
    IFS=: read -r stages bx by zblock <<<"$shape"
    for build in full skel; do
      dir=$full
      [ $build = skel ] && dir=$skel
      device_bench "$build $shape #$round" "$dir/build/app/rtm3d" bench \
        run/examples/bench_512.ini --set model.file= --set kernel.halo=tma \
        --set kernel.stages="$stages" --set kernel.block_x="$bx" --set kernel.block_y="$by" \
        --set kernel.zblock="$zblock"
      row "$build $shape #$round" "$bench_figure"
    done
  done
done
step "the skeleton's L2 and DRAM (iso_l2_probe.sh)"
OUT="$out/l2" BUILD=0 SHAPES="${L2_SHAPES:-128x16}" bash "$here/iso_l2_probe.sh" "$skel/build" |
  grep -vE "^(name|NVIDIA|[A-Z][a-z][a-z] [A-Z])" | tail -12 >"$work"
cat "$work" >>"$summary"
step summary
cat "$summary"
