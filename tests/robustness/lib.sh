# tests/robustness/lib.sh - sourced by every case script of the suite:
#   source "$(dirname "$0")/lib.sh" "$@"     (arguments: RTM3D SOURCE_DIR [MPIEXEC])
# gives $rtm3d, $src, $mpiexec (empty in a build without MPI), a scratch folder $work (removed at exit), tiny decks, and checks that
# count failures; rob_finish prints 'N passed, N failed' and exits 1 on any failure.
set -u
rtm3d="$1"
src="$2"
mpiexec="${3:-}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}"
rob_name="$(basename "$0" .sh)"
rob_passed=0
rob_failed=0
work="$(mktemp -d)"
rob_mounts=()
rob_cleanup() {
  local m
  for m in "${rob_mounts[@]}"; do umount "$m" 2>/dev/null; done
  rm -rf "$work"
}
trap rob_cleanup EXIT

# small_disk SIZE VAR: a tmpfs of SIZE (64k, 2m ...) mounted on a new folder of $work, its
# path into the variable VAR; unmounted at exit. Fails (status 1) where mounting is not
# allowed (not root, a container without the right): the caller skips its cases then.
rob_disks=0
small_disk() {
  rob_disks=$((rob_disks + 1))
  local dir="$work/disk$rob_disks"
  mkdir -p "$dir"
  mount -t tmpfs -o "size=$1" tmpfs "$dir" 2>/dev/null || return 1
  rob_mounts+=("$dir")
  printf -v "$2" '%s' "$dir"
}

# The cases' own command lines hold hostile bytes: shown through cat -v (newlines as \n),
# never raw.
rob_fail() {
  local text="$*"
  printf 'FAIL: %s\n' "${text//$'\n'/\\n}" | cat -v
  rob_failed=$((rob_failed + 1))
}

rob_pass() {
  local text="$*"
  printf 'ok:   %s\n' "${text//$'\n'/\\n}" | cat -v
  rob_passed=$((rob_passed + 1))
}

# expect STATUS PATTERN COMMAND...: the command exits STATUS and its stdout+stderr match the
# extended regex PATTERN (an empty PATTERN matches anything). The output is kept in
# $rob_output for further checks.
expect() {
  local want="$1" pattern="$2"
  shift 2
  rob_output="$("$@" 2>&1 </dev/null)"
  rob_judge "$want" "$pattern" $? "$*"
}

# rob_judge WANT PATTERN STATUS TEXT: the run TEXT exited STATUS, WANT wanted, and its output
# ($rob_output) matches PATTERN (expect's check, for runs made another way).
rob_judge() {
  local want="$1" pattern="$2" status="$3" text="$4"
  if [ "$status" -ne "$want" ] || ! grep -Eq -- "$pattern" <<<"$rob_output"; then
    rob_fail "'$text' exited $status (want $want), expected to match: $pattern"
    sed 's/^/    /' <<<"$rob_output" | head -40 | cat -v
  else
    rob_pass "$text"
  fi
}

# expect_no_output DIR NAME: nothing of a run named NAME in DIR looks complete, and no
# .partial file is left: no NAME.h5, .xmf, .json, .sgy, .lock or NAME_*.png.
expect_no_output() {
  local dir="$1" name="$2" found
  found="$(cd "$dir" 2>/dev/null && ls -1 -- "$name.h5" "$name.xmf" "$name.json" "$name.sgy" "$name.lock" \
    "$name"_*.png *.partial 2>/dev/null)"
  if [ -n "$found" ]; then
    rob_fail "$dir holds after a failed run: $(tr '\n' ' ' <<<"$found")"
  else
    rob_pass "nothing of $name left in $dir"
  fi
}

# expect_file_unchanged PATH CHECKSUM: PATH exists and has the cksum given.
expect_file_unchanged() {
  if [ ! -e "$1" ]; then
    rob_fail "$1 is gone"
  elif [ "$(cksum <"$1")" != "$2" ]; then
    rob_fail "$1 was changed"
  else
    rob_pass "$1 unchanged"
  fi
}

