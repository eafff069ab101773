#!/usr/bin/env bash
# makemodel and export against their own outputs and hostile descriptions:
#   - a symbolic link planted at MODEL.h5.partial is removed, never written through: the
#     file it points at stays as it was;
#   - a second makemodel of the same model.file while the first runs is refused (exit 2,
#     "another run", MODEL.h5.lock) and the first's /vp is whole (equal, to the bit, to a
#     sequential makemodel's);
#   - a NUL byte in a description line is refused naming file:line, not read as the end of
#     the line (vp=20\0 00 was built as vp=20); a UTF-8 byte order mark is skipped;
#   - a diffractor whose centre lies farther than its radius outside the grid is refused
#     naming file:line, not clamped onto an edge node;
#   - makemodel --force onto a run's NAME.h5 is refused, the run's files kept (E7);
#   - export --segy followed by an option (--quiet) is refused, no file named after it;
#   - export onto its own input (the same path, or the same file by another spelling) is
#     refused and the run file stays.
# shellcheck source=SCRIPTDIR/lib.sh
source "$(dirname "$0")/lib.sh" "$@"

deck="$work/deck.ini"
tiny_deck "$deck"
printf 'background vp=2000\n' >"$work/plain.model"

# makemodel NAME DESCRIPTION [ARGS...]: $work/NAME.h5 from DESCRIPTION on the tiny grid
makemodel() {
  local name="$1" description="$2"
  shift 2
  "$rtm3d" makemodel "$deck" --set model.description="$description" \
    --set model.file="$work/$name.h5" "$@"
}

# ---- a link at MODEL.h5.partial ----
printf 'not a model, and must stay so\n' >"$work/victim.txt"
victim_sum="$(cksum <"$work/victim.txt")"
ln -s "$work/victim.txt" "$work/linked.h5.partial"
expect 0 "wrote" makemodel linked "$work/plain.model"
expect_file_unchanged "$work/victim.txt" "$victim_sum"
# the model was written as a file of its own, and is the one a plain makemodel writes
[ -f "$work/linked.h5" ] && [ ! -L "$work/linked.h5" ] && rob_pass "the model is a file, not the link" ||
  rob_fail "$work/linked.h5 is missing or a link"
expect 0 "wrote" makemodel plain "$work/plain.model"
expect 0 "" "$rtm3d" validate "$work/linked.h5" "$work/plain.h5" --rtol 0 --atol 0

# ---- two makemodels of one file ----
# 160^3 cells and 40 Gaussians: seconds of building, in which the first holds its lock
{
  echo "background vp=2000 gradient=0.5"
  for k in $(seq 1 40); do echo "anomaly x=$((k * 30)) y=800 z=800 sigma=200 dvp=5"; done
} >"$work/slow.model"
big=(--set grid.nx=160 --set grid.ny=160 --set grid.nz=160)
makemodel sequential "$work/slow.model" "${big[@]}" --quiet ||
  rob_fail "the sequential makemodel exited $?"
makemodel race "$work/slow.model" "${big[@]}" --quiet >"$work/race1.log" 2>&1 &
first=$!
for _ in $(seq 1 1000); do
  [ -e "$work/race.h5.lock" ] || [ -e "$work/race.h5.partial" ] && break
  sleep 0.01
done
if kill -STOP "$first" 2>/dev/null; then
  if [ -e "$work/race.h5" ]; then
    rob_fail "the first makemodel was done before the second could start"
  fi
  expect 2 "another run" makemodel race "$work/slow.model" "${big[@]}"
  kill -CONT "$first"
fi
wait "$first"
first_status=$?
if [ "$first_status" -ne 0 ]; then
  rob_fail "the first makemodel exited $first_status: $(cat "$work/race1.log")"
else
  rob_pass "the first makemodel exited 0"
fi
expect 0 "" "$rtm3d" validate "$work/race.h5" "$work/sequential.h5" --rtol 0 --atol 0 \
  --datasets /vp
[ -e "$work/race.h5.lock" ] && rob_fail "the lock $work/race.h5.lock is left"

# ---- hostile descriptions ----
{
  printf 'background vp=20\0'
  printf '00\n'
} >"$work/nul.model"
expect 2 "nul\.model:1: .*NUL" makemodel nul "$work/nul.model"
expect_no_output "$work" nul
printf '\xef\xbb\xbfbackground vp=2500\ndiffractor x=100 y=100 z=100 radius=15 vp=3000\n' \
  >"$work/bom.model"
