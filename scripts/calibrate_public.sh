#!/usr/bin/env bash
# calibrate_public.sh — refits the calibration files of data/sim/calibrations/ from the public
# points in tests/data/calibration/inferencex_dsr1_fp8.csv (docs/simulator.md "Calibration against
# public runs"). Two protocols per configuration:
#   isl-<sweep>: fit on one ISL/OSL sweep (every concurrency), predict the other sweeps;
#   conc:        fit on concurrency 4, 16 and 64 (every sweep), predict 8 and 32.
# The held-out points are never fitted on (--holdout). Usage: scripts/calibrate_public.sh [LLMBENCH]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bin="${1:-build/ci/llmbench}"
csv=tests/data/calibration/inferencex_dsr1_fp8.csv
out=data/sim/calibrations
mkdir -p "$out"

# Server flags of each configuration (tests/data/calibration/README.md).
h200="--engine sglang --gpu h200 --tp 8 --max-num-seqs 256 --max-num-batched-tokens 32768
      --max-prefill-tokens 32768 --stream-interval 10 --no-enable-prefix-caching
      --gpu-memory-utilization 0.82"
amd() { echo "--engine sglang --gpu $1 --tp 8 --max-num-batched-tokens 131072
      --max-prefill-tokens 131072 --num-continuous-decode-steps 4 --kv-cache-dtype fp8
      --no-enable-prefix-caching --gpu-memory-utilization 0.8"; }

fit() {  # fit CONFIG VERSION NAME "ENGINE FLAGS" HOLDOUT...
  local config=$1 version=$2 name=$3 flags=$4
  shift 4
  local holdout=()
  for h in "$@"; do holdout+=(--holdout "$h"); done
  # shellcheck disable=SC2086
  "$bin" calibrate "$csv" --select "config=$config" $flags --engine-version "$version" \
    "${holdout[@]}" -o "$out/$config.$name.json" 2>&1 | grep -E "MAPE|identified|^[a-z_]+ +[0-9]" || true
}

for config in ix-h200-sglang-0.5.9 ix-mi300x-sglang-0.5.9 ix-mi325x-sglang-0.5.9; do
  case $config in
    ix-h200-*) flags=$h200 ;;
    ix-mi300x-*) flags=$(amd mi300x) ;;
    ix-mi325x-*) flags=$(amd mi325x) ;;
  esac
  version=0.5.9
  echo "== $config"
  fit "$config" "$version" isl-1k1k "$flags" "osl=8192" "isl=8192"
  fit "$config" "$version" isl-1k8k "$flags" "osl=1024"
  fit "$config" "$version" isl-8k1k "$flags" "isl=1024"
  fit "$config" "$version" conc "$flags" "concurrency=8,32"
done
echo "== ix-mi300x-sglang-0.5.12"
fit ix-mi300x-sglang-0.5.12 0.5.12 isl-1k1k "$(amd mi300x)" "isl=8192"
fit ix-mi300x-sglang-0.5.12 0.5.12 isl-8k1k "$(amd mi300x)" "isl=1024"
fit ix-mi300x-sglang-0.5.12 0.5.12 conc "$(amd mi300x)" "concurrency=8,32"
echo "== ix870-h200-sglang-0.5.7"
fit ix870-h200-sglang-0.5.7 0.5.7 conc "$h200" "concurrency=32"
