#!/usr/bin/env bash
# A run removes or replaces only files it writes, never one it reads (issue 32):
#   - makemodel refuses a model.file that is a FIFO, a device node (as root; never the real
#     /dev/null: one made here) or a folder, exit 2, and leaves it as it was;
#   - an output that is one of the run's inputs (the deck, model.file, model.description,
#     rtm.observed, shots.file, receivers.file; by path, by a hard link, or as the
#     PATH.partial the run writes first) is refused, exit 2, naming the key, --force or not,
#     and the input stays as it was;
#   - a --force run without SEG-Y removes an earlier NAME.sgy only when rtm3d wrote it from
#     NAME.h5; a user's own .sgy, a FIFO, a device, a folder or a link there stays, with a
#     warning; a user's NAME.h5.replaced stays as it was;
#   - under mpirun -np 2 a run refused with exit 2 after taking its name leaves no NAME.lock.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

deck="$work/deck.ini"
tiny_deck "$deck"
self="$work/self"
mkdir -p "$self"
printf 'background vp=2000\n' >"$work/plain.model"
quick=(--quiet --set snapshots.every=0 --set time.steps=10)

# stays_as KIND PATH: PATH is still a KIND (test's -p, -c, -d, -L) after the run
stays_as() {
  if [ "$1" "$2" ]; then rob_pass "$2 stays ($1)"; else rob_fail "$2 is no longer $1: $(ls -ld "$2" 2>&1)"; fi
}

# ---- F1: makemodel's model.file is a FIFO, a device or a folder ----
makemodel() {
  "$rtm3d" makemodel "$deck" --set model.description="$work/plain.model" "$@"
}
mkfifo "$work/pfifo"
expect 2 "model\.file = .*pfifo exists and is not a regular file" makemodel \
  --set model.file="$work/pfifo" --force
stays_as -p "$work/pfifo"
if mknod "$work/dev" c 1 3 2>/dev/null; then # our own null device, not /dev/null
  expect 2 "model\.file = .*dev exists and is not a regular file" makemodel \
    --set model.file="$work/dev" --force
  stays_as -c "$work/dev"
else
  echo "skip: mknod not allowed (not root): the FIFO case stands for it"
fi
mkdir "$work/folder.h5"
expect 2 "folder\.h5 exists and is not a regular file" makemodel --set model.file="$work/folder.h5" --force
stays_as -d "$work/folder.h5"
expect_no_output "$work" pfifo

# ---- F2: outputs that are the run's own inputs ----
# makemodel over its deck and its description
cp "$deck" "$self/mm.ini"
deck_sum="$(cksum <"$self/mm.ini")"
expect 2 "the deck = .*mm\.ini is also an output of this run" "$rtm3d" makemodel "$self/mm.ini" \
  --set model.description="$work/plain.model" --set model.file="$self/mm.ini" --force
expect_file_unchanged "$self/mm.ini" "$deck_sum"
cp "$work/plain.model" "$self/desc.txt"
desc_sum="$(cksum <"$self/desc.txt")"
expect 2 "model\.description = .*desc\.txt is also an output" makemodel \
  --set model.description="$self/desc.txt" --set model.file="$self/desc.txt" --force
expect_file_unchanged "$self/desc.txt" "$desc_sum"

# a model file made for the model runs below
expect 0 "" makemodel --set model.file="$self/m.h5" --quiet
model_sum="$(cksum <"$self/m.h5")"
into() { # into NAME: the run's outputs beside the inputs in $self, under NAME
  printf '%s\n' --set output.dir="$self" --set output.name="$1"
}
# model.file as NAME.h5, through a hard link, and as the NAME.h5.partial written first
mapfile -t out_m < <(into m)
expect 2 "model\.file = .*m\.h5 is also an output of this run" "$rtm3d" model "$deck" "${quick[@]}" \
  --set model.file="$self/m.h5" "${out_m[@]}" --force
ln "$self/m.h5" "$self/hard.h5"
mapfile -t out_hard < <(into hard)
expect 2 "model\.file = .*m\.h5 is also an output of this run \(.*hard\.h5\)" "$rtm3d" model "$deck" \
  "${quick[@]}" --set model.file="$self/m.h5" "${out_hard[@]}" --force
