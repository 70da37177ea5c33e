#!/usr/bin/env bash
# On a GPU machine: builds NCCL from a carried source once (scripts/nccl-build.sh), then replays the
# given calibration sets against it (`collmc replay --calibrate --nccl LIB`). With fewer GPUs than ranks
# and NCCL 2.30+, ranks of one communicator share a GPU (one process per rank,
# NCCL_MULTI_RANK_GPU_ENABLE=1): every such row says "shared GPU" in its outcome cell. First, one
# replay against the system NCCL shows what it does with the same placement (2.28 refuses it).
# Everything lands in OUT_DIR: tables.md (one table per set), run.log, nccl-build.log.
# Usage: scripts/gpu-nccl-calibration.sh COLLMC NCCL_SRC OUT_DIR SET[@OPTION,...]...
#   a SET is a directory or .cmc files' list file (one path a line); options after @ go to replay, e.g.
#   tests/calibration-4gpu@--ranks-per-gpu=4
# BUDGET_S (default 540, counted from the start): a set not started by then is listed as not run.
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
src=${2:?NCCL source directory}
out=$(mkdir -p "${3:?output directory}" && readlink -f "$3")
shift 3
budget=${BUDGET_S:-540}
start=$(date +%s)
export NCCL_NVLS_ENABLE=0
source "$(dirname "$0")/gpu-leftovers.sh"
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi -L
status=0

echo "== system NCCL, no --nccl: what it says about the first set's first scenario"
first=$(find "${1%@*}" -name '*.cmc' 2>/dev/null | sort | head -1)
[ -n "$first" ] && timeout 60 "$collmc" replay "$first" | head -8

lib=$(scripts/nccl-build.sh "$src" 400 2>"$out/nccl-build.log") || { tail -20 "$out/nccl-build.log"; exit 1; }
tail -3 "$out/nccl-build.log"
echo "== NCCL built: $lib"

for set in "$@"; do
  path=${set%@*}
  opts=()
  [ "$set" != "$path" ] && IFS=, read -r -a opts <<<"${set#*@}"
  if (($(date +%s) - start > budget)); then
    echo "== NOT RUN (budget): $path"
    echo -e "\n### $path: not run (time budget)\n" >>"$out/tables.md"
    continue
  fi
  files=("$path")
  [ -f "$path" ] && [[ $path != *.cmc ]] && mapfile -t files <"$path"
  echo "== $path ${opts[*]:-}"
  t0=$(date +%s)
  timeout 400 "$collmc" replay --calibrate "${files[@]}" --nccl "$lib" "${opts[@]}" --table "$out/one.md" \
    >/dev/null
  rc=$?
  echo "   exit $rc after $(($(date +%s) - t0)) s"
  { echo -e "\n### $path ${opts[*]:-}\n"; cat "$out/one.md" 2>/dev/null || echo "(no table: exit $rc)"; } >>"$out/tables.md"
  rm -f "$out/one.md"
  [ $rc -eq 0 ] || status=1
done
no_leftovers "every set" || status=1
echo "== done after $(($(date +%s) - start)) s, status $status"
exit $status
