#!/usr/bin/env bash
# Replays the calibration sets on the GPUs; exit 77 (skipped) where there is no GPU.
collmc=$1
src=$2
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "skipped: no NVIDIA GPU on this machine (run on the GPU machine: ctest -L gpu)"
  exit 77
fi
export NCCL_NVLS_ENABLE=0
dirs=("$src/tests/calibration" "$src/tests/calibration-2gpu")
exec "$collmc" replay --calibrate "${dirs[@]}"
