#!/usr/bin/env bash
# mpicc with the program's own loads and stores recorded (docs/TRACES.md, "Loads and stores"): clang's
# SanitizerCoverage calls __sanitizer_cov_loadN/storeN before every load and store of the compiled code, and the
# program is linked with the MPI recorder, which defines them (outside `collmc record` it records nothing and
# passes every MPI call through). The sanitizer runtime is not linked: its weak definitions in the program would
# win over the recorder's. Open MPI's wrapper takes the compiler from OMPI_CC, MPICH's from MPICH_CC.
# Usage: scripts/mpicc-loads-stores.sh RECORDER_DIR MPICC_ARGS...   (RECORDER_DIR holds libcollmc_record_mpi.so)
set -euo pipefail
dir=$(readlink -f "${1:?the directory of libcollmc_record_mpi.so}")
shift
[ -e "$dir/libcollmc_record_mpi.so" ] || { echo "mpicc-loads-stores: no libcollmc_record_mpi.so in $dir" >&2; exit 2; }
command -v clang >/dev/null || { echo "mpicc-loads-stores: clang not found (the coverage callbacks need it)" >&2; exit 2; }
export OMPI_CC=clang MPICH_CC=clang
exec mpicc -fsanitize-coverage=edge,trace-loads,trace-stores -fno-sanitize-link-runtime "$@" \
  -L"$dir" -lcollmc_record_mpi -Wl,-rpath,"$dir"
