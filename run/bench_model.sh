#!/usr/bin/env bash
# run/bench_model.sh [PATH] - writes the layered 512^3 model that run/examples/bench_512.ini
# reads (default /tmp/rtm3d_bench_model.h5; kept when it already exists): a velocity
# gradient, two layer steps, a gently dipping interface and a fast lens, piecewise smooth.
# Needs python3 with numpy and h5py.
set -euo pipefail
model="${1:-/tmp/rtm3d_bench_model.h5}"
[ -s "$model" ] && exit 0
echo "== writing the 512^3 layered model ($model)"
python3 - "$model" <<'PY'
import sys, numpy as np, h5py
n = 512
z = np.arange(n, dtype=np.float32)[:, None, None]
y = np.arange(n, dtype=np.float32)[None, :, None]
x = np.arange(n, dtype=np.float32)[None, None, :]
vp = 1600.0 + 2.0 * z + 400.0 * (z > 180 + 0.1 * x) + 500.0 * (z > 360)
vp = vp + 600.0 * (((x - 300) ** 2 + (y - 260) ** 2) / 90.0 ** 2 + ((z - 280) / 40.0) ** 2 < 1)
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("vp", data=np.ascontiguousarray(vp.astype(np.float32)))
    f.attrs["spacing"] = np.array([10.0, 10.0, 10.0])
    f.attrs["origin"] = np.array([0.0, 0.0, 0.0])
PY
