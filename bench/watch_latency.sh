#!/usr/bin/env bash
# The live watch's latency (docs/PERFORMANCE.md, "The live watch"): tests/mpi_programs/pair_cycle_computing.c
# under `collmc record --watch --on-hang abort` with NP ranks (ranks 0..3 close a four-rank cycle about
# 0.4 s in, the others compute for SECONDS), RUNS times each; prints the latency the watch reports (from
# the last cycle member's entry line, t_wall_ns, to the diagnosis printed), the checks it made and the
# whole run's time.
#   bench/watch_latency.sh build/cli/collmc "8 16 32 64" [SECONDS=20] [RUNS=3]
set -u
collmc=$1
sizes=${2:-"8 16 32 64"}
seconds=${3:-20}
runs=${4:-3}
src=$(cd "$(dirname "$0")/.." && pwd)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
work=$(mktemp -d /tmp/collmc-watch-latency.XXXXXX)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/pair_cycle" "$src/tests/mpi_programs/pair_cycle_computing.c" || exit 1
echo "np run latency_s run_s exit"
for np in $sizes; do
  for run in $(seq 1 "$runs"); do
    out=$work/np$np.$run
    start=$(date +%s.%N)
    "$collmc" record --out "$out" --watch --on-hang abort --time-limit $((seconds + 60)) -- \
      mpirun --bind-to none -np "$np" "$work/pair_cycle" "$seconds" >"$out.log" 2>&1
    rc=$?
    end=$(date +%s.%N)
    latency=$(sed -n 's/.*(named \([0-9.]*\) s after the last of them entered its call).*/\1/p' "$out.log")
    echo "$np $run ${latency:-none} $(awk -v s="$start" -v e="$end" 'BEGIN { printf "%.2f", e - s }') $rc"
  done
done
