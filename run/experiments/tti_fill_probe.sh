#!/usr/bin/env bash
# run/experiments/tti_fill_probe.sh - where the tti propagator's set-up goes on the GPU
# machine (issue 34: `model` of 8 tti shots at 1.06-1.07 x its propagation, the coefficient
# volumes' fill 0.52-0.57 s of it): copies the tree, applies tti_fill_stamps.patch (the
# seconds of cuda_create's parts, and of rtm_cuda_backend_upload_planes' staging, fills,
# waits for copies and copy calls; PROBE_BLOCK_PLANES sets its staging block, 8 planes in
# the product), builds it, runs `rtm3d model` of one step of the 512^3 bench decks with a
# constant model and no receivers: tti with all cores and with 4, tti with 32-plane blocks,
# vti, iso; /usr/bin/time beside each. Logs under $OUT (or run/out/tti_fill_probe); the short
# table last.
#
#   run/experiments/tti_fill_probe.sh          (device tool: carry .deps)
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/tti_fill_probe || exit 1
device_summary
copy=/tmp/rtm3d_fill_probe
step "build (stamped)"
STAMPS=run/experiments/tti_fill_stamps.patch device_build_stamped . "$copy" "$out/build.log" ||
  { row "build (stamped)" FAILED; exit 1; }
rtm3d="$copy/build/app/rtm3d"
runs=/dev/shm/rtm3d_fill_probe
rm -rf "$runs" && mkdir -p "$runs"
common=(--set backend.name=cuda --set model.file= --set receivers.layout=none --set time.steps=1
  --set output.dir="$runs" --force)
cases=("tti_1 - run/examples/bench_tti_512.ini"
  "tti_2 - run/examples/bench_tti_512.ini"
  "tti_omp4 OMP_NUM_THREADS=4 run/examples/bench_tti_512.ini"
  "tti_planes32 PROBE_BLOCK_PLANES=32 run/examples/bench_tti_512.ini"
  "tti_fp16 - run/examples/bench_tti_512.ini --set memory.model_precision=fp16"
  "vti - run/examples/bench_tti_512.ini --set physics.equation=vti"
  "iso - run/examples/bench_512.ini")
for c in "${cases[@]}"; do
  read -r name env deck extra <<<"$c"
  step "$name"
  # shellcheck disable=SC2086
  { env ${env/#-/} /usr/bin/time -f "TIME %e s wall, %U s user, %S s sys" "$rtm3d" model \
    "$deck" "${common[@]}" $extra --set output.name="$name" 2>&1; echo "exit $?"; } |
    stamp > "$out/$name.log"
  grep -E "STAMP|TIME|exit" "$out/$name.log" > "$out/$name.txt"
  grep -q " exit 0$" "$out/$name.txt" || { row "$name" FAILED; failed=1; continue; }
  row "$name" "$(run/tools/report_timings.py "$runs/$name.json" setup_load setup_propagator \
    propagate) | $(grep -o 'upload.*' "$out/$name.txt" | head -1)"
  row "" "$(grep -o 'TIME.*' "$out/$name.txt")"
done
rm -rf "$runs"
echo
cat "$summary"
exit "$failed"
