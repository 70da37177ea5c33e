#!/usr/bin/env bash
# On a GPU machine (two or more GPUs): replays the examples that fit and the calibration set with
# the real NCCL backend, then checks that nothing outlived the runs.
# Usage: scripts/gpu-replay.sh COLLMC CALIBRATION_DIR [OUT_DIR]
set -uo pipefail
collmc=${1:?collmc binary}
calibration=${2:?calibration directory}
out=${3:-.}
export NCCL_NVLS_ENABLE=0
source "$(dirname "$0")/gpu-leftovers.sh"
mkdir -p "$out"
nvidia-smi -L
gpus=$(nvidia-smi -L | wc -l)
echo "== NCCL: $(ls /usr/lib/x86_64-linux-gnu/libnccl.so.* 2>/dev/null | head -1)"
status=0
for f in examples/*.cmc; do
  grep -q "set profile = mpi" "$f" && continue
  # More ranks than GPUs run when ranks sharing no communicator can share a GPU; the rest are refused (exit 2).
  echo "== replay $f"
  "$collmc" replay "$f" --json "$out/$(basename "$f" .cmc).replay.json"
  case $? in 0) ;; 2) echo "   (refused: not placeable on $gpus GPUs)" ;; *) status=1 ;; esac
done
echo "== calibrate $calibration"
"$collmc" replay --calibrate "$calibration" --table "$out/calibration_table.md" || status=1
no_leftovers "the replays" || status=1
exit $status
