#!/usr/bin/env bash
# run/tools/bench_model.sh [iso|tti] [PATH] - writes the 512^3 model the bench decks read (kept
# when it already exists). iso (default /tmp/rtm3d_bench_model.h5, run/examples/bench_512.ini):
# /vp with a velocity gradient, two layer steps, a gently dipping interface and a fast lens,
# piecewise smooth. tti (default /tmp/rtm3d_bench_tti.h5): the same /vp plus /epsilon 0.05-0.3
# and /delta 0.0-0.15 growing with depth in layers, /theta tilting 0-45 degrees with depth and
# across x, /phi turning 0-90 degrees across y (smooth: bench timings, not a geology).
# Needs python3 with numpy and h5py.
set -euo pipefail
kind="${1:-iso}"
case "$kind" in
iso) model="${2:-/tmp/rtm3d_bench_model.h5}" ;;
tti) model="${2:-/tmp/rtm3d_bench_tti.h5}" ;;
*) echo "usage: run/tools/bench_model.sh [iso|tti] [PATH]" >&2; exit 2 ;;
esac
[ -s "$model" ] && exit 0
echo "== writing the 512^3 $kind model ($model)"
python3 - "$model" "$kind" <<'PY'
import sys, numpy as np, h5py
n = 512
z = np.arange(n, dtype=np.float32)[:, None, None]
y = np.arange(n, dtype=np.float32)[None, :, None]
x = np.arange(n, dtype=np.float32)[None, None, :]
vp = 1600.0 + 2.0 * z + 400.0 * (z > 180 + 0.1 * x) + 500.0 * (z > 360)
vp = vp + 600.0 * (((x - 300) ** 2 + (y - 260) ** 2) / 90.0 ** 2 + ((z - 280) / 40.0) ** 2 < 1)
shape = (n, n, n)
def full(a):
    return np.ascontiguousarray(np.broadcast_to(a, shape).astype(np.float32))
with h5py.File(sys.argv[1], "w") as f:
    f.create_dataset("vp", data=full(vp))
    if sys.argv[2] == "tti":
        layer = np.floor(z / 128.0)
        f.create_dataset("epsilon", data=full(0.05 + 0.0004 * z + 0.02 * layer))
        f.create_dataset("delta", data=full(0.0 + 0.0002 * z + 0.01 * layer))
        f.create_dataset("theta", data=full(45.0 * (z / n) * (0.5 + 0.5 * x / n)))
        f.create_dataset("phi", data=full(90.0 * y / n + 0.0 * z))
    f.attrs["spacing"] = np.array([10.0, 10.0, 10.0])
    f.attrs["origin"] = np.array([0.0, 0.0, 0.0])
PY
