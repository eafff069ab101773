#!/usr/bin/env bash
# run/experiments/codec_draws.sh - the codec's round-trip error tables of
# tests/solver/test_codec.c and solver/grid/rtm_codec.h: the worst of DRAWS draws (default
# 200, seeds 7919 i + 13) of the test's cases that print their errors (error per rate,
# partial blocks, plane waves, extreme magnitudes), a row each, the worst per column.
#
#   run/experiments/codec_draws.sh [BUILD_DIR]     (default build; the cpu build does)
set -euo pipefail
test_codec="${1:-build}/tests/solver/test_codec"
[ -x "$test_codec" ] || { echo "codec_draws: no $test_codec (build it first)" >&2; exit 1; }
draws="${DRAWS:-200}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for ((i = 0; i < draws; ++i)); do
  RTM3D_TEST_SEED=$((7919 * i + 13)) RTM3D_TEST_FILTER="test_error_per_rate" "$test_codec" 2>/dev/null |
    grep -E "^(gaussian|ricker|plane wave|random) " >>"$log" || true
  for t in test_partial_blocks test_plane_waves test_extreme_magnitudes; do
    RTM3D_TEST_SEED=$((7919 * i + 13)) RTM3D_TEST_FILTER="$t" "$test_codec" 2>/dev/null |
      grep -E "^ ?[0-9]+ x|^plane wave,|^largest" >>"$log" || true
  done
done
python3 - "$log" "$draws" <<'PY'
import re, sys
worst, order = {}, []
for line in open(sys.argv[1]):
    line = line.rstrip()
    m = re.match(r"^(gaussian|ricker|plane wave|random)\s+(.*)$", line)
    if m:
        key, values = m.group(1), m.group(2).split()
    elif line.startswith("plane wave,"):
        key, rest = line.split(":", 1)
        values = re.findall(r"rate\s+\d+\s+(\S+)", rest)
    else:
        key, rest = line.split(":", 1)
        values = rest.split()
    values = [float(v) for v in values]
    if key not in worst:
        worst[key] = values
        order.append(key)
    else:
        worst[key] = [max(a, b) for a, b in zip(worst[key], values)]
print(f"the worst of {sys.argv[2]} draws, relative L2 of a round trip")
for key in order:
    print(f"{key:40s} " + " ".join(f"{v:.1e}" for v in worst[key]))
PY
