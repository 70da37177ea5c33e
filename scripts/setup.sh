#!/usr/bin/env bash
# Installs the Debian packages collmc needs (only those missing), then configures and builds.
# Usage: scripts/setup.sh [BUILD_DIR [extra cmake args...]]   (default BUILD_DIR: build)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake pkgconf libboost-program-options-dev libgtest-dev
          graphviz nlohmann-json3-dev chromium openmpi-bin libopenmpi-dev)
# Graphviz's library renders the wait-for graph to SVG (report/); clang-format and clang-tidy are the
# style check (scripts/check-style.sh).
packages+=(libgraphviz-dev clang-format clang-tidy)
# clang compiles MPI test programs with their loads and stores recorded (scripts/mpicc-loads-stores.sh).
packages+=(clang)
# LLVM's OpenMP runtime (libomp, with omp-tools.h): OpenMP test programs built with clang, and the MPI
# recorder's OMPT tool that records their threads' synchronization (traces/record/mpi/mpi_omp_tool.cpp).
packages+=(libomp-dev)
# absl's flat hash set and xxHash hold the checker's visited set.
packages+=(libabsl-dev libxxhash-dev)
# simdjson (On-Demand) parses Flight Recorder JSON dumps at import.
packages+=(libsimdjson-dev)
# The Python package's tests (python/tests, issue 34): real torch.distributed programs on gloo (Debian's
# torch 1.13, CPU) and the pytest plugin (pytest is not part of Debian's python3).
packages+=(python3-torch python3-pytest)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}" >/dev/null
fi

build_dir="${1:-build}"
shift || true
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build_dir" -j"$(nproc)"
