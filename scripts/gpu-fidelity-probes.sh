#!/usr/bin/env bash
# On a GPU machine with two or more GPUs: replays the fidelity probes of issue 14
# (tests/calibration-probes: abort one comm at a time / grouped / on two streams / with a peer that never
# aborts, two threads on one comm, destroy with runtime_connect off (warm and cold) and on nonblocking
# comms, a window registered inside a group) with
# `collmc replay --calibrate`, first against the system NCCL, then, when a newer NCCL's source was
# carried (default .carry/nccl-src, a `git archive` of NVIDIA/nccl v2.30.7-1), builds it for sm_90 and
# replays the same probes against it through LD_LIBRARY_PATH. Everything lands under OUT_DIR; the
# script never leaves a process behind. Budget: about 1 minute of probes per NCCL, plus the build
# (bounded by BUILD_LIMIT seconds, default 270; a build that does not finish is reported, not retried).
# Usage: scripts/gpu-fidelity-probes.sh COLLMC OUT_DIR [NCCL_SRC]
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
out=$(mkdir -p "${2:?output directory}" && readlink -f "$2")
nccl_src=${3:-.carry/nccl-src}
build_limit=${BUILD_LIMIT:-270}
probes=tests/calibration-probes
export NCCL_NVLS_ENABLE=0
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
status=0

nvidia-smi -L | tee "$out/gpus.txt"
gpus=$(nvidia-smi -L | wc -l)
[ "$gpus" -ge 2 ] || echo "WARNING: $gpus GPU(s); two-rank probes are refused unless their ranks share no comm"

leftovers() {  # what a run left: collmc processes and GPU compute processes
  sleep 1
  local left apps
  left=$(pgrep -x collmc || true)
  apps=$(nvidia-smi --query-compute-apps=pid --format=csv,noheader | wc -l)
  echo "leftovers after $1: collmc processes: ${left:-none}; GPU compute processes: $apps"
  [ -z "$left" ] && [ "$apps" -eq 0 ]
}

probe_run() {  # $1: label; NCCL from the environment
  local label=$1
  echo "== $label: collmc replay --calibrate $probes"
  timeout 200 "$collmc" replay --calibrate "$probes" --table "$out/$label.table.md" >"$out/$label.calibrate.txt" 2>&1
  echo "   calibrate exit $?"
  cat "$out/$label.table.md" 2>/dev/null || tail -20 "$out/$label.calibrate.txt"
  leftovers "$label"
}

# 1. The system NCCL (2.28.x on the lent H200s).
echo "== system NCCL: $(ls /usr/lib/x86_64-linux-gnu/libnccl.so.* 2>/dev/null | head -1)"
ldd "$collmc" | grep -i nccl | tee "$out/ldd.txt"
probe_run nccl-system || status=1

# 2. A newer NCCL built from the carried source (one-sided operations need 2.29+).
if [ -f "$nccl_src/Makefile" ]; then
  lib="$nccl_src/build/lib"
  if [ ! -e "$lib/libnccl.so.2" ]; then
    echo "== building $(cat "$nccl_src/COLLMC_SOURCE.txt" 2>/dev/null || echo "$nccl_src") (limit ${build_limit}s)"
    start=$(date +%s)
    # setsid + timeout on the group: a build cut short leaves no nvcc behind.
    timeout --kill-after=10 "$build_limit" setsid make -C "$nccl_src" -j16 src.build \
      NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90" >"$out/nccl-build.log" 2>&1
    rc=$?
    echo "   build exit $rc after $(( $(date +%s) - start )) s (log: nccl-build.log)"
    tail -5 "$out/nccl-build.log"
  fi
  if [ -e "$lib/libnccl.so.2" ]; then
    lib=$(readlink -f "$lib")
    echo "== built NCCL: $(ls "$lib"/libnccl.so.* | head -3 | tr '\n' ' ')"
    (
      export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
      ldd "$collmc" | grep -i nccl | tee "$out/ldd-built.txt"
      probe_run nccl-built
    ) || status=1
  else
    echo "== no built NCCL: the probes against the newer NCCL did not run"
    status=1
  fi
else
  echo "== no NCCL source at $nccl_src: the probes against the newer NCCL did not run"
fi
leftovers "all" || status=1
exit $status
