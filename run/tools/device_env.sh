# shellcheck shell=bash
# run/tools/device_env.sh OUT_DEFAULT - the set-up the device scripts of run/tools/ share;
# sourced by them (source "$(dirname "$0")/device_env.sh" run/out/NAME), not run on its own.
# It
#   - makes the repository root the working directory;
#   - sets out to $OUT, or to OUT_DEFAULT when OUT is unset, and creates that folder;
#   - puts the offline libraries of .deps/ on the pkg-config and loader paths
#     (source run/deps.sh env) when .deps/ was carried along, and leaves the system's
#     libraries otherwise;
#   - turns errexit off again (deps.sh turns it on; the scripts collect failures themselves);
#   - puts /usr/local/cuda/bin on PATH when nvcc is not on it;
# and defines
#   device_info [FILE]     the GPU's name, driver, memory and clocks (nvidia-smi, csv) and
#                          the date (UTC), printed and, with FILE, written to FILE too
#   device_configure DIR   cmake of a Release build with the kernels for sm_$RTM3D_CUDA_ARCH
#                          (default 90; 90a for the arch-specific instructions) in DIR
#                          (Ninja)
#   device_build DIR LOG   device_configure and ninja into LOG; on failure its errors, status 1
#   device_summary         starts the script's short table: summary=$out/summary.txt
#                          (emptied), failed=0, and device_info at its head
#   row NAME TEXT          a line of the script's short table, also appended to $summary
#   device_gpu_tests DIR   ctest -L gpu of the build in DIR (as root too) into
#                          $out/ctest_gpu.log, its count and failures as rows; status 1 on a
#                          failure
#   device_gpu_tests_asked DIR  device_gpu_tests DIR when GPU_TESTS=1, failed=1 on a failure
#   device_prepare DIR     a script's start: device_summary, device_build_once DIR (status 1
#                          on a failure) and device_gpu_tests_asked DIR
#   step TEXT              prints "== TEXT", a section of the script's output
#   device_ranks           for runs of one rank a GPU: exports OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)
#                          and NCCL_NVLS_ENABLE=0 (NVLink multicast off on shared hosts), sets
#                          gpus (the GPU count) and np ($NP, else gpus), writes
#                          nvidia-smi topo -m to $out/topo.txt
#   mpirun_np N ARGS...    mpirun of N ranks, NCCL_NVLS_ENABLE passed on and the ranks unbound
#                          (--bind-to none: Open MPI binds two ranks to a core each, which
#                          leaves the host's set-up one thread a rank)
#   device_build_once DIR  device_build DIR into $out/build.log, a row "build", unless BUILD=0
#                          and DIR has rtm3d; status 1 on a failure
#   device_build_pair SRC  for an A/B of two trees: the tree into build-new and the earlier
#                          source tree SRC into SRC/build-base ($out/build.log and
#                          build_base.log), a row "build"; status 1 on a failure
#   device_build_stamped SRC COPY LOG  the tree SRC copied to COPY (no build folders, .probe,
#                          run/out), this tree's STAMPS patch (default
#                          run/experiments/setup_stamps.patch) and EXTRA_PATCH (an absolute
#                          path; optional) applied there, and built into COPY/build
#                          (device_build, into LOG); status 1 on a failure
#   device_compare_builds SRC  run/tools/compare_builds.sh of SRC/build-base against
#                          build-new on the cuda backend into $out/compare.log, its count and
#                          failures as rows; status 1 when an output differs
#   survey_decks           the 8-shot 512^3 survey of run/results/end_to_end.md: survey (its
#                          --set keys) and decks (iso; and tti with TTI=1)
#   device_bench NAME COMMAND...  COMMAND (an `rtm3d bench`) run, its output appended to
#                          $out/bench.log under "== NAME" and kept in $bench_log; its
#                          figure ("device: N MCells/s = P% of C GB/s", else its last line)
#                          in $bench_figure, for the caller's row
#   stamp                  a filter: each line of its input with the seconds since it
#                          started ahead (a command's log piped through it: where time goes)
cd "$(dirname "${BASH_SOURCE[0]}")/../.." || exit 1
out="${OUT:-${1:?device_env.sh: the default output folder}}"
mkdir -p "$out"
out="$(cd "$out" && pwd)" # absolute: some steps run in another folder (device_build_pair)
if [ -d .deps ]; then
  # shellcheck disable=SC1091
  source run/deps.sh env || exit 1
fi
set +e
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH="/usr/local/cuda/bin:$PATH"
fi

device_info() {
  {
    nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem \
      --format=csv 2>&1
    date -u
  } | tee "${1:-/dev/null}"
}

