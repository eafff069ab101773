#!/usr/bin/env bash
# run/experiments/iso_l2_probe.sh [BUILD_DIR] - whether the iso kernel is held by the L2 or by
# the DRAM on the GPU machine (issue 34, item 5), in one call: ncu (--clock-control none) of
# one step of `rtm3d bench run/examples/bench_512.ini` (512^3, a constant model) with the
# table's shape and with SHAPES' others (default "64x16"; tma 3 stages, zblock 32): the L2's
# and the DRAM's throughput against their peaks, the L2's sectors read and written a cell,
# and where the warps stall (the stall reasons an issued instruction). Files under
# $OUT (or run/out/iso_l2_probe): ncu_<shape>.txt; a short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/iso_l2_probe || exit 1
device_summary
build="${1:-build-new}"
device_build_once "$build" || exit 1
metrics="dram__throughput.avg.pct_of_peak_sustained_elapsed,lts__throughput.avg.pct_of_peak_sustained_elapsed"
metrics+=",lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_hit_rate.pct"
metrics+=",dram__bytes_read.sum,dram__bytes_write.sum,gpu__time_duration.sum"
metrics+=",l1tex__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed"
metrics+=",smsp__issue_active.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active"
metrics+=",regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio"
cells=$((512 * 512 * 512))
for shape in table ${SHAPES:-64x16}; do
  sets=()
  if [ "$shape" != table ]; then
    sets=(--set kernel.halo=tma --set kernel.stages=3 --set kernel.zblock=32
      --set kernel.block_x="${shape%x*}" --set kernel.block_y="${shape#*x}")
  fi
  timeout 200 ncu --clock-control none -k regex:iso_zmarch --launch-skip 3 --launch-count 1 \
    --metrics "$metrics" --page raw --print-units base \
    "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set model.file= \
    --set bench.warmup=3 --set bench.steps=1 "${sets[@]}" > "$out/ncu_$shape.txt" 2>&1
  value() { awk -v m="$1" '$1 == m { print $NF; exit }' "$out/ncu_$shape.txt" | tr -d ,; }
  row "$shape: time (ns), DRAM %, L2 %" "$(value gpu__time_duration.sum) $(value dram__throughput.avg.pct_of_peak_sustained_elapsed) $(value lts__throughput.avg.pct_of_peak_sustained_elapsed)"
  row "$shape: L1 %, SM %, issue active %" "$(value l1tex__throughput.avg.pct_of_peak_sustained_elapsed) $(value sm__throughput.avg.pct_of_peak_sustained_elapsed) $(value smsp__issue_active.avg.pct_of_peak_sustained_elapsed)"
  row "$shape: L2 B a cell read, written; hit %" "$(awk -v r="$(value lts__t_sectors_op_read.sum)" -v w="$(value lts__t_sectors_op_write.sum)" -v n=$cells 'BEGIN { printf "%.2f %.2f", 32 * r / n, 32 * w / n }') $(value lts__t_sector_hit_rate.pct)"
  row "$shape: DRAM B a cell read, written" "$(awk -v r="$(value dram__bytes_read.sum)" -v w="$(value dram__bytes_write.sum)" -v n=$cells 'BEGIN { printf "%.2f %.2f", r / n, w / n }')"
  row "$shape: stalls an issue (largest)" "$(grep -E 'smsp__average_warps_issue_stalled_.*_per_issue_active.ratio' "$out/ncu_$shape.txt" |
    awk '{ n = $1; sub(/smsp__average_warps_issue_stalled_/, "", n); sub(/_per_issue_active.ratio/, "", n); print $NF, n }' |
    sort -rn | head -5 | awk '{ printf "%s %s; ", $2, $1 }')"
done
echo
cat "$summary"
