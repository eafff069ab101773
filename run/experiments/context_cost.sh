#!/usr/bin/env bash
# run/experiments/context_cost.sh [BUILD_DIR] - where a short cuda run's set-up goes
# on the GPU machine, one call: context_cost.cu (a bare process's cuInit, context,
# allocations) three times; `rtm3d info` and a cuda quickstart timed whole, with
# CUDA_MODULE_LOADING lazy (the default) and eager; then the 512^3 iso run of
# run/tools/end_to_end.sh (2000 steps, receivers every 80 m) with its report's set-up parts.
# nsys, when the machine has it, traces the quickstart's CUDA calls (nsys_stats.txt). Logs
# under $OUT (or run/out/context).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/context || exit 1
build="${1:-build-e2e}"
device_summary
device_build_once "$build" || exit 1
rtm3d="$build/app/rtm3d"
nvcc -O2 -o /tmp/context_cost run/experiments/context_cost.cu -lcuda || exit 1
for k in 1 2 3; do row "bare process $k" "$(/tmp/context_cost)"; done
seconds() { /usr/bin/time -f "%e" "$@" 2>&1 > /dev/null | tail -1; }
row "rtm3d info" "$(seconds "$rtm3d" info) s"
runs=/tmp/rtm3d_context
parts() { # NAME: the set-up parts, propagation and write of $runs/NAME.json
  python3 -c "import json, sys; t = json.load(open(sys.argv[1]))['timings_s']
print(', '.join('%s %.3f' % (k, t[k]) for k in ('setup_load', 'setup_propagator', 'setup_output', 'propagate', 'write')))" "$runs/$1.json"
}
for loading in LAZY EAGER; do
  for k in 1 2; do
    t=$(CUDA_MODULE_LOADING=$loading seconds "$rtm3d" model run/examples/quickstart.ini \
      --set backend.name=cuda --quiet --set output.dir="$runs" --set output.name=q --force)
    row "quickstart, modules $loading ($k)" "$t s; $(parts q)"
  done
done
for k in 1 2; do
  t=$(seconds "$rtm3d" model run/examples/bench_512.ini --set backend.name=cuda --set model.file= \
    --set model.vp=2000 --set time.steps=2000 --set receivers.x_step=80 --set receivers.y_step=80 \
    --quiet --set output.dir="$runs" --set output.name=e2e --force)
  row "512^3 2000 steps ($k)" "$t s; $(parts e2e)"
done
if command -v nsys > /dev/null; then
  nsys profile -o /tmp/q_nsys --force-overwrite true --trace=cuda,osrt "$rtm3d" model \
    run/examples/bench_512.ini --set backend.name=cuda --set model.file= --set model.vp=2000 \
    --set time.steps=50 --quiet --set output.dir="$runs" --set output.name=n --force > /dev/null 2>&1
  nsys stats --report cuda_api_sum,osrt_sum /tmp/q_nsys.nsys-rep > "$out/nsys_stats.txt" 2>&1
  head -40 "$out/nsys_stats.txt"
else
  row "nsys" "not on this machine"
fi
echo
cat "$summary"
