#!/usr/bin/env bash
# rtm3d tune on the GPU (label gpu; exit 77 without one): a short sweep on a small iso and
# a small tti deck writes the tune cache, kernel.* = auto then runs the cached winner in
# bench and model and says so, explicit keys still win, a damaged cache entry is ignored
# with a warning naming file and line, --no-save leaves the cache alone. bench's --csv and
# --json and tune's --csv replace a file whole, leave nothing aside, a failed write exits 1
# with the earlier file kept, a place they cannot be written is refused (exit 1) before any
# timing, and /dev/stdout sent to a file gets the CSV after what the command printed.
# Usage: cli_tune.sh RTM3D SOURCE_DIR FULL_DISK_PRELOAD
set -u
# shellcheck source=SCRIPTDIR/cli_setup.sh
source "$(dirname "${BASH_SOURCE[0]}")/cli_setup.sh" "$@"
require "^GPU 0:" "no CUDA device"
preload="$3" # tests/robustness/full_disk_preload.c: RTM3D_TEST_FAIL_SYNC fails a file's sync
export RTM3D_CACHE_DIR="$work/cache"
cache="$work/cache/kernels.ini"

small=(--set backend.name=cuda --set grid.nx=96 --set grid.ny=96 --set grid.nz=96
  --set bench.warmup=2 --set bench.steps=5 --set time.steps=20 --set output.dir="$work/out")

# iso: a sweep of at most 40 s, saved; its --csv replaces an earlier file whole
echo "an earlier file" > "$work/iso.csv"
"$rtm3d" tune "$deck" "${small[@]}" --time-limit 40 --csv "$work/iso.csv" > "$work/iso.log" 2>&1 ||
  fail "tune iso exited $?: $(tail -3 "$work/iso.log")"
winner="$(sed -n 's/^saved .* kernel\.\* = auto now runs \(.*\) for \[.*/\1/p' "$work/iso.log")"
[ -n "$winner" ] || fail "tune iso printed no 'saved' line: $(tail -5 "$work/iso.log")"
grep -q "| iso | fp32 | 128^3\]" "$cache" 2>/dev/null || fail "no iso 128^3 section in $cache"
grep -q "^kernel = $winner$" "$cache" 2>/dev/null || fail "$cache does not hold '$winner'"
[ "$(wc -l < "$work/iso.csv")" -gt 10 ] || fail "iso.csv has fewer than 10 candidates"
grep -q "an earlier file" "$work/iso.csv" && fail "tune --csv kept the earlier file's line"
echo "ok:   tune iso: winner $winner, $(grep -E '^swept' "$work/iso.log")"

# auto runs the cached winner: bench names the cache and times that shape
"$rtm3d" bench "$deck" "${small[@]}" > "$work/bench.log" 2>&1 || fail "bench exited $?"
grep -q "kernel\.\* auto: tune cache $cache" "$work/bench.log" ||
  fail "bench did not take the cache: $(grep -i kernel "$work/bench.log" | head -2)"
read -r halo stages tile zblock <<<"$winner"
grep -Eq "^single +$halo +$stages +$tile +$zblock " "$work/bench.log" ||
  fail "bench did not run $winner: $(grep '^single' "$work/bench.log")"
# and model says where its kernel came from
"$rtm3d" model "$deck" "${small[@]}" --force > "$work/model.log" 2>&1 || fail "model exited $?"
grep -q "(kernel\.\* auto: tune cache)" "$work/model.log" ||
  fail "model's run line does not name the cache: $(grep 'backend cuda' "$work/model.log")"
# explicit keys win over the cache
"$rtm3d" bench "$deck" "${small[@]}" --set kernel.halo=sync --set kernel.stages=2 \
  --set kernel.block_x=32 --set kernel.block_y=8 --set kernel.zblock=0 > "$work/explicit.log" 2>&1 ||
  fail "explicit bench exited $?"
grep -q "kernel\.\* auto" "$work/explicit.log" && fail "explicit kernel.* keys were replaced"
grep -Eq "^single +sync +2 +32x8 +0 " "$work/explicit.log" || fail "explicit shape not run"
echo "ok:   bench and model run the cached shape; explicit keys win"

# tti, another section beside iso's; --no-save changes nothing
"$rtm3d" tune "$deck" "${small[@]}" --set physics.equation=tti --set model.epsilon=0.2 \
  --set model.delta=0.1 --set model.theta=30 --set model.phi=20 --time-limit 40 \
  > "$work/tti.log" 2>&1 || fail "tune tti exited $?: $(tail -3 "$work/tti.log")"
grep -q "| tti | fp32 | 128^3\]" "$cache" || fail "no tti section in $cache"
grep -q "| iso | fp32 | 128^3\]" "$cache" || fail "the tti tune lost the iso section"
cp "$cache" "$work/before.ini"
"$rtm3d" tune "$deck" "${small[@]}" --halo ldgsts --no-save --time-limit 10 > "$work/nosave.log" 2>&1 ||
  fail "tune --no-save exited $?"