expect 0 "wrote" makemodel bom "$work/bom.model"
printf 'background vp=2000\ndiffractor x=1e6 y=-5e5 z=100 radius=5 vp=3000\n' >"$work/far.model"
expect 2 "far\.model:2: diffractor .*outside the grid" makemodel far "$work/far.model"
expect_no_output "$work" far
# a centre outside by less than its radius still touches the grid: built
printf 'background vp=2000\ndiffractor x=-3 y=100 z=100 radius=5 vp=3000\n' >"$work/edge.model"
expect 0 "wrote" makemodel edge "$work/edge.model"

# ---- makemodel --force onto a run's NAME.h5 (probe E7): refused, the run's files kept (its
# NAME.json and NAME.xmf would sit beside the model as if of one run); a model of the user's
# with a NAME.json of the user's beside it is no run's and is replaced
"$rtm3d" model "$deck" --quiet --set output.dir="$work/mmj" --set output.name=k \
  --set snapshots.every=10 || rob_fail "the model run exited $?"
k_sum="$(cat "$work/mmj"/k.* | cksum)"
expect 2 "model\.file 'k': rtm3d wrote .*mmj/k\.h5, .*mmj/k\.xmf for a model or migrate run" \
  "$rtm3d" makemodel "$deck" --set model.description="$work/plain.model" \
  --set model.file="$work/mmj/k.h5" --force
[ "$(cat "$work/mmj"/k.* | cksum)" = "$k_sum" ] && rob_pass "the run's files kept" ||
  rob_fail "makemodel --force changed the run's files: $(ls "$work/mmj" | tr '\n' ' ')"
# onto the run's other files (a probe: NAME.json and NAME.xmf replaced by the model, exit 0)
for member in k.json:report k.xmf:"XDMF sidecar" k_image_z.png:"z-plane figure" \
  k_shot12.sgy:"SEG-Y file of a shot"; do
  expect 2 "model\.file = .*mmj/${member%%:*} is a name of the run whose file is .*mmj/k\.h5 \(its ${member#*:}\)" \
    "$rtm3d" makemodel "$deck" --set model.description="$work/plain.model" \
    --set model.file="$work/mmj/${member%%:*}" --force
done
[ "$(cat "$work/mmj"/k.* | cksum)" = "$k_sum" ] && [ ! -e "$work/mmj/k_image_z.png" ] &&
  [ ! -e "$work/mmj/k_shot12.sgy" ] &&
  rob_pass "the run's files kept, no model beside them" ||
  rob_fail "makemodel --force changed the run's files: $(ls "$work/mmj" | tr '\n' ' ')"
echo '{"mine": 1}' >"$work/edge.json"
expect 0 "wrote" makemodel edge "$work/plain.model" --force

# ---- export onto its own input ----
if has_feature "SEG-Y on"; then
  "$rtm3d" model "$deck" --set shots.layout=grid --set shots.x_count=2 --set shots.y_count=1 \
    --set shots.z=60 --set output.dir="$work" --set output.name=run --quiet ||
    rob_fail "the model run exited $?"
  run_sum="$(cksum <"$work/run.h5")"
  expect 2 "run file being exported" "$rtm3d" export "$work/run.h5" --segy "$work/run.h5" --force
  expect_file_unchanged "$work/run.h5" "$run_sum"
  expect 2 "run file being exported" "$rtm3d" export "$work/run.h5" --segy "$work/./run.h5" --force
  expect_file_unchanged "$work/run.h5" "$run_sum"
  expect 0 "" "$rtm3d" export "$work/run.h5" --segy "$work/run.sgy" --quiet
  # one file a shot: the files named as written; a name starting with a dot keeps it whole
  # (a probe: .hidden gave _shot0.hidden, and "wrote OUT" named a file never written)
  expect 0 "export: wrote .*/\.hidden_shot0 to .*/\.hidden_shot1: 2 shots of p" \
    "$rtm3d" export "$work/run.h5" --segy "$work/.hidden" --per-shot
  [ -f "$work/.hidden_shot0" ] && [ -f "$work/.hidden_shot1" ] && [ ! -e "$work/_shot0.hidden" ] &&
    rob_pass "the per-shot files are .hidden_shot<k>" ||
    rob_fail "per-shot files: $(ls -a "$work" | grep shot | tr '\n' ' ')"
  # a smaller set over it: the earlier set's last file goes as for any name (a review: the
  # earlier set was looked for as _shot<k>.hidden and .hidden_shot2 stayed)
  mkdir -p "$work/dots"
  cp "$work/.hidden_shot0" "$work/dots/.h_shot0"
  cp "$work/.hidden_shot1" "$work/dots/.h_shot2" # as rtm3d wrote it: a shot of an earlier set
  expect 0 "" "$rtm3d" export "$work/run.h5" --segy "$work/dots/.h" --per-shot --force --quiet
  [ ! -e "$work/dots/.h_shot2" ] && rob_pass "the earlier set's .h_shot2 is removed" ||
    rob_fail "left: $(ls -a "$work/dots" | tr '\n' ' ')"
  # an option where the file name should be: refused, no file named after the option
  here="$PWD"
  cd "$work" || exit 1
  for option in --quiet --force; do
    expect 2 "--segy needs a value, and '$option' is an option" \
      "$rtm3d" export "$work/run.h5" --segy "$option"
    [ -e "$work/$option" ] && rob_fail "export --segy $option wrote a file named $option"
  done
  cd "$here" || exit 1
