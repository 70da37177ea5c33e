#!/usr/bin/env bash
# On a GPU machine: the shrunk Megatron-FSDP hang must replay CONFIRMED, and `replay --shrink` must
# shrink the W = 16 walkthrough scenario to the GPU count and replay that. Exit 0 when both agree.
# Usage (from the checkout): scripts/gpu-shrink-replay.sh COLLMC [OUT_DIR]
set -uo pipefail
collmc=$(realpath "${1:?collmc binary}")
out=${2:-.}
export NCCL_NVLS_ENABLE=0
mkdir -p "$out"
nvidia-smi -L
status=0
echo "== replay examples/megatron_shrunk_2gpu.cmc (expect CONFIRMED)"
"$collmc" replay examples/megatron_shrunk_2gpu.cmc --json "$out/megatron_shrunk_2gpu.replay.json" || status=1
echo "== replay --shrink of the W = 16 walkthrough scenario"
"$collmc" gen megatron --world 16 --tp 2 --cp 2 --ep 4 --dist-opt-instances 2 --order per-rank \
  --late-segments some -o "$out/megatron_w16.cmc" || status=1
(cd "$out" && "$collmc" replay --shrink megatron_w16.cmc --json megatron_w16.shrunk.replay.json) || status=1
exit $status
