#!/usr/bin/env bash
# run/experiments/correction_jit_probe.sh: is the dispersion correction's first-run cost a JIT
# compile? The 80 m case of dispersion_check.sh three times, then with the JIT cache off.
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/../tools/device_env.sh" run/out/jit_probe || exit 1
b=build-e2e
device_build "$b" "$out/build.log" || exit 1
for i in 1 2 3 nocache; do
  env $([ $i = nocache ] && echo CUDA_CACHE_DISABLE=1) $b/app/rtm3d model run/examples/bench_512.ini --quiet --set backend.name=cuda \
    --set model.file= --set model.vp=2000 --set time.steps=2000 --set receivers.x_step=80 --set receivers.y_step=80 \
    --set time.dispersion_correction=full --set output.dir=/tmp/j --set output.name=j$i --force
  python3 -c "import json;t=json.load(open('/tmp/j/j$i.json'))['timings_s'];print('$i', round(t['dispersion_correction'],4), round(t['propagate'],3))"
done
ls ~/.nv/ComputeCache 2>/dev/null | head -3; du -sh ~/.nv 2>/dev/null
