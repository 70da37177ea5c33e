#!/usr/bin/env bash
# Builds NCCL from a source tree (scripts/nccl-source.sh) for the GPUs of this machine only (their
# compute capability from nvidia-smi, e.g. sm_90 for the H200): NCCL's own Makefile, `src.build`
# only. Measured on the one-GPU H200 machine (16 cores): v2.30.7-1 in about 200 s, libnccl.so 59 MB.
# Skips the build when the library is already there. Prints the library's path on its last line.
# Usage: scripts/nccl-build.sh SRC_DIR [TIME_LIMIT_S]     (JOBS=N overrides the parallelism)
set -uo pipefail
src=$(readlink -f "${1:?NCCL source directory}")
limit=${2:-400}
lib="$src/build/lib/libnccl.so.2"
if [ ! -e "$lib" ]; then
  export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
  export PATH="$CUDA_HOME/bin:$PATH"
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
  [ -n "$cc" ] || { echo "nccl-build: no GPU answers nvidia-smi: cannot tell which architecture to build" >&2; exit 2; }
  echo "nccl-build: $(cat "$src/COLLMC_SOURCE.txt" 2>/dev/null || echo "$src") for sm_$cc, limit ${limit}s" >&2
  start=$(date +%s)
  # setsid + timeout on the group: a build cut short leaves no nvcc behind.
  timeout --kill-after=10 "$limit" setsid make -C "$src" -j"${JOBS:-$(nproc)}" src.build CUDA_HOME="$CUDA_HOME" \
    NVCC_GENCODE="-gencode=arch=compute_$cc,code=sm_$cc" >"$src/collmc-build.log" 2>&1
  rc=$?
  echo "nccl-build: make exit $rc after $(($(date +%s) - start)) s (log: $src/collmc-build.log)" >&2
  [ $rc -eq 0 ] || { tail -20 "$src/collmc-build.log" >&2; exit 1; }
fi
readlink -f "$lib"
