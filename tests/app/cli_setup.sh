# cli_setup.sh - sourced by the end-to-end cli tests (cli_model_run.sh, cli_tti.sh,
# cli_segy.sh, cli_tune.sh, cli_stream_gpu.sh, cli_no_gpu.sh) with their arguments
# RTM3D SOURCE_DIR: sets rtm3d and src from them, work to a scratch folder removed on exit,
# and deck to the quickstart deck, which each test shrinks with its own --set list.
# `require PATTERN WHAT` ends the test as skipped (77) unless `rtm3d info` matches PATTERN;
# `fail TEXT` counts a failure in `failures` for tests that go on after one.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
rtm3d="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
deck="$src/run/examples/quickstart.ini"
failures=0
fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}
require() {
  if ! "$rtm3d" info 2>/dev/null | grep -q "$1"; then
    echo "$(basename "$0"): $2, skipped"
    exit 77
  fi
}