device_configure() {
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DRTM3D_CUDA_ARCHITECTURES="${RTM3D_CUDA_ARCH:-90}"
}

device_build() {
  device_configure "$1" > "$2" 2>&1 && ninja -C "$1" >> "$2" 2>&1 ||
    { grep -E "error|FAILED" "$2" | head -20; return 1; }
}

device_summary() {
  summary="$out/summary.txt"
  : > "$summary"
  failed=0
  device_info >> "$summary"
}

row() { printf '%-46s %s\n' "$1" "$2" | tee -a "$summary"; }

device_gpu_tests() {
  local status=0
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
    ctest --test-dir "$1" -L gpu -j 2 --output-on-failure > "$out/ctest_gpu.log" 2>&1 || status=1
  row "ctest -L gpu" "$(grep -E 'tests passed' "$out/ctest_gpu.log")"
  grep -E "\(Failed\)|\*\*\*" "$out/ctest_gpu.log" | head -10 | tee -a "$summary"
  return "$status"
}

step() { echo "== $*"; }

device_ranks() {
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 NCCL_NVLS_ENABLE=0
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
  np="${NP:-$gpus}"
  nvidia-smi topo -m > "$out/topo.txt" 2>&1
}

mpirun_np() { mpirun --oversubscribe --bind-to none -x NCCL_NVLS_ENABLE -np "$@"; }

survey_decks() {
  survey=(--set model.file= --set time.steps=1000 --set shots.layout=grid
    --set shots.x_count=4 --set shots.y_count=2 --set shots.z=200)
  decks=(run/examples/bench_512.ini)
  [ "${TTI:-0}" = 1 ] && decks+=(run/examples/bench_tti_512.ini)
}

device_bench() {
  local name="$1"
  shift
  [ -n "${bench_log:-}" ] || bench_log="$(mktemp)" # one file a script (not under $out)
  "$@" >"$bench_log" 2>&1
  { echo "== $name"; cat "$bench_log"; } >>"$out/bench.log"
  bench_figure="$(grep -oE "device: [0-9]+ MCells/s = [0-9.]+% of [0-9]+ GB/s" "$bench_log" |
    tail -1)"
  [ -n "$bench_figure" ] || bench_figure="$(tail -1 "$bench_log")"
}

stamp() {
  python3 -u -c '
import sys, time
t0 = time.time()
for line in sys.stdin:
    sys.stdout.write(f"{time.time() - t0:7.3f} {line}")'
}

device_gpu_tests_asked() {
  [ "${GPU_TESTS:-0}" = 1 ] || return 0
  device_gpu_tests "$1" || failed=1
}

device_prepare() {
  device_summary
  device_build_once "$1" || return 1
  device_gpu_tests_asked "$1"
}

# An A/B's start: the summary, the tree (build-new) and the source tree $1 (its build-base)
# built, the tree's GPU tests with GPU_TESTS=1.
device_prepare_pair() {
  device_summary
  device_build_pair "$1" || return 1
  device_gpu_tests_asked build-new
}

device_build_once() {
  [ "${BUILD:-1}" != 1 ] && [ -x "$1/app/rtm3d" ] && return 0
  step "build"
  device_build "$1" "$out/build.log" || return 1
  row "build" "ok"
}

device_build_pair() {
  step "build the tree and $1"
  device_build build-new "$out/build.log" || { row "build (tree)" FAILED; return 1; }
  (cd "$1" && device_build build-base "$out/build_base.log") ||
    { row "build (base)" FAILED; return 1; }
  row "build" "tree and base"
}

device_compare_builds() {
  local status=0
  step "compare_builds on cuda"
  run/tools/compare_builds.sh "$1/build-base/app/rtm3d" build-new/app/rtm3d cuda \
    > "$out/compare.log" 2>&1 || status=1
  row "compare_builds cuda" "$(tail -1 "$out/compare.log")"
  grep FAIL "$out/compare.log" | head -5 | tee -a "$summary"
  return "$status"
}

device_build_stamped() {
  local src="$1" copy="$2" log="$3" patch
  patch="$(pwd)/${STAMPS:-run/experiments/setup_stamps.patch}"
  rm -rf "$copy" && mkdir -p "$copy" || return 1
  tar -C "$src" -c --exclude='./build*' --exclude=./.probe --exclude=./run/out . |
    tar -x -C "$copy" || return 1
  (cd "$copy" && git apply "$patch" && { [ -z "${EXTRA_PATCH:-}" ] || git apply "$EXTRA_PATCH"; } &&
    device_build build "$log")
}
