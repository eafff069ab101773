#!/usr/bin/env bash
# cmake --install into a scratch prefix: PREFIX/bin/rtm3d runs (--version, info) and the
# example decks are in PREFIX/share/rtm3d/examples.
# Usage: cli_install.sh BUILD_DIR
set -eu
build="$1"
prefix="$(mktemp -d)"
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" > "$prefix/install.log" 2>&1 ||
  { echo "FAIL: cmake --install:"; cat "$prefix/install.log"; exit 1; }
"$prefix/bin/rtm3d" --version | grep -q "^rtm3d [0-9]" ||
  { echo "FAIL: $prefix/bin/rtm3d --version"; exit 1; }
"$prefix/bin/rtm3d" info | grep -q "^backends:" || { echo "FAIL: $prefix/bin/rtm3d info"; exit 1; }
test -s "$prefix/share/rtm3d/examples/quickstart.ini" ||
  { echo "FAIL: no examples under $prefix/share/rtm3d"; ls -R "$prefix"; exit 1; }
echo "cli_install: $prefix/bin/rtm3d runs; $(ls "$prefix/share/rtm3d/examples" | wc -l) example decks"