ln "$self/m.h5" "$self/p.h5.partial"
mapfile -t out_p < <(into p)
expect 2 "model\.file = .*m\.h5 is also an output of this run \(.*p\.h5, written as .*p\.h5\.partial\)" \
  "$rtm3d" model "$deck" "${quick[@]}" --set model.file="$self/m.h5" "${out_p[@]}"
expect_file_unchanged "$self/m.h5" "$model_sum"
[ -e "$self/p.h5.partial" ] && rob_pass "the link at p.h5.partial stays" || rob_fail "p.h5.partial was removed"

# through a folder the run would make and back out of it (probe T, T1: output.dir =
# DIR/new/.. wrote over DIR/m.h5 with --force, exit 0, as two paths that did not exist yet
# were compared as names), for a run's output and for makemodel's model.file
expect 2 "model\.file = .*m\.h5 is also an output of this run \(.*new/\.\./m\.h5\)" "$rtm3d" model \
  "$deck" "${quick[@]}" --set model.file="$self/m.h5" --set output.dir="$self/new/.." \
  --set output.name=m --force
expect 2 "model\.description = .*desc\.txt is also an output" makemodel \
  --set model.description="$self/desc.txt" --set model.file="$self/made/../desc.txt" --force
expect_file_unchanged "$self/m.h5" "$model_sum"
expect_file_unchanged "$self/desc.txt" "$desc_sum"
[ ! -e "$self/new" ] && [ ! -e "$self/made" ] && rob_pass "no folder made for the refused runs" ||
  rob_fail "a refused run made a folder: $(ls "$self" | tr '\n' ' ')"

# a folder name longer than the file system takes, below two folders the run makes: the run
# fails there, and the two it made are gone
long="$(printf 'x%.0s' $(seq 300))"
expect 1 "cannot create directory .*n2/x* \(for .*: File name too long" "$rtm3d" model "$deck" \
  "${quick[@]}" --set output.dir="$self/n1/n2/$long/q"
[ ! -e "$self/n1" ] && rob_pass "no folder left by the run that could not make its folder" ||
  rob_fail "folders left: $(find "$self/n1" | tr '\n' ' ')"

# makemodel's lock DIR/NAME.lock, and a run's journal NAME.commit(.partial) (probe U, U1 and
# U2: a deck, a description or observed gathers at those names were written over or removed)
cp "$deck" "$self/ml.lock"
lock_sum="$(cksum <"$self/ml.lock")"
expect 2 "the deck = .*ml\.lock is also an output of this run" "$rtm3d" makemodel "$self/ml.lock" \
  --set model.description="$work/plain.model" --set model.file="$self/ml.h5"
expect_file_unchanged "$self/ml.lock" "$lock_sum"
cp "$self/m.h5" "$self/j.commit.partial"
journal_sum="$(cksum <"$self/j.commit.partial")"
mapfile -t out_j < <(into j)
expect 2 "model\.file = .*j\.commit\.partial is also an output of this run" "$rtm3d" model "$deck" \
  "${quick[@]}" --set model.file="$self/j.commit.partial" "${out_j[@]}"
expect_file_unchanged "$self/j.commit.partial" "$journal_sum"

# a killed run's lock taken over: its temporary files go, never the run's inputs at such
# names (probe U, U6: the deck was removed, exit 0)
mkdir -p "$self/dead"
cp "$deck" "$self/dead/k.json.partial.partial.abcdef.partial"
printf 'pid 999999 on %s since 2026-01-01 00:00:00\n' "$(hostname)" >"$self/dead/k.lock"
expect 0 "" "$rtm3d" model "$self/dead/k.json.partial.partial.abcdef.partial" "${quick[@]}" \
  --set output.dir="$self/dead" --set output.name=k
[ -e "$self/dead/k.json.partial.partial.abcdef.partial" ] && rob_pass "the deck at a temp's name stays" ||
  rob_fail "the deck at a temp's name was removed"

# the deck as NAME.json
cp "$deck" "$self/d.json"
deck_sum="$(cksum <"$self/d.json")"
mapfile -t out_d < <(into d)
expect 2 "the deck = .*d\.json is also an output of this run" "$rtm3d" model "$self/d.json" \
  "${quick[@]}" "${out_d[@]}" --force
