#!/usr/bin/env bash
# On a GPU machine with two GPUs, python3 and PyTorch: runs the three programs of tests/gpu_fixtures/
# (2 ranks each) under the collmc recorder, with Flight Recorder and NCCL INFO logs on, and lays the
# results out as OUTDIR/<program>/{recorder,flight_recorder,nccl_log,logs}/ plus OUTDIR/<program>/outcome.txt.
# Two of the programs hang on purpose: every run has a hard time limit, stragglers are killed, and the
# whole script finishes in under 4 minutes, leaving no process behind.
# Usage: scripts/gpu-record-fixtures.sh RECORDER_SO OUTDIR [PROGRAM...]
# (no PROGRAM: the first three; tests/gpu_fixtures/programs.py lists them all). Python: $PYTHON, else
# /opt/torch/.venv/bin/python where it exists, else python3.
set -uo pipefail
recorder=$(readlink -f "${1:?path to libcollmc_record.so}")
out=${2:?output directory}
[ -f "$recorder" ] || { echo "no recorder at $1" >&2; exit 2; }
here=$(cd "$(dirname "$0")/.." && pwd)
programs_py="$here/tests/gpu_fixtures/programs.py"
if [ -z "${PYTHON:-}" ]; then
  PYTHON=python3
  [ -x /opt/torch/.venv/bin/python ] && PYTHON=/opt/torch/.venv/bin/python
fi
shift 2
programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=(mempool_same_order mempool_opposite_order skipped_collective)
mkdir -p "$out"
out=$(readlink -f "$out")
script_start=$SECONDS

# Always: no NVLink multicast on the lent machines.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export MASTER_ADDR=127.0.0.1 WORLD_SIZE=2 PYTHONUNBUFFERED=1

{
  echo "date: $(date -u +%FT%TZ)"
  nvidia-smi -L 2>&1 | head -4
  timeout 60 "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())' 2>&1
} > "$out/versions.txt"
cat "$out/versions.txt"

# run_program NAME LIMIT_S: both ranks in their own session (so a hung rank and its helpers die together).
run_program() {
  local name=$1 limit=$2 port=$3
  local dir="$out/$name"
  rm -rf "$dir"
  mkdir -p "$dir/recorder" "$dir/flight_recorder" "$dir/nccl_log" "$dir/logs"
  local pids=() rank
  local start=$SECONDS
  for rank in 0 1; do
    RANK=$rank LOCAL_RANK=$rank MASTER_PORT=$port \
    COLLMC_TRACE_DIR="$dir/recorder" \
    LD_PRELOAD="${LD_PRELOAD:+$LD_PRELOAD:}$recorder" \
    NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,COLL NCCL_DEBUG_FILE="$dir/nccl_log/nccl.%h.%p.log" \
    TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 \
    TORCH_FR_DUMP_TEMP_FILE="$dir/flight_recorder/fr_timeout_" \
    TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$dir/flight_recorder/fr_timeout_" \
      setsid timeout -s TERM -k 5 "$limit" "$PYTHON" "$programs_py" "$name" "$dir" \
      > "$dir/logs/rank$rank.out" 2>&1 &
    pids+=($!)
  done
  local codes=()
  for pid in "${pids[@]}"; do
    wait "$pid"
    codes+=($?)
  done
  # Anything still alive in those sessions (helpers the timeout did not reach): kill it.
  for pid in "${pids[@]}"; do kill -KILL -- "-$pid" 2>/dev/null; done
  {
    echo "program: $name"
    echo "seconds: $((SECONDS - start)) (limit $limit)"
    for rank in 0 1; do
      local c=${codes[$rank]}
      local what="exited $c"
      { [ "$c" -eq 124 ] || [ "$c" -eq 137 ]; } && what="killed at the time limit ($c): hung"
      echo "rank $rank: $what"
    done
  } > "$dir/outcome.txt"
  cat "$dir/outcome.txt"
  # Empty trace files are of no use as fixtures.
  find "$dir" -type f -empty -delete
  ls -lR "$dir" | sed 's/^/  /'
}

# Time limits: the programs that complete get room, the ones that hang are cut soon after the hang.
port=29611
for name in "${programs[@]}"; do
  case $name in
    mempool_same_order | pool_order_by_free_memory) limit=80 ;;
    mempool_opposite_order | pool_order_by_free_memory_skewed) limit=45 ;;
    skipped_collective) limit=60 ;;
    *) echo "unknown program $name" >&2; continue ;;
  esac
  run_program "$name" "$limit" "$port"
  port=$((port + 1))
done

echo "== leftovers"
sleep 1
left=$(pgrep -f "$programs_py" || true)
if [ -n "$left" ]; then
  echo "LEFT: $left"
  for pid in $left; do kill -KILL "$pid" 2>/dev/null; done
fi
nvidia-smi --query-compute-apps=pid --format=csv,noheader 2>/dev/null | sed 's/^/GPU process left: /'
echo "total seconds: $((SECONDS - script_start))"
