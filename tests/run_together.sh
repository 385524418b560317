# Sourced by test.sh and tests/sanitizers/run_sanitized.sh.
#
#   run_together NAME1 CMD1 NAME2 CMD2
#
# Runs two shell commands at once, each writing to its own log, then prints both logs (each
# under its name) and fails if either failed. For test runs that use about one core each (a
# pytest process compiling and comparing one case at a time), so that two of them fill the
# two cores a CI machine has instead of running one after the other.
run_together() {
  local name1="$1" cmd1="$2" name2="$3" cmd2="$4"
  local log1 log2 status1=0 status2=0
  log1="$(mktemp)"
  log2="$(mktemp)"
  bash -c "$cmd1" >"$log1" 2>&1 &
  local pid1=$!
  bash -c "$cmd2" >"$log2" 2>&1 &
  local pid2=$!
  wait "$pid1" || status1=$?
  wait "$pid2" || status2=$?
  echo "-- $name1 (exit $status1)"
  cat "$log1"
  echo "-- $name2 (exit $status2)"
  cat "$log2"
  rm -f "$log1" "$log2"
  [ "$status1" -eq 0 ] && [ "$status2" -eq 0 ]
}
