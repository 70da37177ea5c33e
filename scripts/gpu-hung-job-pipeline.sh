#!/usr/bin/env bash
# On a GPU machine: the walkthrough of docs/TRACES.md ("From a hung 16,000-rank job to a two-rank
# reproducer"), one command each, for each source a hung job can leave (Flight Recorder JSON dumps, NCCL
# INFO logs, collmc recorder traces): generate the job (bench/gen_hung_job.cpp), `trace import`, `check`,
# `shrink`, then `replay` the reproducer on the GPUs at hand. With fewer GPUs than the reproducer's ranks,
# NCCL 2.30+ is built from a carried source (scripts/nccl-build.sh) and the ranks share a GPU: the replay
# report says so, and such a result is a shared-GPU one, never a two-GPU one.
# Prints each step's exit status and wall time; every file lands in OUT_DIR.
# Usage: scripts/gpu-hung-job-pipeline.sh COLLMC GEN_HUNG_JOB NCCL_SRC OUT_DIR [WORLD [ENTRIES]]
#   FORMATS="json nccl-log recorder" (default: all three; also pickle) picks the sources.
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
gen=$(readlink -f "${2:?collmc_gen_hung_job binary}")
src=${3:?NCCL source directory (scripts/nccl-source.sh)}
out=$(mkdir -p "${4:?output directory}" && readlink -f "$4")
world=${5:-1024}
entries=${6:-400}
export NCCL_NVLS_ENABLE=0
source "$(dirname "$0")/gpu-leftovers.sh"
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi -L
gpus=$(nvidia-smi -L | wc -l)
status=0

# step NAME CMD...: runs CMD, prints its exit status and wall time; returns its status.
step() {
  local name=$1
  shift
  local t0 t1 rc
  t0=$(date +%s%N)
  "$@"
  rc=$?
  t1=$(date +%s%N)
  echo "== $name: exit $rc, $(((t1 - t0) / 1000000)) ms" >&2  # (stderr: a step's own output may go elsewhere)
  return $rc
}

nccl_args=()
if ((gpus < 2)); then
  lib=$(scripts/nccl-build.sh "$src" 400 2>"$out/nccl-build.log") || {
    tail -20 "$out/nccl-build.log"
    exit 1
  }
  tail -2 "$out/nccl-build.log"
  nccl_args=(--nccl "$lib")
fi

for format in ${FORMATS:-json nccl-log recorder}; do
  dir="$out/$format"
  mkdir -p "$dir"
  echo "== $format: $world ranks x $entries calls"
  step "$format generate" "$gen" --format "$format" --world "$world" --entries "$entries" --out "$dir/traces" \
    --jobs "$(nproc)" >/dev/null || status=1
  step "$format trace import" "$collmc" trace import "$dir/traces" -o "$dir/job.cmc" || status=1
  # check exits 1 for a deadlock: the expected verdict here.
  step "$format check" "$collmc" check "$dir/job.cmc" --quiet
  [ $? -eq 1 ] || status=1
  step "$format shrink" "$collmc" shrink "$dir/job.cmc" -o "$dir/small.cmc" || status=1
  cat "$dir/small.cmc"
  step "$format replay" "$collmc" replay "$dir/small.cmc" "${nccl_args[@]}" --json "$dir/replay.json" || status=1
  rm -rf "$dir/traces"
done
no_leftovers "the replays" || status=1
echo "== done, status $status"
exit $status
