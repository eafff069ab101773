#!/usr/bin/env bash
# run/tools/tti_profile.sh [BUILD_DIR] - profile of the tti kernel on a GPU machine, one call:
# build rtm3d, ncu (--clock-control none) of one 512^3 tti step (HALO tma, STAGES 3, TILE
# 64x4, zblock 64, PRECISION fp32 coefficients, constant anisotropic model), a histogram of the kernel's SASS opcodes
# (what the instruction count per cell is made of) and the kernel's SASS with the warp
# stall samples of each instruction (where the time goes). Files under $OUT: ncu_tti.txt,
# ncu_details.txt (the sections), ncu_raw.csv, sass_per_cell.txt (executed instructions per
# cell by opcode), stalls_top.txt (sass_stalls_top.py: the stall reasons and the 30
# instructions where warps wait most),
# sass_hist.txt, sass_stalls.csv. Short table last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out || exit 1 # repo root, $out, .deps, nvcc
build="${1:-build-ttigpu}"
device_configure "$build" > /dev/null 2>&1
ninja -C "$build" rtm3d > "$out/build.log" 2>&1 || { grep -E "error" "$out/build.log" | head; exit 1; }
tile="${TILE:-64x4}"
variant=(--set physics.equation=tti --set model.file= --set model.epsilon=0.2 --set model.delta=0.1
  --set model.theta=30 --set model.phi=20 --set kernel.halo="${HALO:-tma}"
  --set kernel.stages="${STAGES:-3}" --set kernel.block_x="${tile%x*}"
  --set kernel.block_y="${tile#*x}" --set kernel.zblock=64
  --set memory.model_precision="${PRECISION:-fp32}")
timeout 240 ncu --clock-control none -k regex:tti_zmarch --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
  --section ComputeWorkloadAnalysis --section InstructionStats --section SchedulerStats \
  --section MemoryWorkloadAnalysis --section SourceCounters --import-source no \
  --export "$out/tti.ncu-rep" --force-overwrite \
  --metrics smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_fadd_pred_on.sum,smsp__sass_thread_inst_executed_op_fmul_pred_on.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,smsp__inst_executed_op_global_ld.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_lg_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_membar_per_issue_active.ratio,smsp__average_warps_issue_stalled_drain_per_issue_active.ratio,smsp__average_warps_issue_stalled_branch_resolving_per_issue_active.ratio \
  "$build/app/rtm3d" bench run/examples/bench_512.ini --quiet --set bench.warmup=3 \
  --set bench.steps=1 "${variant[@]}" > "$out/ncu_tti.txt" 2>&1
ncu --import "$out/tti.ncu-rep" --page details > "$out/ncu_details.txt" 2>&1
# the profiled instance's mangled name, from its template arguments as ncu prints them:
# tti_zmarch_tma<(bool)1, float, (int)64, (int)2, (int)2> -> tti_zmarch_tmaILb1EfLi64ELi2ELi2E
# (ncu of CUDA 13 prints tti_zmarch_tma<1, __half, 64, 1, 2, 2>, without the casts)
kernel="$(grep -o -m1 'tti_zmarch_tma<[^>]*>' "$out/ncu_details.txt" | sed -E \
  -e 's/<(\(bool\))?([01]), /ILb\2E/' -e 's/__half, /6__half/' -e 's/float, /f/' \
  -e 's/(\(int\))?([0-9]+)(, |>)/Li\2E/g')"
obj="$(find "$build" -name 'tti_cuda.cu.o' | head -1)"
pattern="${SASS_KERNEL:-$kernel}"
if [ -z "$pattern" ]; then # sync, ldgsts: set SASS_KERNEL (a mangled-name prefix) for the histogram
  echo "tti_profile: no tma instance profiled (HALO=${HALO:-tma}): sass_hist.txt left empty" >&2
  pattern=no_instance_named
fi
cuobjdump -sass "$obj" 2>/dev/null | awk '
  /Function :/ { keep = ($0 ~ /'"$pattern"'E/) }
  keep && /\/\*[0-9a-f]+\*\// { for (i = 1; i <= NF; ++i) if ($i ~ /^[A-Z][A-Z0-9_.]+$/ && $i != "PT") { split($i, o, "."); n[o[1]]++; t++; break } }
  END { for (k in n) printf "%-10s %6d\n", k, n[k]; printf "%-10s %6d\n", "TOTAL", t }' |
  sort -k2 -n -r > "$out/sass_hist.txt"
ncu --import "$out/tti.ncu-rep" --page source --csv --print-source sass > "$out/sass_stalls.csv" 2>&1
ncu --import "$out/tti.ncu-rep" --page raw --csv > "$out/ncu_raw.csv" 2>&1
python3 "$(dirname "$0")/sass_stalls_top.py" "$out/sass_stalls.csv" 30 > "$out/stalls_top.txt" 2>&1
rm -f "$out/tti.ncu-rep"
# executed instructions per cell by opcode (thread instructions = warp instructions x 32 over
# the step's cells), with each opcode's share of the warp stall samples
python3 - "$out/sass_stalls.csv" > "$out/sass_per_cell.txt" <<'PY'
import csv, collections, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 5]
head = rows[0]; rows = rows[1:]
src, ex, st = head.index("Source"), head.index("Instructions Executed"), head.index("Warp Stall Sampling (All Samples)")
cells = 512 ** 3
count, stall = collections.Counter(), collections.Counter()
for r in rows:
    words = r[src].split()
    if not words: continue
    op = words[1] if words[0].startswith("@") else words[0]
    count[op] += int(r[ex] or 0); stall[op] += int(r[st] or 0)
total, samples = sum(count.values()), max(1, sum(stall.values()))
print("instructions per cell %.1f" % (total * 32 / cells))
for op, n in count.most_common(25):
    print("%-34s %6.1f  stalls %5.1f%%" % (op, n * 32 / cells, 100 * stall[op] / samples))
PY
head -27 "$out/sass_per_cell.txt"
grep -E "^ +(Duration|SM Frequency|DRAM Throughput|L1/TEX Cache Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|Executed Ipc Active|Issue Slots Busy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps Per Scheduler|Achieved Occupancy|Registers Per Thread|Warp Cycles Per Issued Instruction|Theoretical Occupancy)" "$out/ncu_details.txt"
python3 - "$out/ncu_raw.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
head = next((r for r in rows if "smsp__inst_executed.sum" in r), None)
if head:
    values = rows[rows.index(head) + 2]
    for name, value in zip(head, values):
        if "stalled" in name: print("%-80s %s" % (name, value))
PY
