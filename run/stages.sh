# run/stages.sh - sourced by quickstart.sh and test.sh: one line per stage of a set-up
# ("quickstart: 3/5 building 110 targets ... done (95 s)") with the stage's output in a log
# file, a percentage from ninja's [k/N] or rtm3d's "NN%" while it runs (one updating line on
# a terminal, a plain line every 30 s otherwise), and on failure the log's tail and path.
#
#   rtm_stages_begin NAME LOG COUNT   start a log (emptied) for COUNT numbered stages
#   rtm_stage LABEL CMD [ARG...]      run CMD as the next stage; exits on its failure
#   rtm_phase LABEL                   the next stage's line alone: its output is the user's
#                                     to see (ctest's results), printed below the line
#   rtm_build_label DIR               "N targets" ninja would build in DIR (after configuring)
#   rtm_elapsed SECONDS               "95 s" or "3 min 05 s"
#
# CMD runs in a subshell with `set -e` off (it is part of an || list): a shell function
# given as CMD chains its commands with && so that a failing one fails the stage.
# shellcheck shell=bash
shopt -s lastpipe

rtm_elapsed() {
  if (( $1 < 60 )); then printf '%d s' "$1"; else printf '%d min %02d s' $(( $1 / 60 )) $(( $1 % 60 )); fi
}

rtm_stages_begin() {
  rtm_stages_name=$1 rtm_stages_log=$2 rtm_stages_count=$3 rtm_stages_k=0
  mkdir -p "$(dirname "$rtm_stages_log")"
  : > "$rtm_stages_log"
  # a user's NINJA_STATUS would hide the [k/N] the percentage is read from
  export NINJA_STATUS="[%f/%t] "
}

rtm_build_label() {
  local total
  total=$(ninja -C "$1" -n 2>/dev/null | sed -n 's|^\[[0-9]*/\([0-9]*\)\].*|\1|p' | tail -1)
  if [ -n "$total" ]; then echo "$total targets"; else echo "nothing to do"; fi
}

rtm_phase() {
  rtm_stages_k=$(( rtm_stages_k + 1 ))
  printf '%s: %d/%d %s\n' "$rtm_stages_name" "$rtm_stages_k" "$rtm_stages_count" "$1"
}

# reads CMD's output (already in the log); keeps rtm_stage_open (the stage's line still
# waits for its end), rtm_stage_note (the backend a run took), rtm_stage_warnings and
# rtm_stage_relay (run/deps.sh's notes of what it could not install, shown below the line)
rtm_stage_progress() {
  local head=$1 line pct last=-1 shown=$SECONDS width
  # a progress line longer than the terminal would wrap, and \r not go back to its start
  width=$(( ${COLUMNS:-$(tput cols 2>/dev/null || echo 80)} - 1 ))
  while IFS= read -r line; do
    [[ $line == "rtm3d: warning:"* ]] && rtm_stage_warnings=$(( rtm_stage_warnings + 1 ))
    [[ $line == "run/deps.sh: "* ]] && rtm_stage_relay+=("$line")
    [[ $line =~ backend\ ([a-z]+)\ on\  ]] && rtm_stage_note="on ${BASH_REMATCH[1]}"
    pct=""
    if [[ $line =~ ^\[([0-9]+)/([0-9]+)\]\  ]]; then
      pct=$(( BASH_REMATCH[1] * 100 / BASH_REMATCH[2] ))
    elif [[ $line =~ \ ([0-9]{1,3})%\ +ETA ]]; then
      pct=${BASH_REMATCH[1]}
    fi
    if [ -z "$pct" ] || [ "$pct" = "$last" ]; then continue; fi
    last=$pct
    if [ -t 1 ]; then
      line="$head ... $pct%"
      printf '\r\033[K%s' "${line:0:width}"
    elif (( SECONDS - shown >= 30 )); then
      (( rtm_stage_open )) && printf '\n'
      rtm_stage_open=0 shown=$SECONDS
      printf '%s ... %s%% (%s)\n' "$head" "$pct" "$(rtm_elapsed $(( SECONDS - rtm_stage_start )))"
    fi
  done
}

rtm_stage() {
  local label=$1 rc=0 head end
  shift
  rtm_stages_k=$(( rtm_stages_k + 1 ))
  head="$rtm_stages_name: $rtm_stages_k/$rtm_stages_count $label"
  rtm_stage_start=$SECONDS rtm_stage_open=1 rtm_stage_note="" rtm_stage_warnings=0 rtm_stage_relay=()
  printf '%s ...' "$head"
  printf '\n=== %s: %s\n' "$head" "$*" >> "$rtm_stages_log"
  "$@" < /dev/null 2>&1 | tee -a "$rtm_stages_log" | rtm_stage_progress "$head" || rc=$?
  end="$(rtm_elapsed $(( SECONDS - rtm_stage_start )))"
  [ -z "$rtm_stage_note" ] || end="$end $rtm_stage_note"
  case $rtm_stage_warnings in
    0) ;;
    1) end="$end; 1 rtm3d warning in the log" ;;
    *) end="$end; $rtm_stage_warnings rtm3d warnings in the log" ;;
  esac
  if [ -t 1 ]; then printf '\r\033[K%s ... ' "$head"
  elif (( ! rtm_stage_open )); then printf '%s ... ' "$head"
  else printf ' '
  fi
  if (( rc == 0 )); then
    printf 'done (%s)\n' "$end"
    (( ${#rtm_stage_relay[@]} == 0 )) || printf '  %s\n' "${rtm_stage_relay[@]}"
    return 0
  fi
  printf 'FAILED (exit status %d, after %s)\n' "$rc" "$end"
  echo "--- the last 30 lines of $rtm_stages_log:" >&2
  tail -n 30 "$rtm_stages_log" >&2
  echo "--- $rtm_stages_name: stage $rtm_stages_k ($label) failed; the whole log: $rtm_stages_log" >&2
  exit "$rc"
}
