#!/usr/bin/env bash
# Simulator speed (issue 4 target: ≥ 10,000x real time for DeepSeek-V3 TP8 H200 at 256
# concurrent sequences). Usage: bench/sim/run.sh [BUILD_DIR] [extra sim_speed_bench flags]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/bench}"
shift || true
cmake --build "$build" --target sim_speed_bench -j2 >/dev/null
bin="$build/bench/sim/sim_speed_bench"
"$bin" --mode engine --requests 2000 --in 1024 --out 256 --concurrency 256 "$@"
"$bin" --mode core --requests 2000 --in 1024 --out 256 --concurrency 256 "$@"
