#!/usr/bin/env bash
# run/tools/bars_check.sh - issue 34's one-GPU bars with the tree, in one device call: builds
# it, models the 8-shot 512^3 survey of run/results/end_to_end.md twice for iso and tti (wall
# against the run's own `propagate`, with its phases), migrates the first model run's gathers
# (run/survey.sh with OBSERVED; ROUNDS times for iso, once for tti), then `ctest -L gpu`.
# Logs under $OUT (or run/out/bars), a short table last.
#
#   run/tools/bars_check.sh            (device tool: carry .deps; about 4 minutes on an H200)
#
# Environment: ROUNDS (iso migrations, default 2), GPU_TESTS (default 1).
set -uo pipefail
# shellcheck source=run/tools/device_env.sh
source "$(dirname "$0")/device_env.sh" run/out/bars || exit 1
device_summary
device_build_once build-bars || { cat "$summary"; exit 1; }
survey_decks # $survey: the 8-shot grid at z = 200 m, 1000 steps, a constant model
for deck in run/examples/bench_512.ini run/examples/bench_tti_512.ini; do
  name="$(basename "$deck" .ini)"
  work="/tmp/bars_$name"
  rm -rf "$work" && mkdir -p "$work"
  for round in 1 2; do
    begin=$(date +%s.%N)
    build-bars/app/rtm3d model "$deck" "${survey[@]}" --quiet --force --set output.dir="$work" \
      --set output.name="model$round" >>"$out/model.log" 2>&1 || { row "$name model" FAILED; failed=1; }
    end=$(date +%s.%N)
    row "$name model #$round" "$(python3 - "$work/model$round.json" "$begin" "$end" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))["timings_s"]
wall = float(sys.argv[3]) - float(sys.argv[2])
print(f"wall {wall:.2f} s, propagate {t['propagate']:.2f} s = {wall / t['propagate']:.3f}; "
      + ", ".join(f"{k} {v:.2f}" for k, v in t.items() if not k.endswith(("_min", "_mean", "_max"))))
PY
)"
  done
  rounds="${ROUNDS:-2}"
  [ "$name" = bench_tti_512 ] && rounds=1
  for round in $(seq "$rounds"); do
    OUT="$work" RTM3D=build-bars/app/rtm3d OBSERVED="$work/model1.h5" run/survey.sh "$deck" \
      "${survey[@]}" >>"$out/survey.log" 2>&1 || failed=1
    row "$name migrate #$round" "$(grep '^survey:' "$out/survey.log" | tail -1 |
      sed 's/.*floor \([0-9.]* s\)/floor \1/')"
    grep '^migrate phases' "$out/survey.log" | tail -1 | tee -a "$summary"
  done
done
[ "${GPU_TESTS:-1}" = 1 ] && { device_gpu_tests build-bars || failed=1; }
echo
cat "$summary"
exit "$failed"