cmp -s "$cache" "$work/before.ini" || fail "--no-save changed $cache"
grep -q "^not saved" "$work/nosave.log" || fail "--no-save did not say so"
grep -Eq "^\[[0-9]+/[0-9]+\] +(sync|tma) " "$work/nosave.log" && fail "--halo ldgsts ran other halos"
echo "ok:   tti section beside iso's; --no-save and --halo"

# a damaged entry: a warning naming file:line, the table instead, exit 0
sed -i "/| iso | fp32 | 128^3\]/{n;s/^kernel = .*/kernel = warp 9 0x0 -1/}" "$cache"
"$rtm3d" bench "$deck" "${small[@]}" > "$work/damaged.log" 2>&1 || fail "bench on a damaged cache exited $?"
grep -Eq "warning: $cache:[0-9]+: not a kernel shape" "$work/damaged.log" ||
  fail "no warning for the damaged entry: $(head -3 "$work/damaged.log")"
grep -q "kernel\.\* auto: table row" "$work/damaged.log" || fail "the table did not step in"
echo "ok:   a damaged entry is ignored with a warning"

# --csv and --json: written aside and renamed over an earlier file; a name under a file (no
# folder there, root or not) refused before the timing, the earlier file kept
echo "an earlier file" > "$work/bench.csv"
"$rtm3d" bench "$deck" "${small[@]}" --csv "$work/bench.csv" --json "$work/bench.json" \
  > "$work/outputs.log" 2>&1 || fail "bench --csv --json exited $?"
head -1 "$work/bench.csv" | grep -q "^device,copy_gb_s," || fail "bench.csv was not replaced"
grep -q '"results": \[' "$work/bench.json" || fail "bench.json has no results"
for left in "$work"/*.partial*; do
  [ -e "$left" ] && fail "a file left aside: $left"
done
cp "$work/bench.csv" "$work/kept.csv"
# a write that fails after the timing (the disk refuses the new file's sync): exit 1, the
# earlier file as it was, nothing aside
env RTM3D_TEST_FAIL_SYNC=.csv LD_PRELOAD="$preload" "$rtm3d" bench "$deck" "${small[@]}" \
  --csv "$work/bench.csv" > "$work/unsynced.log" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "bench with a failed sync exited $code, not 1"
grep -q "error: --csv $work/bench.csv: not written" "$work/unsynced.log" ||
  fail "bench's failed sync: no error naming --csv: $(tail -2 "$work/unsynced.log")"
cmp -s "$work/bench.csv" "$work/kept.csv" || fail "a failed write changed bench.csv"
for left in "$work"/*.partial*; do
  [ -e "$left" ] && fail "a failed write left a file aside: $left"
done
for option in --csv --json; do
  "$rtm3d" bench "$deck" "${small[@]}" "$option" "$work/bench.csv/x" > "$work/refused.log" 2>&1
  code=$?
  [ "$code" -eq 1 ] || fail "bench $option under a file exited $code, not 1"
  grep -q "error: $option $work/bench.csv/x: the file could not be written there" \
    "$work/refused.log" || fail "bench $option: no error naming it: $(tail -2 "$work/refused.log")"
  grep -q "^single " "$work/refused.log" && fail "bench $option timed before refusing"
done
"$rtm3d" tune "$deck" "${small[@]}" --no-save --time-limit 10 --csv "$work/bench.csv/x" \
  > "$work/refused.log" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "tune --csv under a file exited $code, not 1"
grep -q "error: tune: --csv $work/bench.csv/x: the file could not be written there" \
  "$work/refused.log" || fail "tune --csv: no error naming it: $(tail -2 "$work/refused.log")"
grep -q "^swept" "$work/refused.log" && fail "tune swept before refusing its --csv"
# a stream given as the output is written in place; where stdout goes to a file, after what
# bench printed there (its table), the file not emptied under it
"$rtm3d" bench "$deck" "${small[@]}" --csv /dev/stdout > "$work/stdout.csv" 2>&1 ||
  fail "bench --csv /dev/stdout exited $?"
grep -q "^device,copy_gb_s," "$work/stdout.csv" || fail "bench --csv /dev/stdout printed no CSV"
table="$(grep -n "^single " "$work/stdout.csv" | head -1 | cut -d: -f1)"
header="$(grep -n "^device,copy_gb_s," "$work/stdout.csv" | head -1 | cut -d: -f1)"
if [ -z "$table" ] || [ -z "$header" ] || [ "$table" -ge "$header" ]; then
  fail "bench --csv /dev/stdout: its table not ahead of the CSV: $(head -3 "$work/stdout.csv")"
fi
[ "$(tr -d '\000' < "$work/stdout.csv" | wc -c)" -eq "$(wc -c < "$work/stdout.csv")" ] ||
  fail "bench --csv /dev/stdout: NUL bytes in the output (written over itself)"
echo "ok:   --csv and --json replaced whole or not at all; a place they cannot go refused first"

echo "cli_tune: $failures failure(s)"
[ "$failures" -eq 0 ]
