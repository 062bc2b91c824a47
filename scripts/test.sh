#!/usr/bin/env bash
# test.sh — install dependencies if missing, build every target with warnings as errors (preset
# "ci"), check formatting, and run the whole test suite (unit, end-to-end, differential) with ctest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scripts/setup.sh --deps-only

# Formatting is part of the contract (.clang-format, version 14).
files=$(git ls-files '*.cpp' '*.hpp' 2>/dev/null || find src apps tests bench -name '*.[ch]pp')
clang-format --dry-run --Werror $files

# Each module includes only the modules it may use (docs/architecture.md, "Modules").
scripts/check_includes.sh

# Reference for the differential tests (tests/differential): node + the pinned npm `tokenizers`
# and `@huggingface/jinja` (package.json and its lock), installed once into build/npm-ref.
# Without them those tests are skipped, not failed.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "test: installing nodejs npm (tokenizer differential test)"
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nodejs npm; } ||
    echo "test: WARNING: could not install nodejs/npm; the differential test will be skipped" >&2
fi
# Headless Chromium for the HTML report's browser test (tests/browser; docs/report.md).
if ! command -v chromium >/dev/null; then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "test: installing chromium (the HTML report's browser test)"
  { $sudo apt-get update -qq &&
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium; } ||
    echo "test: WARNING: could not install chromium; the browser test will fail where the shared data is" >&2
fi
ref_version=$(sed -n 's/.*"tokenizers": *"\([^"]*\)".*/\1/p' tests/differential/package.json)
jinja_version=$(sed -n 's/.*"@huggingface\/jinja": *"\([^"]*\)".*/\1/p' tests/differential/package.json)
if command -v npm >/dev/null &&
  { ! grep -qs "\"version\": \"$ref_version\"" build/npm-ref/node_modules/tokenizers/package.json ||
    ! grep -qs "\"version\": \"$jinja_version\"" build/npm-ref/node_modules/@huggingface/jinja/package.json; }; then
  mkdir -p build/npm-ref
  cp tests/differential/package.json tests/differential/package-lock.json build/npm-ref/
  (cd build/npm-ref && npm ci --no-audit --no-fund --loglevel=error) ||
    echo "test: WARNING: npm ci (tokenizers@$ref_version, @huggingface/jinja@$jinja_version) failed; the differential tests will be skipped" >&2
fi

# Where ../shared/data is there (CI), a test that needs it fails instead of skipping
# (tests/support/shared_data.hpp, tests/differential/run.sh).
if [ -d ../shared/data ]; then
  export LLMBENCH_REQUIRE_SHARED_DATA=1
fi

cmake --preset ci >/dev/null
cmake --build --preset ci -j "$(nproc)"

# clang-tidy on the sources changed since .ci/tidy-base (scripts/tidy.sh; the checks in .clang-tidy).
scripts/tidy.sh
ctest --preset ci -j "$(nproc)"