else
  echo "skip: this build has no SEG-Y"
fi

# --- an empty or folder-like --segy is a usage error (exit 2), not a failed rename (exit 1)
expect 2 "export: say where: --segy OUT\.sgy" "$rtm3d" export "$work/none.h5" --segy ""
expect 2 "names a folder: give a file name" "$rtm3d" export "$work/none.h5" --segy "$work/"
# an option where the file name should be: refused, no file named after the option

# --- makemodel into DIR/NAME.h5 while a model run of output.name NAME writes in DIR: both
# would write DIR/NAME.h5.partial, so they share the lock DIR/NAME.lock and one is refused
"$rtm3d" model "$deck" --set time.steps=1000000 --set output.dir="$work" --set output.name=busy \
  --quiet >/dev/null 2>&1 &
busy=$!
for _ in $(seq 100); do [ -e "$work/busy.h5.partial" ] && break; sleep 0.1; done
expect 2 "another run is writing model\.file 'busy'" makemodel busy "$work/plain.model"
kill -TERM "$busy" 2>/dev/null
wait "$busy" 2>/dev/null || true
[ ! -e "$work/busy.h5" ] && rob_pass "the running model's name was not written" ||
  rob_fail "makemodel wrote busy.h5 beside a run of that name"

# ---- model.description in a model run with no model.file: said to be makemodel's (probe T,
# T5: the deck's constant model ran without a word); with model.file, one deck serves both
expect 0 "model\.description = .*plain\.model is read by 'rtm3d makemodel' only" "$rtm3d" model \
  "$deck" --set model.description="$work/plain.model" --set time.steps=5 \
  --set output.dir="$work/described" --set output.name=d
expect 0 "" makemodel described_model "$work/plain.model" --quiet
grep -q "is read by 'rtm3d makemodel' only" <<<"$("$rtm3d" model "$deck" --set time.steps=5 \
  --set model.description="$work/plain.model" --set model.file="$work/described_model.h5" \
  --set output.dir="$work/described" --set output.name=e 2>&1)" &&
  rob_fail "warned with model.file set" || rob_pass "no warning where model.file is set"

# ---- a disk that fills while the model is written (a file size cap, EFBIG as ENOSPC; probe
# S, S2: HDF5 kept small datasets' values until their close and lost the failed write there,
# and makemodel said "wrote" of a model whose /delta, /theta and /phi were zeros, exit 0)
printf 'background vp=2000 epsilon=0.1 delta=0.05 theta=10 phi=20\n' >"$work/tilted.model"
expect 1 "model file .*capped\.h5: writing /[a-z]+: HDF5 call H5Dwrite" \
  bash -c 'trap "" XFSZ; ulimit -f 100; exec "$@"' capped "$rtm3d" makemodel "$deck" \
  --set model.description="$work/tilted.model" --set model.file="$work/capped.h5"
[ -z "$(ls "$work" | grep -F capped)" ] && rob_pass "nothing of the model that did not fit" ||
  rob_fail "left: $(ls "$work" | grep -F capped | tr '\n' ' ')"
rob_finish
