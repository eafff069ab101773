#!/usr/bin/env bash
# run/experiments/zfp_large.sh - issue 37's third bar where it is meant: a migration that,
# without compressed snapshots, `auto` would send to `boundary` on one GPU. One shot, 1000
# steps, N^3 cells (N default 800: fp32 snapshots take 410 GB, fp16 205 GB, zfp at 6 bits
# 77 GB a run), run/examples/bench_tti_512.ini and bench_512.ini (EQUATIONS, default "tti"; "tti iso" both) with a
# constant model and its grid set to N^3: `model` writes the gathers, then `migrate`
# with rtm.reconstruction = auto (its log says what it passed and took) and = boundary, side
# by side in one call, and the auto image validated against boundary's (boundary rebuilds
# the source wavefield to some 3e-7 of the stored one: its image stands for fp32
# snapshots'; WAYS="auto checkpoint" where boundary does not fit, as for tti at N = 1000).
# GPU_TESTS=1 runs ctest -L gpu first. Logs under $OUT (or run/out/zfp_large), a short table last: each run's wall
# and passes, the speed-up, the images' distance. SKIP_BUILD=1 reuses build-new.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/zfp_large || exit 1
device_summary
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x build-new/app/rtm3d ]; then
  device_build build-new "$out/build.log" || exit 1
fi
device_gpu_tests_asked build-new
n="${N:-800}"
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
keys=(--set model.file= --set time.steps=1000 --set grid.nx="$n" --set grid.ny="$n" --set grid.nz="$n"
  --set shots.layout=grid --set shots.x_count=1 --set shots.y_count=1 --set shots.z=200)
read -r -a equations <<<"${EQUATIONS:-tti}"
for eq in "${equations[@]}"; do
  deck=run/examples/bench_tti_512.ini; [ "$eq" = iso ] && deck=run/examples/bench_512.ini
  step "$eq $n^3: model"
  build-new/app/rtm3d model $deck "${keys[@]}" --quiet --force --set output.dir="$w" \
    --set output.name="obs_$eq" >>"$out/runs.log" 2>&1 || { row "$eq model" FAILED; failed=1; continue; }
  read -r -a ways <<<"${WAYS:-auto boundary}"
  for way in "${ways[@]}"; do
    step "$eq $n^3: migrate, $way"
    /usr/bin/time -f "process %e s" build-new/app/rtm3d migrate $deck "${keys[@]}" \
      --set rtm.observed="$w/obs_$eq.h5" --set rtm.reconstruction=$way --force \
      --set output.dir="$w" --set output.name="${eq}_$way" >"$w/log" 2>&1
    echo "exit $?" >>"$w/log"
    cat "$w/log" >>"$out/runs.log"
    cp "$w/${eq}_$way.json" "$out/" 2>/dev/null
    row "$eq $way" "$(grep -E "done in|process|^exit" "$w/log" | tr '\n' ' ' | cut -c1-300)"
    grep -E "reconstruction = auto|round trip" "$w/log" | head -2 | cut -c1-400 >>"$summary"
    row "$eq $way phases" "$(python3 run/tools/report_timings.py "$w/${eq}_$way.json" 2>&1 | tr '\n' ' ' | cut -c1-300)"
  done
  ((${#ways[@]} > 1)) && row "$eq ${ways[0]} against ${ways[1]}" "$(build-new/app/rtm3d validate "$w/${eq}_${ways[0]}.h5" "$w/${eq}_${ways[1]}.h5" \
    --rtol 1e-2 --datasets /image 2>&1 | grep -m2 -i "image" | tr '\n' ' ')"
  rm -f "$w"/*.h5
done
echo
cat "$summary"
exit "$failed"