expect_file_unchanged "$self/d.json" "$deck_sum"

# receivers.file as NAME.json, shots.file as NAME.xmf
printf '100 120 60\n140 120 60\n' >"$self/r.json"
printf '120 120 120\n' >"$self/s.xmf"
points_sum="$(cksum <"$self/r.json")" shots_sum="$(cksum <"$self/s.xmf")"
mapfile -t out_r < <(into r)
expect 2 "receivers\.file = .*r\.json is also an output" "$rtm3d" model "$deck" "${quick[@]}" \
  --set receivers.layout=file --set receivers.file="$self/r.json" "${out_r[@]}" --force
expect_file_unchanged "$self/r.json" "$points_sum"
mapfile -t out_s < <(into s)
expect 2 "shots\.file = .*s\.xmf is also an output" "$rtm3d" model "$deck" "${quick[@]}" \
  --set shots.layout=file --set shots.file="$self/s.xmf" "${out_s[@]}" --force
expect_file_unchanged "$self/s.xmf" "$shots_sum"

# migrate's rtm.observed as NAME.h5 and as NAME.resume.h5 (the gathers of a model run)
"$rtm3d" model "$deck" --quiet --set snapshots.every=0 --set time.steps=40 \
  --set output.dir="$self" --set output.name=obs || rob_fail "the model run for obs.h5 exited $?"
observed_sum="$(cksum <"$self/obs.h5")"
mapfile -t out_obs < <(into obs)
expect 2 "rtm\.observed = .*obs\.h5 is also an output of this run" "$rtm3d" migrate "$deck" \
  --quiet --set rtm.observed="$self/obs.h5" "${out_obs[@]}" --force
cp "$self/obs.h5" "$self/st.resume.h5"
mapfile -t out_st < <(into st)
expect 2 "rtm\.observed = .*st\.resume\.h5 is also an output" "$rtm3d" migrate "$deck" \
  --quiet --set rtm.observed="$self/st.resume.h5" "${out_st[@]}" --force
expect_file_unchanged "$self/obs.h5" "$observed_sum"
expect_file_unchanged "$self/st.resume.h5" "$observed_sum"

# a link to nothing at one of a run's names (stat takes it for absent): the run did all its
# work, then failed at its rename ("appeared while the run ran", six partial files left), or
# a migration replaced the user's link at NAME.resume.h5 with its state, exit 0: refused
# before any work, exit 2, --force or not, the link kept and nothing else made
dangling_name() { # NAME ENDING COMMAND-ARGS...: a dangling NAME+ENDING refuses the run
  local name="$1" ending="$2"
  shift 2
  mkdir -p "$work/dl"
  ln -s "$work/nowhere$ending" "$work/dl/$name$ending"
  expect 2 "$name${ending//./\\.} is a symbolic link to nothing" "$rtm3d" "$@" \
    --set output.dir="$work/dl" --set output.name="$name"
  [ -L "$work/dl/$name$ending" ] && [ ! -e "$work/nowhere$ending" ] &&
    [ "$(find "$work/dl" -name "$name*" | wc -l)" -eq 1 ] &&
    rob_pass "the dangling $name$ending kept, nothing else made" ||
    rob_fail "after the dangling $name$ending: $(ls "$work/dl" | tr '\n' ' ')"
}
dangling_name dm .h5 model "$deck" "${quick[@]}"
dangling_name dj .json model "$deck" "${quick[@]}" --force
dangling_name ds .resume.h5 migrate "$deck" --quiet --set rtm.observed="$self/obs.h5" --max-shots 1
# a second --max-shots was taken over the first (a probe): refused, nothing run
expect 2 "migrate: --max-shots is given twice: give it once" "$rtm3d" migrate "$deck" --quiet \
  --set rtm.observed="$self/obs.h5" --set output.dir="$work/twice" --max-shots=1 --max-shots=2
[ ! -e "$work/twice" ] && rob_pass "nothing of the refused migration" ||
  rob_fail "the refused migration left $work/twice"

