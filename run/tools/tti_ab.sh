#!/usr/bin/env bash
# run/tools/tti_ab.sh BASE_TREE - the tti/vti kernel of this tree against another source tree
# (BASE_TREE: a checkout of the commit before, e.g. `git archive HEAD | tar -x -C .base`,
# carried along by the device tool) on one GPU, in one call: both built (in parallel), then
# `rtm3d bench` of run/examples/bench_tti_512.ini with the constant anisotropic model,
# kernel.* auto unless a variant names settings, base and new interleaved ROUNDS times
# (default 2) so that clock drift hits both.
#   VARIANTS   ";"-separated "[ENV... |] SETS...": SETS are key=value words (--set), ENV
#              VAR=value words in the run's environment; a variant with ENV runs on this tree
#              only (the switches of a probe build, a trial patch applied: the patches
#              name theirs; earlier trials' patches: run/results/kernels.md). Default "memory.model_precision=fp32;
#              memory.model_precision=fp16".
#   TESTS      ctest -L gpu of this tree's build (new), of the base (base), or none (default)
#   TEST_ENVS  ";"-separated ENV lists: test_cuda_tti of this tree's build under each
#   NCU=1      DRAM and L2 bytes a cell of one step (ncu) of this tree's build for each variant
#              of NCU_VARIANTS (the same form; default fp32)
# Logs under $OUT; a table of MCells/s (and ncu's bytes a cell) last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/tti_ab || exit 1
base="$(cd "${1:?usage: run/tools/tti_ab.sh BASE_TREE}" && pwd)"
device_summary
[ -d "$base/.deps" ] || { [ -d .deps ] && cp -r .deps "$base/"; }
(cd "$base" && device_build build-base "$out/build_base.log") &
device_build build-new "$out/build_new.log" || exit 1
wait $! || exit 1
case "${TESTS:-none}" in
  new) device_gpu_tests build-new ;;
  base) (cd "$base" && out="$out" device_gpu_tests build-base) ;;
esac
IFS=';' read -r -a test_envs <<< "${TEST_ENVS:-}"
for e in "${test_envs[@]}"; do
  read -r -a envs <<< "$e"
  env "${envs[@]}" build-new/tests/gpu/test_cuda_tti > "$out/test_cuda_tti_$(echo "$e" | tr ' =:,' '____').log" 2>&1
  row "test_cuda_tti $e" "rc $?"
done
model=(--set model.file= --set model.epsilon=0.2 --set model.delta=0.1 --set model.theta=30
  --set model.phi=20)
split_variant() { # "[ENV |] SETS" -> envs=(...) sets=(...)
  local e="" s="$1"
  [[ "$1" == *"|"* ]] && { e="${1%%|*}"; s="${1#*|}"; }
  read -r -a envs <<< "$e"
  sets=()
  for kv in $s; do sets+=(--set "$kv"); done
}
IFS=';' read -r -a variants <<< "${VARIANTS:-memory.model_precision=fp32;memory.model_precision=fp16}"
for round in $(seq "${ROUNDS:-2}"); do
  for v in "${variants[@]}"; do
    split_variant "$v"
    trees=(base new)
    [ "${#envs[@]}" = 0 ] || trees=(new)
    for which in "${trees[@]}"; do
      exe="build-new/app/rtm3d"
      [ "$which" = base ] && exe="$base/build-base/app/rtm3d"
      log="$out/bench_${which}.log"
      one="$out/bench_one.log" # this run alone: a failed run's row says so
      env "${envs[@]}" "$exe" bench run/examples/bench_tti_512.ini "${model[@]}" "${sets[@]}" > "$one" 2>&1
      status=$?
      { echo "== round $round $which $v (exit $status)"; cat "$one"; } >> "$log"
      rate=$(grep -E "^best:" "$one" | tail -1 | sed -E 's/.*device: ([0-9]+) MCells.*= ([0-9.]+%).*/\1 \2/')
      row "$which $v (round $round)" "${rate:-failed (exit $status, $log)}"
    done
  done
done
if [ "${NCU:-0}" = 1 ]; then # B/cell: bytes (ncu's sector counts x 32) over the 512^3 cells
  IFS=';' read -r -a variants <<< "${NCU_VARIANTS:-memory.model_precision=fp32}"
  n=0
  for v in "${variants[@]}"; do
    split_variant "$v"
    n=$((n + 1))
    env "${envs[@]}" timeout 200 ncu --clock-control none -k regex:tti_zmarch --launch-skip 3 --launch-count 1 --csv \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_op_read.sum,lts__t_sectors_op_write.sum,lts__t_sector_op_read_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,lts__throughput.avg.pct_of_peak_sustained_elapsed,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      build-new/app/rtm3d bench run/examples/bench_tti_512.ini --quiet "${model[@]}" --set bench.warmup=3 \
      --set bench.steps=1 "${sets[@]}" > "$out/ncu_$n.csv" 2>&1
    row "ncu $v" "$(python3 - "$out/ncu_$n.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows:
    sys.exit("no ncu metrics (see %s)" % sys.argv[1])
head, vals = rows[0], rows[1:]
m = {r[head.index("Metric Name")]: (r[head.index("Metric Unit")], r[head.index("Metric Value")]) for r in vals}
cells = 512 ** 3
scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "sector": 32}
out = []
for k in ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_sectors_op_read.sum",
          "lts__t_sectors_op_write.sum", "lts__t_sectors_srcunit_tex_op_read.sum"):
    u, x = m[k]
    out.append("%s %.2f" % (k.split("__")[1].split(".")[0], float(x.replace(",", "")) * scale.get(u, 1) / cells))
for k in ("lts__t_sector_op_read_hit_rate.pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
          "dram__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__time_duration.sum"):
    out.append("%s %s %s" % (k.split("__")[1].split(".")[0], m[k][1], m[k][0]))
print("B/cell: " + "; ".join(out))
PY
)"
  done
fi
echo
cat "$summary"
