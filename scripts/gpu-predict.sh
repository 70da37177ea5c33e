#!/usr/bin/env bash
# On a GPU machine with two GPUs: the prediction of issue 15, end to end, in one command (~3 minutes).
#  (a) imports the recorder trace of the run that completed (tests/fixtures/traces/gpu/mempool_same_order)
#      with --open-orders, checks it (expected: deadlock) and replays the predicted order with the real
#      NCCL (expected: CONFIRMED);
#  (b) records the two PyTorch programs whose registration order comes from each rank's free GPU memory
#      (tests/gpu_fixtures/programs.py: pool_order_by_free_memory, which completes, and its _skewed
#      sibling, which hangs) under the collmc recorder, with Flight Recorder and NCCL logs;
#  (c) imports and checks the new recordings with and without --open-orders, and replays the prediction
#      from the completed one.
# Writes everything under OUTDIR (OUTDIR/gpu/<program>/ is laid out as tests/fixtures/traces/gpu/), leaves
# no process behind, always runs with NCCL_NVLS_ENABLE=0.
# Usage: scripts/gpu-predict.sh COLLMC RECORDER_SO OUTDIR
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
recorder=$(readlink -f "${2:?path to libcollmc_record.so}")
out=${3:?output directory}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/scripts/gpu-leftovers.sh"
mkdir -p "$out"
out=$(readlink -f "$out")
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
start=$SECONDS
status=0
nvidia-smi -L

# predict_and_replay NAME TRACE_DIR: import with --open-orders, check, replay the predicted order.
predict_and_replay() {
  local name=$1 traces=$2
  echo "== $name: import without --open-orders"
  "$collmc" trace import "$traces" -o "$out/$name.recorded.cmc" --quiet
  "$collmc" check "$out/$name.recorded.cmc" --quiet
  echo "== $name: import with --open-orders"
  "$collmc" trace import --open-orders "$traces" -o "$out/$name.predicted.cmc" 2>&1 | tee "$out/$name.import.txt"
  "$collmc" check "$out/$name.predicted.cmc" --json "$out/$name.predicted.check.json" > "$out/$name.check.txt"
  head -1 "$out/$name.check.txt"
  echo "== $name: replay of the predicted order on the GPUs"
  timeout -k 10 120 "$collmc" replay "$out/$name.predicted.cmc" --json "$out/$name.predicted.replay.json" \
    2>&1 | tee "$out/$name.replay.txt"
  grep -q CONFIRMED "$out/$name.replay.txt" || { echo "NOT CONFIRMED: $name"; status=1; }
}

cd "$here" || exit 2
predict_and_replay mempool_same_order tests/fixtures/traces/gpu/mempool_same_order/recorder
echo "== seconds so far: $((SECONDS - start))"

echo "== record the free-memory pair"
scripts/gpu-record-fixtures.sh "$recorder" "$out/gpu" pool_order_by_free_memory pool_order_by_free_memory_skewed
for program in pool_order_by_free_memory pool_order_by_free_memory_skewed; do
  echo "== $program: $(grep -h 'registering on' "$out/gpu/$program"/logs/rank*.out | tr '\n' ';')"
done
if ls "$out/gpu/pool_order_by_free_memory/recorder/"*.jsonl > /dev/null 2>&1; then
  predict_and_replay pool_order_by_free_memory "$out/gpu/pool_order_by_free_memory/recorder"
fi
if ls "$out/gpu/pool_order_by_free_memory_skewed/recorder/"*.jsonl > /dev/null 2>&1; then
  echo "== pool_order_by_free_memory_skewed: the hung run, imported as recorded"
  "$collmc" trace import "$out/gpu/pool_order_by_free_memory_skewed/recorder" \
    -o "$out/pool_order_by_free_memory_skewed.recorded.cmc" 2>&1 | tee "$out/pool_order_by_free_memory_skewed.import.txt"
  "$collmc" check "$out/pool_order_by_free_memory_skewed.recorded.cmc" --quiet
fi

no_leftovers "the predictions" || status=1
echo "total seconds: $((SECONDS - start))"
exit $status
