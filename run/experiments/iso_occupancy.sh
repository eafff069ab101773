#!/usr/bin/env bash
# run/experiments/iso_occupancy.sh - whether a third block a multiprocessor lifts the iso tma
# kernel on the GPU machine (issue 34, item 5): ncu (iso_profile.sh) found it at 84 registers
# a thread, two 288-thread blocks an SM (registers and shared memory both limit), 27.5% of
# the warps, 22% of the cycles with no warp to issue. Builds the tree (build-new, kept when
# there) and a copy of it whose iso_zmarch_tma is capped at REGS registers (default 72,
# __maxnreg__ in place of __launch_bounds__: three blocks of 288 threads fit the register
# file, and with kernel.stages = 2 their rings fit shared memory), then runs `rtm3d bench`
# of run/examples/bench_512.ini (constant model, tma 128x8, zblock 32) at stages 2 and 3 with
# each build, alternated, ROUNDS times (default 2). Logs under $OUT (or
# run/out/iso_occupancy; the benches' output in bench.log), their result lines last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_occupancy || exit 1
device_summary
regs="${REGS:-72}"
[ -x build-new/app/rtm3d ] || device_build build-new "$out/build.log" || exit 1
copy="$(mktemp -d)" work="$(mktemp)"
trap 'rm -rf "$copy" "$work"' EXIT
tar --exclude='./build*' --exclude=./.probe --exclude=./.git -cf - . | tar -xf - -C "$copy"
sed -i "s/__launch_bounds__(MAX_THREADS + 32)/__maxnreg__($regs)/" "$copy/solver/cuda/iso_cuda.cu"
grep -q "__maxnreg__($regs)" "$copy/solver/cuda/iso_cuda.cu" || { row cap "not applied"; exit 1; }
(cd "$copy" && device_build build-regs "$out/build_regs.log") || exit 1
for round in $(seq "${ROUNDS:-2}"); do
  for stages in 2 3; do
    for side in new regs; do
      binary=build-new/app/rtm3d
      [ "$side" = regs ] && binary="$copy/build-regs/app/rtm3d"
      echo "== $side stages $stages #$round" >> "$out/bench.log"
      "$binary" bench run/examples/bench_512.ini --set model.file= --set kernel.halo=tma \
        --set kernel.stages="$stages" --set kernel.block_x=128 --set kernel.block_y=8 \
        --set kernel.zblock=32 > "$work" 2>&1
      cat "$work" >> "$out/bench.log"
      row "$side stages $stages #$round" "$(grep -E "MCells/s|copy" "$work" | tail -2 | tr '\n' ' ')"
    done
  done
done
step summary
cat "$summary"
