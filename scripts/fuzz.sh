#!/usr/bin/env bash
# fuzz.sh — build the libFuzzer targets of tests/fuzz with clang, ASan and UBSan in build/asan,
# then run each one for a bounded time on its seed corpus (tests/fuzz/corpus/<target>/).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 60; TARGET names a subset (e.g. sse_parser dataset). One target
# runs at a time, in one process (libFuzzer's default; -jobs=N would fork and log to fuzz-N.log).
# New inputs that raise coverage go to build/asan/corpus/<target>/ (the committed seeds are never
# modified); a crash leaves its input as build/asan/artifacts/<target>/crash-* and makes the
# script exit non-zero. An AddressSanitizer report or UBSan "runtime error" is a crash.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${1:-60}
shift || true
all_targets=(sse_parser protocol_decoder record_reader tokenizer_json dataset server_request)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")

if ! command -v clang++ >/dev/null; then
  echo "fuzz: clang++ not found (Debian: apt-get install -y clang libclang-rt-14-dev)" >&2
  exit 2
fi

# The targets are built in build/asan (CMake preset "asan", which sets LLMBENCH_FUZZ=ON): the
# libraries are compiled once, with ASan, UBSan and the fuzzer's coverage, for these targets and
# for the unit tests of scripts/sanitize.sh, instead of twice.
build=build/asan
cmake --preset asan \
  ${CMAKE_CXX_COMPILER_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CMAKE_CXX_COMPILER_LAUNCHER} >/dev/null
cmake --build "$build" -j"${FUZZ_BUILD_JOBS:-2}" --target "${targets[@]/%/_fuzz}"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t"
  artifacts="$build/artifacts/$t"
  mkdir -p "$corpus" "$artifacts"
  echo "fuzz: $t for ${seconds}s"
  # -rss_limit_mb and -malloc_limit_mb turn an unbounded allocation into a finding instead of
  # the machine's out-of-memory killer; -max_len keeps inputs in the size of real messages.
  TIMEFORMAT="fuzz: $t used %U s user + %S s system CPU in %R s"
  if ! time "$build/tests/fuzz/${t}_fuzz" -max_total_time="$seconds" \
      -rss_limit_mb=2048 -malloc_limit_mb=1024 -max_len=65536 -timeout=10 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$corpus" "tests/fuzz/corpus/$t" \
      >"$build/$t.log" 2>&1; then
    echo "fuzz: $t FAILED (log: $build/$t.log, inputs: $artifacts/)" >&2
    tail -40 "$build/$t.log" >&2
    status=1
  fi
  grep -E "^(#[0-9]+.*(DONE|pulse)|stat::number_of_executed_units|stat::peak_rss_mb)" \
    "$build/$t.log" | tail -3 || true
done
exit $status
