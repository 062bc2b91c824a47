#!/usr/bin/env bash
# Sweep speed (target: a `--simulate` sweep of 10 points x 1,000 requests in about a
# second). Runs `llmbench sweep --simulate` over max-concurrency 1..512 (10 points, x2) with 1,000
# random requests (1024 in, 128 out, simulate's defaults) per point, every point writing its
# results JSON and records file as a sweep does, REPEAT times (default 5) in fresh processes, and
# prints each wall time and the median. Usage: bench/sweep/run.sh [BUILD_DIR] [extra sweep flags]
# Wall-clock times depend on the machine's load (printed with `uptime`).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/ci}"
shift || true
cmake --build "$build" --target llmbench -j2 >/dev/null
bin="$build/llmbench"
out="$(mktemp -d)"
trap 'rm -rf "$out"' EXIT
uptime
times=()
for i in $(seq "${REPEAT:-5}"); do
  start=$(date +%s.%N)
  "$bin" sweep --simulate --sweep max-concurrency=1:512:x2 --num-prompts 1000 \
    --result-dir "$out/$i" "$@" >/dev/null 2>&1
  end=$(date +%s.%N)
  t=$(echo "$end - $start" | bc -l)
  times+=("$t")
  printf 'run %d: %.3f s (%d points)\n' "$i" "$t" \
    "$(($(wc -l <"$out/$i"/*.sweep.csv) - 1))"
done
printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median: %.3f s\n", a[int((NR+1)/2)]}'
