# Sourced by the scripts/gpu-*.sh runs: no_leftovers LABEL says what a run left behind (collmc and
# collmc-nccl-rank processes, GPU compute processes) and succeeds only when it left nothing. It waits a
# second first: a rank's exit is reported before its process is reaped.
no_leftovers() {
  sleep 1
  local left apps
  left=$(pgrep -x collmc; pgrep -f collmc-nccl-rank || true)
  apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -c . || true)
  echo "leftovers after $1: collmc processes: ${left:-none}; GPU compute processes: $apps"
  [ -n "$left" ] && ps -fp $left
  [ -z "$left" ] && [ "$apps" = 0 ]
}
