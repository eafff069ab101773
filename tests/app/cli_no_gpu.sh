#!/usr/bin/env bash
# Without a GPU, every command says so plainly (label unit: CI has nvcc but no GPU). The GPUs
# are hidden (CUDA_VISIBLE_DEVICES empty), so a machine with one checks the same messages,
# there as "the NVIDIA driver sees no GPU", where CI says "no NVIDIA GPU driver is loaded".
# A cuda build: info exits 0 naming the reason and the cpu backend; bench CONFIG, bench
# --traces and tune exit 1 with one and the same line, "no CUDA device: WHY. ... run them on
# a machine with an NVIDIA GPU", before any work; backend.name = cuda is refused naming
# backend.name = cpu; auto runs on the cpu. Nowhere "driver version is insufficient" or a
# source location. A build without CUDA: bench, tune and backend.name = cuda say so.
# Usage: cli_no_gpu.sh RTM3D SOURCE_DIR
set -u
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
export CUDA_VISIBLE_DEVICES=
small=(--set time.steps=10 --set snapshots.every=0 --set output.dir="$work/out")

# run_as NAME STATUS COMMAND...: runs COMMAND, its stdout and stderr into $said; a failure
# unless it exits STATUS and says nothing the runtime's wording or a source location.
run_as() {
  local name="$1" want="$2" status
  shift 2
  said="$("$@" 2>&1 </dev/null)"
  status=$?
  [ "$status" -eq "$want" ] || fail "$name exited $status (want $want): $(tail -3 <<<"$said")"
  ! grep -q "insufficient" <<<"$said" || fail "$name says the driver is too old: $said"
  ! grep -Eq "[a-z_]+\.(c|cu):[0-9]+:" <<<"$said" || fail "$name names a source location: $said"
}

# has NAME TEXT: $said holds TEXT (a fixed string).
has() {
  grep -Fq -- "$2" <<<"$said" || fail "$1 does not say '$2': $said"
}

if "$rtm3d" info | grep -q "^build: *CUDA off"; then
  run_as "bench" 1 "$rtm3d" bench "$deck"
  has "bench" "this build has no cuda backend"
  run_as "tune" 1 "$rtm3d" tune "$deck"
  has "tune" "this build has no cuda backend"
  run_as "backend.name = cuda" 1 "$rtm3d" model "$deck" "${small[@]}" --set backend.name=cuda
  has "backend.name = cuda" "this build has no cuda backend"
  echo "cli_no_gpu: a build without CUDA, $failures failure(s)"
  [ "$failures" -eq 0 ]
  exit
fi
if "$rtm3d" info | grep -q "^GPU 0:"; then
  echo "cli_no_gpu: CUDA_VISIBLE_DEVICES= left a GPU visible, skipped"
  exit 77
fi

run_as "info" 0 "$rtm3d" info
why="$(sed -n 's/^GPUs: *none: //p' <<<"$said")"
grep -Eq "^(no NVIDIA GPU driver is loaded on this machine|the NVIDIA driver sees no GPU|the NVIDIA driver supports CUDA .*, older than this build's CUDA runtime)" <<<"$why" ||
  fail "info does not say why there is no GPU: $said"
has "info" "the cpu backend runs here (backend.name = auto picks it)"
has "info" "(unavailable: $why)"
echo "ok:   info: $why"

# one message for bench CONFIG, bench --traces and tune, and nothing before it
message="rtm3d: error: no CUDA device: $why. bench and tune time GPU code: run them on a machine with an NVIDIA GPU"
one_message() {
  local name="$1"
  shift
  run_as "$name" 1 "$rtm3d" "$@"
  [ "$said" = "$message" ] || fail "$name does not say the one message: $said"
}
one_message "bench CONFIG" bench "$deck"
one_message "bench --traces" bench --traces
one_message "tune" tune "$deck"
echo "ok:   bench, bench --traces, tune: $message"

run_as "backend.name = cuda" 1 "$rtm3d" model "$deck" "${small[@]}" --set backend.name=cuda
has "backend.name = cuda" "backend.name = cuda cannot run here: $why; backend.name = cpu (or auto)"
run_as "backend.name = auto" 0 "$rtm3d" model "$deck" "${small[@]}" --set output.name=auto
has "backend.name = auto" "skipping cuda ($why)"
has "backend.name = auto" "backend cpu"
echo "ok:   model: cuda refused, auto on the cpu"

echo "cli_no_gpu: $failures failure(s)"
[ "$failures" -eq 0 ]
