#!/usr/bin/env bash
# run/tools/bench_model.sh [iso|tti] [RTM3D] - writes the 512^3 model a bench deck reads, with
# rtm3d makemodel from its description (run/examples/bench_512.model, bench_tti_512.model),
# kept when it already exists: iso /tmp/rtm3d_bench_model.h5, tti /tmp/rtm3d_bench_tti.h5.
# RTM3D: the binary (default: the first of build*/app/rtm3d).
set -euo pipefail
cd "$(dirname "$0")/../.."
kind="${1:-iso}"
case "$kind" in
iso) deck=run/examples/bench_512.ini ;;
tti) deck=run/examples/bench_tti_512.ini ;;
*) echo "usage: run/tools/bench_model.sh [iso|tti] [RTM3D]" >&2; exit 2 ;;
esac
rtm3d="${2:-$(ls build*/app/rtm3d 2>/dev/null | head -1)}"
[ -x "$rtm3d" ] || { echo "run/tools/bench_model.sh: no rtm3d binary (build first, or pass it)" >&2; exit 1; }
model="$(sed -n 's/^file *= *//p' "$deck")"
[ -s "$model" ] && exit 0
echo "== writing the 512^3 $kind model ($model)"
"$rtm3d" makemodel "$deck" --quiet
