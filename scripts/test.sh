#!/usr/bin/env bash
# Builds collmc and runs every test: the normal build (warnings are errors) and its suite, the style
# check, a Release build from a clean folder installed to a prefix and run from elsewhere, then the
# suite under ASan + UBSan. Each step prints how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."
step() {
  local name=$1 start=$SECONDS
  shift
  echo "== $name"
  "$@"
  echo "== $name: $((SECONDS - start)) s"
}
step "build" scripts/setup.sh build -DCOLLMC_WERROR=ON
step "ctest" bash -c 'cd build && ctest --output-on-failure -j"$(nproc)"'
step "style (clang-format, clang-tidy)" scripts/check-style.sh build
# Release as a user builds it (warnings are not errors there: a user's newer compiler may warn).
rm -rf build-release
step "Release build" scripts/setup.sh build-release -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DCOLLMC_BENCH=OFF
step "install and run elsewhere" scripts/check-install.sh build-release
step "ASan build" scripts/setup.sh build-asan -DCOLLMC_SANITIZE=ON -DCOLLMC_BENCH=OFF -DCOLLMC_WERROR=ON
step "ASan ctest" bash -c 'cd build-asan && ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$PWD/../scripts/lsan.supp UBSAN_OPTIONS=print_stacktrace=1 ctest --output-on-failure -j"$(nproc)"'
