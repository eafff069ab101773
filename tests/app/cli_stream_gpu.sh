#!/usr/bin/env bash
# Gathers streamed to the file while a cuda run steps (output.stream_traces = auto, with
# time.dispersion_correction = none: a warp needs whole traces) against the same run
# written after it (output.stream_traces = off): the same datasets, bit for bit, with windows
# that do and do not divide the trace (7 and 10 samples of 161 and 160), p and q recorded
# (tti), and a window as long as the whole trace. Label gpu; exit 77 without one.
# Usage: cli_stream_gpu.sh RTM3D SOURCE_DIR
set -u
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
require "^GPU 0:" "no CUDA device"
common=(--set backend.name=cuda --set output.dir="$work" --quiet --force
  --set time.dispersion_correction=none)

# case NAME WINDOW ARGS...: streamed in windows of WINDOW samples, then written after the run
check() {
  local name="$1" window="$2"
  shift 2
  "$rtm3d" model "$deck" "${common[@]}" "$@" --set output.stream_window="$window" \
    --set output.name="${name}_stream" > "$work/${name}_stream.log" 2>&1 ||
    { fail "$name: streamed run exited $?: $(tail -2 "$work/${name}_stream.log")"; return; }
  "$rtm3d" model "$deck" "${common[@]}" "$@" --set output.stream_traces=off \
    --set output.name="${name}_after" > "$work/${name}_after.log" 2>&1 ||
    { fail "$name: run written after exited $?: $(tail -2 "$work/${name}_after.log")"; return; }
  if "$rtm3d" validate "$work/${name}_stream.h5" "$work/${name}_after.h5" --rtol 0 --atol 0 \
    > "$work/${name}_validate.log" 2>&1; then
    echo "ok:   $name: $(tail -1 "$work/${name}_validate.log")"
  else
    fail "$name: streamed and written after differ: $(tail -3 "$work/${name}_validate.log")"
  fi
}
check iso_w7 7 --set time.steps=160
check iso_w10 10 --set time.steps=159
check tti_pq 16 --set physics.equation=tti --set model.epsilon=0.2 --set model.delta=0.1 \
  --set model.theta=30 --set receivers.fields=p,q --set time.steps=100
# a window as long as the trace is no stream at all: the same file too
check one_window 1000 --set time.steps=50

exit $((failures > 0))
