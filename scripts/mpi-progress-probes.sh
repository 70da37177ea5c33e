#!/usr/bin/env bash
# Measures which `mpi_progress` an MPI library behaves as (docs/SEMANTICS_NOTES.md, "MPI progress"):
# tests/mpi-progress/progress_probe.c over each transport, collective, rank count and message size.
# Prints one line per run: completed (the late ranks finished without the early ones re-entering MPI)
# or HANG (they needed them: weak progress).
# Usage: scripts/mpi-progress-probes.sh [TRANSPORT...]   (Open MPI btl lists; default: vader,self tcp,self)
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mpicc -O1 -o "$work/probe" "$src/tests/mpi-progress/progress_probe.c" || exit 2
transports=("$@")
[ ${#transports[@]} -eq 0 ] && transports=("vader,self" "tcp,self")
mpirun --version | head -1
root=()
[ "$(id -u)" = 0 ] && root=(--allow-run-as-root)
for btl in "${transports[@]}"; do
  for mode in bcast reduce ibcast; do
    for np in 2 4; do
      for bytes in 16 65536 4194304; do
        rm -rf "$work/d" && mkdir "$work/d"
        result=$(timeout 30 mpirun "${root[@]}" --oversubscribe -np $np --mca btl "$btl" "$work/probe" $mode $bytes \
          "$work/d" 2>&1 | grep -o "completed\|HANG" | head -1)
        echo "btl=$btl $mode np=$np bytes=$bytes: ${result:-no result}"
      done
    done
  done
done