# ---- F5: what a --force run without SEG-Y leaves at NAME.sgy and NAME.h5.replaced ----
out="$work/out"
mkdir -p "$out"
force_run() { # force_run NAME [ARGS...]: a --force model run of NAME in $out, its warnings said
  local name="$1"
  shift
  "$rtm3d" model "$deck" --set snapshots.every=0 --set time.steps=10 --set output.name="$name" \
    --force "$@"
}
mkfifo "$out/fifo.sgy"
expect 0 "fifo\.sgy stays" force_run fifo
stays_as -p "$out/fifo.sgy"
if mknod "$out/dev.sgy" c 1 3 2>/dev/null; then
  expect 0 "dev\.sgy stays" force_run dev
  stays_as -c "$out/dev.sgy"
fi
mkdir "$out/folder.sgy"
expect 0 "folder\.sgy stays" force_run folder
stays_as -d "$out/folder.sgy"
printf 'precious\n' >"$work/precious.txt"
ln -s "$work/precious.txt" "$out/link.sgy"
expect 0 "link\.sgy stays" force_run link
stays_as -L "$out/link.sgy"
head -c 8000 /dev/urandom >"$out/mine.sgy" # a user's own file: no rtm3d text header
mine_sum="$(cksum <"$out/mine.sgy")"
expect 0 "mine\.sgy stays: it is not a SEG-Y file rtm3d wrote" force_run mine
expect_file_unchanged "$out/mine.sgy" "$mine_sum"
# a user's NAME.h5.replaced: the earlier NAME.h5 is kept aside under another name
expect 0 "" force_run kept
printf 'mine\n' >"$out/kept.h5.replaced"
kept_sum="$(cksum <"$out/kept.h5.replaced")"
expect 0 "" force_run kept
expect_file_unchanged "$out/kept.h5.replaced" "$kept_sum"
left="$(cd "$out" && ls -1 kept.h5.replaced.* 2>/dev/null)"
[ -z "$left" ] && rob_pass "no kept.h5.replaced.N left" || rob_fail "left: $left"
# rtm3d's own NAME.sgy of an earlier run (output.segy, or export of NAME.h5) goes
if has_feature "SEG-Y on"; then
  expect 0 "" force_run segy --set output.segy=true --set output.trace_dt=0.002
  [ -f "$out/segy.sgy" ] || rob_fail "the run with output.segy wrote no segy.sgy"
  expect 0 "" force_run segy
  [ ! -e "$out/segy.sgy" ] && rob_pass "the earlier run's segy.sgy is removed" ||
    rob_fail "segy.sgy, the earlier run's, stays"
  expect 0 "" force_run exported --set output.trace_dt=0.002
  expect 0 "" "$rtm3d" export "$out/exported.h5" --segy "$out/exported.sgy"
  expect 0 "" force_run exported
  [ ! -e "$out/exported.sgy" ] && rob_pass "exported.sgy, rtm3d's export of exported.h5, is removed" ||
    rob_fail "exported.sgy stays"
else
  echo "skip: this build has no SEG-Y"
fi

# ---- F14: a refusal under mpirun leaves no NAME.lock ----
if [ -n "$mpiexec" ]; then
  expect 2 "cannot open model file" "$mpiexec" --oversubscribe -np 2 "$rtm3d" model "$deck" \
    "${quick[@]}" --set model.file="$work/absent.h5" --set output.name=mpimodel
  expect_no_output "$out" mpimodel
  expect 2 "cannot open model file" "$mpiexec" --oversubscribe -np 2 "$rtm3d" migrate "$deck" \
    --quiet --set rtm.observed="$self/obs.h5" --set model.file="$work/absent.h5" \
    --set output.name=mpimigrate
  expect_no_output "$out" mpimigrate
else
  echo "skip: this build has no MPI launcher: the lock under mpirun is not tried"
fi

# ---- output.dir a file or a dangling link: refused (exit 2, a setting to fix), the link named
touch "$work/odfile"
ln -s "$work/nowhere/x" "$work/dangle"
for dir in odfile dangle; do
  expect 2 "cannot create directory .*$dir" "$rtm3d" model "$deck" --quiet \
    --set output.dir="$work/$dir"
done
grep -q "dangling link" <<<"$rob_output" && rob_pass "the dangling link named" ||
  rob_fail "the dangling link not named: $rob_output"

rob_finish
