#!/usr/bin/env bash
# On the one-GPU machine: the seed's hang through the torch shim (issue 34). PyTorch 2.11 (/opt/torch/.venv)
# with NCCL 2.30.7 built from a carried source and preloaded, NCCL_MULTI_RANK_GPU_ENABLE=1, two ranks on the one
# GPU (a shared-GPU result, never a two-GPU one): tests/gpu_fixtures/shim_mempool.py registers a plain
# torch.cuda.MemPool (expandable segments) on two groups, in one order ("same": completes) and in opposite orders
# ("opposite": both ranks hang in register_mem_pool), each run under `collmc record` (the NCCL recorder and the
# torch shim), and "plain" (the same order on a pool of plain cudaMalloc segments, expandable_segments:False:
# NCCL refuses a window on that memory). The traces land in OUT_DIR/<mode>/ as one tar each; import and check
# them where collmc is built.
# Usage: LD_LIBRARY_PATH=.carry/lib scripts/gpu-torch-shim.sh COLLMC RECORDER NCCL_SRC OUT_DIR
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
recorder=$(readlink -f "${2:?libcollmc_record.so}")
src=${3:?NCCL source directory (scripts/nccl-source.sh)}
out=$(mkdir -p "${4:?output directory}" && readlink -f "$4")
here=$(cd "$(dirname "$0")/.." && pwd)
export NCCL_NVLS_ENABLE=0 NCCL_MULTI_RANK_GPU_ENABLE=1 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi -L
lib=$(JOBS=$(nproc) "$here/scripts/nccl-build.sh" "$src" 300 2>"$out/nccl-build.log") || {
  tail -20 "$out/nccl-build.log"
  exit 1
}
tail -2 "$out/nccl-build.log"
python=/opt/torch/.venv/bin/python
"$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
status=0
for mode in same opposite plain; do
  t0=$(date +%s)
  alloc_conf=expandable_segments:True
  [ "$mode" = plain ] && alloc_conf=expandable_segments:False
  # The recorder first, then the NCCL it records: collmc record appends its recorder to LD_PRELOAD, and a
  # library preloaded before the recorder would answer the NCCL calls itself.
  PYTORCH_CUDA_ALLOC_CONF=$alloc_conf LD_PRELOAD="$recorder:$lib" PYTHONPATH="$here/python" "$collmc" record --hang-after 5 --time-limit 120 \
    -o "$out/traces-$mode" -- "$python" -m collmc.launch 2 "$here/tests/gpu_fixtures/shim_mempool.py" "$mode"
  rc=$?
  echo "== $mode: collmc record exit $rc after $(($(date +%s) - t0)) s"
  for f in "$out/traces-$mode"/*.jsonl; do
    echo "-- $(basename "$f"): $(wc -l <"$f") lines"
    grep -c '"ev":"enter"' "$f" | sed 's/^/   enters: /'
    grep -o '"call":"register_mem_pool"[^}]*' "$f" | head -2 | sed 's/^/   /'
  done
  tar -C "$out" -cf "$out/traces-$mode.tar" "traces-$mode" && rm -rf "${out:?}/traces-$mode"
  if [ "$mode" = same ] && [ $rc -ne 0 ]; then status=1; fi
  if [ "$mode" = opposite ] && [ $rc -ne 124 ]; then status=1; fi
done
nvidia-smi --query-compute-apps=pid --format=csv,noheader | grep -q . && { echo "GPU processes left"; status=1; }
exit $status
