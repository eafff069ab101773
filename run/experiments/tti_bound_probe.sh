#!/usr/bin/env bash
# run/experiments/tti_bound_probe.sh - what bounds the tma tti kernel, on one GPU in one call:
# the tree copied to .probe with run/experiments/tti_trials/bound_probe.patch applied, built
# four times (rtm3d only, in parallel): as it is, -DRTM_TTI_EXP_NO_MATH (update_cell without
# its second derivatives, Hz and leapfrog: the outputs a sum of its inputs), -DRTM_TTI_EXP_NO_CELLS
# (the own-cell slot handed over without its nine copies: p[n-1], q[n-1] and the coefficients
# never read from memory), and both; then `rtm3d bench` of run/examples/bench_tti_512.ini with
# the constant model, tma 3 stages 64x4 zblock 64, tti and vti, fp32 and fp16. The probes'
# outputs are wrong by design: throughput only. Logs under $OUT; a table of MCells/s last.
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/tti_bound_probe || exit 1
device_summary
rm -rf .probe && mkdir .probe
cp -r CMakeLists.txt app solver io memory config tests run .probe/
[ -d .deps ] && cp -r .deps .probe/
patch -d .probe -p1 < run/experiments/tti_trials/bound_probe.patch > "$out/patch.log" 2>&1 ||
  { cat "$out/patch.log"; exit 1; }
declare -A flags=([as_is]="" [no_math]="-DRTM_TTI_EXP_NO_MATH" [no_cells]="-DRTM_TTI_EXP_NO_CELLS"
  [neither]="-DRTM_TTI_EXP_NO_MATH -DRTM_TTI_EXP_NO_CELLS")
variants="as_is no_math no_cells neither"
for v in $variants; do
  (cmake -S .probe -B ".probe/build-$v" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DRTM3D_CUDA_ARCHITECTURES=90 "-DCMAKE_CUDA_FLAGS=${flags[$v]}" > "$out/build_$v.log" 2>&1 &&
    ninja -C ".probe/build-$v" rtm3d >> "$out/build_$v.log" 2>&1 || echo "build $v failed") &
done
wait
model=(--set model.file= --set model.epsilon=0.2 --set model.delta=0.1 --set model.theta=30
  --set model.phi=20)
for precision in fp32 fp16; do
  for eq in tti vti; do
    for v in $variants; do
      log="$out/bench_${v}_${precision}_$eq.log"
      timeout 120 ".probe/build-$v/app/rtm3d" bench run/examples/bench_tti_512.ini "${model[@]}" \
        --set physics.equation=$eq --set memory.model_precision=$precision --set kernel.halo=tma \
        --set kernel.stages=3 --set kernel.block_x=64 --set kernel.block_y=4 \
        --set kernel.zblock=64 > "$log" 2>&1
      rate=$(grep -E "^best:" "$log" | tail -1 | sed -E 's/.*device: ([0-9]+) MCells.*= ([0-9.]+%).*/\1 \2/')
      row "$v $precision $eq" "${rate:-failed: $(tail -1 "$log")}"
    done
  done
done
(cd "$out" && tar czf logs.tar.gz --remove-files ./*.log)
echo
cat "$summary"
