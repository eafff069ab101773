#!/usr/bin/env bash
# run/tti_pipeline_check.sh [default|options|all] - device calls for the pipelined tma kernel
# (tti_zmarch_tma), each within one call's 10 minutes:
#   default  the default build through run/tti_gpu_check.sh test (test_cuda_tti bit for bit
#            against the cpu reference, memcheck, racecheck on every halo variant) and bench
#   options  the two experiment builds (-DRTM_TTI_TMA_THREE_BLOCKS, -DRTM_TTI_UNROLL_QUEUES):
#            the bench rows and test_cuda_tti of each
# A short table last. Files under $OUT (at most 8): default/{device.txt, build.log, ctest.log,
# sanitizer_memcheck.log, sanitizer_racecheck.log, bench.log, table.txt}, options.log.
set -uo pipefail
cd "$(dirname "$0")/.."
mode="${1:-default}"
out="${OUT:-run/out}"
mkdir -p "$out/default"
failed=0
variants="${TTI_VARIANTS:-tti:tma:3:64x4:64 tti:tma:3:32x8:64 tti:tma:2:64x4:64 tti:tma:3:32x4:64
tti:tma:3:64x4:64:fp16 vti:tma:3:64x4:64 tti:ldgsts:3:64x4:64}"

if [ "$mode" != options ]; then
  OUT="$out/default" run/tti_gpu_check.sh test build-ttigpu || failed=1
  OUT="$out/default" TTI_VARIANTS="$variants" run/tti_gpu_check.sh bench build-ttigpu |
    grep -E "^(tti|vti|copy)" > "$out/default/table.txt" || failed=1
  echo "== default build"
  cat "$out/default/table.txt"
  [ "$mode" = all ] || exit "$failed"
fi

# shellcheck disable=SC1091
source run/deps.sh env || exit 1
set +e
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi
: > "$out/options.log"
for option in THREE_BLOCKS UNROLL_QUEUES; do
  build="build-tti-$option"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DRTM3D_CUDA_ARCHITECTURES=90 \
    "-DCMAKE_CUDA_FLAGS=-DRTM_TTI_$option" > /dev/null 2>&1
  echo "#### $option" >> "$out/options.log"
  # the bench call builds the tree; then the bit-for-bit test of this build
  OUT="/tmp/tti-$option" TTI_VARIANTS="${OPTION_VARIANTS:-tti:tma:3:64x4:64 tti:tma:3:32x8:64 tti:tma:3:32x4:64}" \
    run/tti_gpu_check.sh bench "$build" | grep -E "^(tti|vti)|spill" | sed "s/^/$option /" >> "$out/options.log" ||
    failed=1
  timeout 300 ctest --test-dir "$build" -R "^test_cuda_tti$" 2>&1 |
    grep -E "tests passed|Failed|FAILED" >> "$out/options.log" || failed=1
done

echo "== experiment builds"
cat "$out/options.log"
exit "$failed"
