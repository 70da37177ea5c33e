#!/usr/bin/env bash
# The style check CI runs: clang-format (the repository's .clang-format) over every C and C++ source,
# then clang-tidy (.clang-tidy) over every translation unit of the build's compile_commands.json.
# Usage: scripts/check-style.sh BUILD_DIR
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: scripts/check-style.sh BUILD_DIR}
git ls-files -z '*.cpp' '*.h' '*.c' '*.cc' '*.hpp' | xargs -0 clang-format --dry-run -Werror
echo "clang-format: clean"
scripts/check-traces-rooms.sh
# The project's own translation units in compile_commands.json (not the generated ones, not fuzz/).
# GCC-only warning flags in compile_commands.json (tests/CMakeLists.txt) are unknown to clang.
run-clang-tidy -p "$build" -quiet -j"$(nproc)" -extra-arg=-Wno-unknown-warning-option \
  "^$PWD/(model|checker|report|gen|replay|traces|shrink|watch|cli|bench|tests)/.*\.(cpp|c)\$" >"$build/clang-tidy.log" 2>&1 ||
  {
    grep -E "(error|warning):" "$build/clang-tidy.log" | sort -u
    echo "clang-tidy: FAILED (whole log: $build/clang-tidy.log)"
    exit 1
  }
echo "clang-tidy: clean"
