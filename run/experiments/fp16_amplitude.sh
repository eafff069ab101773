#!/usr/bin/env bash
# run/experiments/fp16_amplitude.sh [BUILD_DIR] [DECK] [BACKEND] - rtm.snapshot_precision =
# fp16 against fp32 at source.amplitude 1e-5, 1 and 1e8 (docs/migration.md "snapshots"): the
# deck (default run/examples/migrate_small.ini) modelled once, then migrated with each
# precision at each amplitude, and the fp16 image's relative L2 from the fp32 one (rtm3d
# validate). BACKEND: cpu (default) or cuda (run/examples/migrate_gpu.ini on the GPU
# machine). Scratch in /tmp/rtm3d_fp16_amplitude.
set -euo pipefail
cd "$(dirname "$0")/../.."
rtm3d="${1:-build}/app/rtm3d"
deck="${2:-run/examples/migrate_small.ini}"
backend="${3:-cpu}"
work=/tmp/rtm3d_fp16_amplitude
rm -rf "$work" && mkdir -p "$work"
common=(--set backend.name="$backend" --set output.dir="$work" --quiet --force)
"$rtm3d" model "$deck" "${common[@]}" --set output.name=observed
for amplitude in 1e-5 1 1e8; do
  for precision in fp32 fp16; do
    "$rtm3d" migrate "$deck" "${common[@]}" --set rtm.observed="$work/observed.h5" \
      --set source.amplitude="$amplitude" --set rtm.snapshot_precision="$precision" \
      --set output.name="m_${precision}_$amplitude"
  done
  echo "amplitude $amplitude: fp16 against fp32, relative L2 $("$rtm3d" validate \
    "$work/m_fp16_$amplitude.h5" "$work/m_fp32_$amplitude.h5" --datasets /image 2>&1 |
    awk '$1 == "/image" {print $3}')"
done
