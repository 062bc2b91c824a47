#!/usr/bin/env bash
# test.sh — install dependencies if missing, build every target with warnings as errors (preset
# "ci"), check formatting, and run the whole test suite (unit, end-to-end) with ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --deps-only

# Formatting is part of the contract (.clang-format, version 14).
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find src apps tests bench -name '*.[ch]pp')
clang-format --dry-run --Werror $files

cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"
ctest --preset ci -j "$(nproc)"
