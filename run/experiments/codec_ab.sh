#!/usr/bin/env bash
# run/experiments/codec_ab.sh BASE_TREE - the codec's kernels of this tree against another
# source tree's (BASE_TREE: `git archive COMMIT | tar -x -C .probe/base-src`, carried) on one
# GPU, in one call: both built, test_codec_gpu of each (this tree's = the C reference bit for
# bit; both sides' kernel times at 256^3), then for iso and tti (EQUATIONS) one 512^3 shot
# (1000 steps, a constant model, run/examples/bench_512.ini or bench_tti_512.ini) migrated
# with fp32 snapshots (this tree) and with zfp snapshots at rtm.snapshot_rate RATE (default
# 6) by base and by this tree, alternated ROUNDS times (default 1): the codec's cost is
# zfp's forward and backward excess over fp32's. The two trees' zfp images are compared
# (the same bytes, so the same image: validate at a tolerance of 0). Exit status non-zero
# when a test, a run or that comparison failed. Logs under $OUT (or run/out/codec_ab), a short table
# last: each run's wall and timings_s.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/codec_ab || exit 1
base_src="$(realpath "${1:?usage: run/experiments/codec_ab.sh BASE_TREE}")"
device_summary
device_build_pair "$base_src" || exit 1
declare -A bin=([base]="$base_src/build-base" [new]=build-new)
for side in base new; do
  "${bin[$side]}/tests/gpu/test_codec_gpu" > "$out/codec_gpu_$side.log" 2>&1
  status=$?
  [ $status = 0 ] || failed=1
  row "test_codec_gpu $side" "exit $status"
  grep -E "^256" "$out/codec_gpu_$side.log" | sed "s/^/$side /" | tee -a "$summary"
done
w=$(mktemp -d)
keys=(--set model.file= --set time.steps=1000 --set shots.layout=grid --set shots.x_count=1
  --set shots.y_count=1 --set shots.z=200)
# migrate SIDE NAME DECK KEY=VALUE...: one migration, a row of its wall and timings
migrate() {
  local side=$1 name=$2 deck=$3
  shift 3
  local sets=()
  for kv in "$@"; do sets+=(--set "$kv"); done
  "${bin[$side]}/app/rtm3d" migrate "$deck" "${keys[@]}" "${sets[@]}" --force \
    --set output.dir="$w" --set output.name="$name" > "$w/log" 2>&1
  local status=$?
  [ $status = 0 ] || failed=1
  echo "exit $status" >> "$w/log"
  cat "$w/log" >> "$out/runs.log"
  row "$name" "$(grep -E "done in|exit" "$w/log" | tr '\n' ' ' | cut -c1-80) $(python3 \
    run/tools/report_timings.py "$w/$name.json" forward backward imaging 2>&1 | tail -1)"
}
for eq in ${EQUATIONS:-iso tti}; do
  deck=run/examples/bench_512.ini
  [ "$eq" = tti ] && deck=run/examples/bench_tti_512.ini
  build-new/app/rtm3d model $deck "${keys[@]}" --quiet --force --set output.dir="$w" \
    --set output.name="obs_$eq" >> "$out/runs.log" 2>&1 || { row "$eq model" FAILED; failed=1; }
  obs=rtm.observed=$w/obs_$eq.h5
  migrate new "${eq}_fp32" $deck "$obs" rtm.reconstruction=snapshots rtm.snapshot_precision=fp32
  for _ in $(seq "${ROUNDS:-1}"); do
    for side in base new; do
      migrate $side "${eq}_zfp_$side" $deck "$obs" rtm.reconstruction=snapshots \
        rtm.snapshot_precision=zfp rtm.snapshot_rate="${RATE:-6}"
    done
  done
  # the same bytes decode to the same floats: the images equal (validate's exit status at
  # a tolerance of 0)
  build-new/app/rtm3d validate "$w/${eq}_zfp_new.h5" "$w/${eq}_zfp_base.h5" --rtol 0 \
    --datasets /image > "$w/validate" 2>&1
  status=$?
  [ $status = 0 ] || failed=1
  row "$eq zfp new vs base image" "exit $status $(grep -m1 "/image" "$w/validate")"
done
rm -rf "$w"
cat "$summary"
exit "$failed"
