#!/usr/bin/env bash
# Simulator speed (target: ≥ 10,000x real time for DeepSeek-V3 TP8 H200 at 256
# concurrent sequences). Usage: bench/sim/run.sh [BUILD_DIR] [extra sim_speed_bench flags]
# Build BUILD_DIR with -DCMAKE_BUILD_TYPE=Release. Wall-clock ratios depend on the machine's
# load (print `uptime` with them); CALLGRIND=1 also prints the load-independent instruction
# count of `Simulation::run` per generated token (valgrind --tool=callgrind, one repeat).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/bench}"
shift || true
cmake --build "$build" --target sim_speed_bench -j2 >/dev/null
bin="$build/bench/sim/sim_speed_bench"
uptime
"$bin" --mode engine --requests 2000 --in 1024 --out 256 --concurrency 256 "$@"
"$bin" --mode pipeline --requests 2000 --in 1024 --out 256 --concurrency 256 "$@"
"$bin" --mode core --requests 2000 --in 1024 --out 256 --concurrency 256 "$@"
# A fresh process per run, as `llmbench simulate` does (first-touch page faults included), with
# the huge-page heap llmbench sets up at start (core/heap.hpp) and, side by side, without it.
for heap in 1 0; do
  echo "fresh processes, HUGE_PAGE_HEAP=$heap:"
  for _ in 1 2 3 4 5; do
    HUGE_PAGE_HEAP=$heap "$bin" --mode engine --requests 2000 --in 1024 --out 256 \
      --concurrency 256 --repeat 1 "$@" | tail -1
  done
done
if [[ "${CALLGRIND:-0}" == 1 ]]; then
  out="$(mktemp)"
  valgrind --tool=callgrind --callgrind-out-file="$out" \
    '--toggle-collect=llmbench::sim::Simulation::run*' \
    "$bin" --mode engine --requests 2000 --in 1024 --out 256 --concurrency 256 --repeat 1 "$@" \
    2>&1 | awk -v tokens=$((2000 * 256)) \
      '/Collected/ {printf "callgrind: %s instructions in Simulation::run, %.1f per generated token\n", $4, $4 / tokens}'
  rm -f "$out"
fi
