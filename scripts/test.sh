#!/usr/bin/env bash
# Builds collmc and runs every test: the normal build, then the same suite under ASan + UBSan.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
(cd build && ctest --output-on-failure -j"$(nproc)")
scripts/setup.sh build-asan -DCOLLMC_SANITIZE=ON -DCOLLMC_BENCH=OFF
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$(nproc)")
