# cli_setup.sh - sourced by the end-to-end cli tests (cli_model_run.sh, cli_tti.sh) with
# their arguments RTM3D SOURCE_DIR: sets rtm3d and src from them, work to a scratch folder
# removed on exit, and deck to the quickstart deck, which each test shrinks with its own
# --set list.
# shellcheck shell=bash disable=SC2034  # the variables are for the scripts that source this
rtm3d="$1"
src="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
deck="$src/run/examples/quickstart.ini"
