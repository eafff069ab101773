#!/usr/bin/env bash
# run/experiments/ftz_probe.sh [BUILD_DIR] - the cpu reference's cost of subnormal floats:
# the small migration (run/examples/migrate_small.ini, cpu backend) as it runs, then with
# flush-to-zero and denormals-are-zero set in MXCSR for the whole process by an LD_PRELOAD
# (threads inherit it), printing each run's first shot line and its total (forward and
# backward seconds).
# Not a product switch: flushing would part the cpu reference from the cuda kernels, which
# keep subnormals, in the last bits. Scratch in /tmp/rtm3d_ftz.
set -euo pipefail
cd "$(dirname "$0")/../.."
rtm3d="${1:-build}/app/rtm3d"
work=/tmp/rtm3d_ftz
rm -rf "$work" && mkdir -p "$work"
cat > "$work/ftz.c" <<'C'
#include <xmmintrin.h>
__attribute__((constructor)) static void ftz(void) { _mm_setcsr(_mm_getcsr() | 0x8040); }
C
cc -shared -fPIC -O2 -o "$work/ftz.so" "$work/ftz.c"
deck=run/examples/migrate_small.ini
common=(--set backend.name=cpu --set output.dir="$work")
"$rtm3d" model "$deck" "${common[@]}" --quiet --set output.name=observed
for preload in "" "$work/ftz.so"; do
  echo "== ${preload:+with FTZ/DAZ (}${preload:-as it runs}${preload:+)}"
  LD_PRELOAD="$preload" "$rtm3d" migrate "$deck" "${common[@]}" --set model.interface_z=auto \
    --set rtm.observed="$work/observed.h5" --set output.name=image > "$work/migrate.log" 2>&1
  grep -E "shot 1/4 in|done in" "$work/migrate.log"
  rm -f "$work/image.h5"
done
