#!/usr/bin/env bash
# run/experiments/pinned_ways.sh [BUILD_DIR] - what each way of bringing the source wavefield
# back costs with its store in page-locked host memory (memory.imaging = pinned), where every
# snapshot or shell crosses PCIe: one 512^3 shot of STEPS (default 500) steps imaged every
# 5th, the bench decks' constant models, for iso (and tti with TTI=1), by WAYS (default "auto
# fp32 fp16 zfp boundary device": the last is auto with the store on the GPU, the yardstick),
# and `rtm3d model`'s propagation of the same shot (the step). EQUATIONS (default "iso"; TTI=1
# adds tti) names the equations; GPU_TESTS=1 runs `ctest -L gpu` first. A row a migration: its
# wall, set-up, forward and backward passes, and what auto said. Logs under $OUT (or
# run/out/pinned_ways).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/pinned_ways || exit 1
build="${1:-build-new}"
device_prepare "$build" || exit 1
rtm3d="$build/app/rtm3d"
w=$(mktemp -d -p /dev/shm)
trap 'rm -rf "$w"' EXIT
keys=(--set model.file= --set time.steps="${STEPS:-500}" --set rtm.imaging_step=5
  --set shots.layout=grid --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200
  --force --set output.dir="$w")
phases() { run/tools/report_timings.py "$1" setup propagate forward backward imaging 2>&1 | tr '\n' ' '; }
read -r -a equations <<< "${EQUATIONS:-iso}"
[ "${TTI:-0}" = 1 ] && equations+=(tti)
for eq in "${equations[@]}"; do
  deck=run/examples/bench_512.ini
  [ "$eq" != iso ] && deck="run/examples/bench_tti_512.ini --set physics.equation=$eq"
  # shellcheck disable=SC2086 # the deck and its equation
  "$rtm3d" model $deck "${keys[@]}" --quiet --set output.name="obs_$eq" >> "$out/runs.log" 2>&1
  row "$eq model" "$(phases "$w/obs_$eq.json")"
  for way in ${WAYS:-auto fp32 fp16 zfp boundary device}; do
    case $way in
      auto) sets=(--set memory.imaging=pinned) ;;
      device) sets=() ;;
      boundary) sets=(--set memory.imaging=pinned --set rtm.reconstruction=boundary) ;;
      *) sets=(--set memory.imaging=pinned --set rtm.reconstruction=snapshots
        --set rtm.snapshot_precision="$way") ;;
    esac
    name="${eq}_$way"
    # shellcheck disable=SC2086
    /usr/bin/time -f "%e s wall" "$rtm3d" migrate $deck "${keys[@]}" "${sets[@]}" \
      --set rtm.observed="$w/obs_$eq.h5" --set output.name="$name" > "$w/log" 2>&1
    echo "exit $?" >> "$w/log"
    cat "$w/log" >> "$out/runs.log"
    row "$name" "$(tail -2 "$w/log" | tr '\n' ' ') $(phases "$w/$name.json")"
    grep -m1 -o "rtm.reconstruction = auto: .\{0,400\}" "$w/log" >> "$summary"
    rm -f "$w/$name.h5"
  done
done
echo
cat "$summary"
exit "$failed"