# tiny_deck PATH: a cpu deck of 24^3 cells and 20 steps (a fraction of a second), receivers
# on a line; output to $work/out under the name 'tiny'.
tiny_deck() {
  cat >"$1" <<DECK
[grid]
nx = 24
ny = 24
nz = 24
dx = 10
dy = 10
dz = 10
[time]
steps = 20
[backend]
name = cpu
[model]
vp = 2000
[source]
x = 120
y = 120
z = 120
frequency = 15
[receivers]
layout = plane
z = 60
x_step = 20
y_first = 120
y_count = 1
[boundary]
width = 4
[output]
dir = $work/out
name = tiny
DECK
}

# $survey: the --set arguments of a tiny_deck survey of 3 shots along x over a plane of 24 x
# 24 receivers, 150 steps, an interface at 150 m (an image that is not all zero): a migration
# of it stops and resumes between shots.
survey=(--set shots.layout=grid --set shots.x_count=3 --set shots.y_count=1 --set shots.z=60
  --set receivers.z=60 --set receivers.y_count=24 --set receivers.y_first=0
  --set receivers.y_step=10 --set receivers.x_step=10 --set time.steps=150
  --set model.interface_z=150 --set model.vp_below=3000)

# h5edit FILE set DATASET VALUE INDEX... | FILE unlink DATASET: damages an HDF5 file through
# the libhdf5 rtm3d runs with (h5edit.py); have_h5edit says whether it can (python3, libhdf5).
rob_libhdf5="$(ldd "$rtm3d" 2>/dev/null | awk '/libhdf5/ && !/_hl|_cpp/ {print $3; exit}')"
have_h5edit() {
  command -v python3 >/dev/null && [ -n "$rob_libhdf5" ]
}
h5edit() {
  python3 "$src/tests/robustness/h5edit.py" "$rob_libhdf5" "$@"
}

# has_feature WORD: rtm3d info's build line mentions WORD (MPI, SEG-Y ...).
has_feature() {
  "$rtm3d" info 2>/dev/null | grep -qi -- "$1"
}

# use_preload NAME: $preload, this build folder's librtm3d_NAME_preload.so, for LD_PRELOAD
# (the script skips without it); the sanitizer build's rtm3d wants its runtime first, and
# the preload libraries are plain C.
use_preload() {
  preload="$PWD/librtm3d_$1_preload.so"
  [ -e "$preload" ] || rob_skip "no $preload (build the target rtm3d_$1_preload)"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
}

# held_at_open OPEN ACTION COMMAND...: COMMAND run with $preload (use_preload stall_write)
# holding its first open of a path that holds OPEN; ACTION (shell text; $held_pid is the
# command's pid) run once it is held, then the command released. Its exit status into
# $held_status, its stdout+stderr into $rob_output.
held_at_open() {
  held_at RTM3D_TEST_STALL_OPEN open "$@"
}

# held_at_write PATH ACTION COMMAND...: as held_at_open, held at its first write of a file
# whose path holds PATH (the file made, and written through its descriptor from then on).
held_at_write() {
  held_at RTM3D_TEST_STALL_WRITE write "$@"
}

# held_at VARIABLE WHAT PATH ACTION COMMAND...: held_at_open's and held_at_write's body.
held_at() {
  local variable="$1" what="$2" path="$3" action="$4" tries=2400
  shift 4
  rm -f "$work/held" "$work/release"
  env LD_PRELOAD="$preload" "$variable=$path" RTM3D_TEST_STALL_MARKER="$work/held" \
    RTM3D_TEST_STALL_RELEASE="$work/release" RTM3D_TEST_STALL_SECONDS=120 \
    "$@" >"$work/held.log" 2>&1 </dev/null &
  held_pid=$!
  while [ ! -e "$work/held" ] && [ "$tries" -gt 0 ] && kill -0 "$held_pid" 2>/dev/null; do
    sleep 0.05
    tries=$((tries - 1))
  done
  if [ -e "$work/held" ]; then
    eval "$action"
  else
    rob_fail "$* was never held at a$([ "$what" = open ] && echo "n") $what of $path"
  fi
  touch "$work/release"
  wait "$held_pid"
  held_status=$?
  rob_output="$(cat "$work/held.log")"
}

# rob_skip REASON: this script cannot run in this build (ctest counts exit 77 as skipped).
rob_skip() {
  echo "$rob_name: skipped: $*"
  exit 77
}

rob_finish() {
  echo "$rob_name: $rob_passed passed, $rob_failed failed"
  [ "$rob_failed" -eq 0 ]
  exit $?
}
