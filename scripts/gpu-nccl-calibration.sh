#!/usr/bin/env bash
# On a GPU machine: builds NCCL from carried sources once (scripts/nccl-build.sh), then replays the
# given calibration sets against each build (`collmc replay --calibrate --nccl LIB`). With fewer GPUs than
# ranks and NCCL 2.30+, ranks of one communicator share a GPU (one process per rank,
# NCCL_MULTI_RANK_GPU_ENABLE=1): every such row says "shared GPU" in its outcome cell. First, one
# replay against the system NCCL shows what it does with the same placement (2.28 refuses it).
# Everything lands in OUT_DIR: tables.md (one table per set and build), run.log, nccl-build*.log.
# Usage: scripts/gpu-nccl-calibration.sh COLLMC NCCL_SRC[:NCCL_SRC...] OUT_DIR SET[@OPTION,...]...
#   several sources (issue 36: 2.30.7 and 2.31.0a16 side by side) are built at once, the machine's cores
#   shared among them, and every set is replayed against each build in the order given;
#   a SET is a directory or .cmc files' list file (one path a line); options after @ go to replay, e.g.
#   tests/calibration-4gpu@--ranks-per-gpu=4
# BUDGET_S (default 540, counted from the start): a set not started by then is listed as not run.
# CALL_LIMIT_S (default 590): no set runs past it (the device call's limit), whatever its own 400 s.
set -uo pipefail
collmc=$(readlink -f "${1:?collmc binary}")
IFS=: read -r -a srcs <<<"${2:?NCCL source directory}"
out=$(mkdir -p "${3:?output directory}" && readlink -f "$3")
shift 3
budget=${BUDGET_S:-540}
call_limit=${CALL_LIMIT_S:-590}
start=$(date +%s)
export NCCL_NVLS_ENABLE=0
source "$(dirname "$0")/gpu-leftovers.sh"
exec > >(tee -a "$out/run.log") 2>&1
nvidia-smi -L
status=0

echo "== system NCCL, no --nccl: what it says about the first set's first scenario"
first=$(find "${1%@*}" -name '*.cmc' 2>/dev/null | sort | head -1)
[ -n "$first" ] && timeout 60 "$collmc" replay "$first" | head -8

# The builds run side by side, each with its share of the cores; a build already there is kept.
jobs=$(($(nproc) / ${#srcs[@]}))
pids=()
for i in "${!srcs[@]}"; do
  JOBS=$((jobs > 0 ? jobs : 1)) scripts/nccl-build.sh "${srcs[$i]}" 480 >"$out/nccl-lib$i.txt" 2>"$out/nccl-build$i.log" &
  pids+=($!)
done
libs=()
for i in "${!srcs[@]}"; do
  wait "${pids[$i]}" || { tail -20 "$out/nccl-build$i.log"; exit 1; }
  tail -3 "$out/nccl-build$i.log"
  libs+=("$(tail -1 "$out/nccl-lib$i.txt")")
  echo "== NCCL built: ${libs[$i]}"
done

for set in "$@"; do
  path=${set%@*}
  opts=()
  [ "$set" != "$path" ] && IFS=, read -r -a opts <<<"${set#*@}"
  files=("$path")
  [ -f "$path" ] && [[ $path != *.cmc ]] && mapfile -t files <"$path"
  for lib in "${libs[@]}"; do
    if (($(date +%s) - start > budget)); then
      echo "== NOT RUN (budget): $path against $lib"
      echo -e "\n### $path ($lib): not run (time budget)\n" >>"$out/tables.md"
      continue
    fi
    echo "== $path ${opts[*]:-} against $lib"
    t0=$(date +%s)
    left=$((call_limit - ($(date +%s) - start)))
    timeout $((left < 400 ? (left > 20 ? left : 20) : 400)) "$collmc" replay --calibrate "${files[@]}" --nccl "$lib" "${opts[@]}" --table "$out/one.md" \
      >>"$out/replay-console.log" 2>&1
    rc=$?
    echo "   exit $rc after $(($(date +%s) - t0)) s"
    { echo -e "\n### $path ${opts[*]:-} ($(basename "$lib"))\n"; cat "$out/one.md" 2>/dev/null || echo "(no table: exit $rc)"; } >>"$out/tables.md"
    rm -f "$out/one.md"
    [ $rc -eq 0 ] || status=1
  done
done
no_leftovers "every set" || status=1
echo "== done after $(($(date +%s) - start)) s, status $status"
exit $status
