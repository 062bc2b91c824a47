#!/usr/bin/env bash
# sanitize.sh — build unit-test binaries (tests/unit/<module>; not the end-to-end tests,
# benchmarks or fuzz targets) with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# (CMake preset "asan": -O1 with line tables, -fsanitize=address,undefined
# -fno-sanitize-recover=undefined, build/asan) and run them once with ctest (label "unit").
#
#   scripts/sanitize.sh [NAME...]     # the NAME_test binaries (default: the CI set below)
#   scripts/sanitize.sh all           # every unit-test binary
#
# The CI set is the code that takes bytes from the network or disk and the numbers made of them:
# core, the SSE parser, the HTTP client and listener, the protocol decoders, the metrics with the
# record reader and writer, and the load generator's request handler; and the application floor
# (app, and cli's points of one session: `sweep --tokenizer` against the built-in server, chat
# and completions), where a plan once pointed into a value it did not own. The other parsers are
# fuzzed under the same sanitizers (docs/reliability.md, "Sanitizers over the unit tests"); the
# libraries are built once, in build/asan, for both (the preset sets LLMBENCH_FUZZ=ON, so
# scripts/fuzz.sh links its targets against the same objects).
#
# Any ASan report (including a leak: LeakSanitizer is on by default on Linux) or UBSan
# "runtime error" aborts the test binary, so its tests fail and the script exits non-zero.
# docs/reliability.md ("Sanitizers over the unit tests") has the modules, times and findings.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v clang++ >/dev/null; then
  echo "sanitize: clang++ not found (Debian: apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
fi

jobs=${SANITIZE_BUILD_JOBS:-$(nproc)}
TIMEFORMAT="sanitize: %R s wall, %U s user + %S s system CPU"
cmake --preset asan \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(core sse http protocol metrics loadgen app cli)
targets=("${names[@]/%/_test}")
if [ "${names[*]}" = all ]; then
  # Every test binary but the end-to-end one (which runs the llmbench binary, not built here).
  mapfile -t targets < <(ninja -C build/asan -t targets all |
    sed -n 's/^\([a-z_]*_test\): .*/\1/p' | grep -v -e '^cmake_' -e '^e2e_test$' | sort -u)
fi
echo "sanitize: building ${targets[*]} in build/asan"
time cmake --build build/asan -j"$jobs" --target "${targets[@]}"

# As scripts/test.sh: where ../shared/data is there, a test that needs it fails instead of skipping.
if [ -d ../shared/data ]; then
  export LLMBENCH_REQUIRE_SHARED_DATA=1
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
echo "sanitize: running the unit tests of ${targets[*]} under ASan and UBSan"
# Binaries not built (a subset was named) leave *_NOT_BUILT placeholders: not run.
time ctest --test-dir build/asan -L unit -E _NOT_BUILT -j"$(nproc)" --output-on-failure
