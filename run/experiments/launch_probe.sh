#!/usr/bin/env bash
# run/experiments/launch_probe.sh - where a grouped survey's fixed seconds outside its phases
# go (issue 34: two GPUs in shot groups spent 1.6 s of the 8-shot iso survey outside its
# phases against 0.55 s on one GPU). On the GPU machine, one call, carry .deps: builds the
# tree (SKIP_BUILD=1 reuses build-new), then times, ROUNDS times each (default 3):
#   - mpirun -np 2 of /bin/true, with Open MPI's defaults and with the shared-memory
#     transports alone (--mca pml ob1 --mca btl self,vader);
#   - rtm3d info alone and under mpirun -np 2 (CUDA's context, MPI_Init and exit);
#   - `rtm3d model` of the 8-shot survey (iso and tti, 512^3, 1000 steps): the process's wall
#     against its report's propagate (issue 34's bar: <= 1.05).
# Logs under $OUT (or run/out/launch), a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/launch || exit 1
device_summary
device_ranks
if [ "${SKIP_BUILD:-0}" != 1 ] || [ ! -x build-new/app/rtm3d ]; then
  device_build build-new "$out/build.log" || exit 1
fi
device_gpu_tests_asked build-new
rounds="${ROUNDS:-3}"
# timed NAME COMMAND...: the command's wall seconds, ROUNDS times, as a row
timed() {
  local name=$1 walls=()
  shift
  for _ in $(seq "$rounds"); do
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >>"$out/runs.log" 2>&1 || echo "$name failed: $*" >>"$out/runs.log"
    t1=$(date +%s.%N)
    walls+=("$(python3 -c "print('%.3f' % ($t1 - $t0))")")
  done
  row "$name" "${walls[*]} s"
}
mca=(--mca pml ob1 --mca btl self,vader)
timed "mpirun -np 2 true" mpirun --oversubscribe --bind-to none -np 2 /bin/true
timed "mpirun -np 2 (ob1, self,vader) true" mpirun --oversubscribe --bind-to none "${mca[@]}" -np 2 /bin/true
timed "rtm3d info" build-new/app/rtm3d info
timed "mpirun -np 2 rtm3d info" mpirun_np 2 build-new/app/rtm3d info
timed "mpirun -np 2 (ob1, self,vader) rtm3d info" mpirun --oversubscribe --bind-to none "${mca[@]}" -np 2 build-new/app/rtm3d info
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT
survey=(--set model.file= --set time.steps=1000 --set shots.layout=grid --set shots.x_count=4
  --set shots.y_count=2 --set shots.z=200 --quiet --force --set output.dir="$w")
for eq in iso tti; do
  deck=run/examples/bench_512.ini; [ "$eq" = tti ] && deck=run/examples/bench_tti_512.ini
  t0=$(date +%s.%N)
  build-new/app/rtm3d model "$deck" "${survey[@]}" --set output.name="model_$eq" >>"$out/runs.log" 2>&1
  t1=$(date +%s.%N)
  row "model $eq, 8 shots" "$(run/tools/report_timings.py "$w/model_$eq.json" --wall "$t0" \
    "$t1" setup)"
done
echo
cat "$summary"
exit "$failed"
