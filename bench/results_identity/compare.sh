#!/usr/bin/env bash
# Results-JSON identity of two llmbench binaries (docs/performance.md, "Results identity"): runs
# both on three fixed-seed workloads, in `run` (the built-in server, fixed timing) and in
# `simulate`, and compares the results documents with compare.py. Everything listens on
# 127.0.0.1 (the built-in server of `run`); every run is bounded (40 requests, or 30 s of a
# trace at 30x).
#
#   bench/results_identity/compare.sh BEFORE_BINARY AFTER_BINARY [OUT_DIR]
#
# e.g. bench/results_identity/compare.sh /work/baseline/llmbench-a6f64a7 build/ci/llmbench
#
# The workloads: closed (random prompts, --max-concurrency 4), open_cap (random prompts at
# --request-rate 50 with --max-concurrency 4), trace_cap (the Mooncake conversation excerpt of
# tests/data/traces, replayed at its own times, --max-concurrency 2). Each binary runs in its own
# folder with the same relative --result-dir, so the requested configuration is the same text.
# Exits 1 when a document differs outside the rules compare.py states.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BEFORE=$(realpath "${1:?usage: compare.sh BEFORE AFTER [OUT_DIR]}")
AFTER=$(realpath "${2:?usage: compare.sh BEFORE AFTER [OUT_DIR]}")
OUT=${3:-$(mktemp -d /tmp/llmbench-identity.XXXXXX)}
mkdir -p "$OUT/before" "$OUT/after"
TRACE=$ROOT/tests/data/traces/mooncake_conversation_600s_le3000.jsonl

declare -A WORKLOADS=(
  [closed]="--dataset-name random --random-input-len 64 --random-output-len 16 --num-prompts 40 --max-concurrency 4 --seed 7"
  [open_cap]="--dataset-name random --random-input-len 64 --random-output-len 16 --num-prompts 40 --request-rate 50 --max-concurrency 4 --seed 7"
  [trace_cap]="--dataset-name trace --dataset-path $TRACE --trace-duration-s 30 --trace-speedup 30 --output-len 8 --max-concurrency 2 --seed 7"
)
RUN_ARGS="--server-timing fixed --server-ttft-ms 2 --server-itl-ms 1 --client-threads 1 --quiet"

status=0
for side in before after; do
  bin=$BEFORE
  [[ $side == after ]] && bin=$AFTER
  for w in closed open_cap trace_cap; do
    # shellcheck disable=SC2086 # the workload strings are flag lists
    (cd "$OUT/$side" &&
      timeout 120 "$bin" run ${WORKLOADS[$w]} $RUN_ARGS --save-result --result-dir out \
        --result-filename "run-$w.json" >"run-$w.log" 2>&1 &&
      timeout 120 "$bin" simulate ${WORKLOADS[$w]} --save-result --result-dir out \
        --result-filename "simulate-$w.json" >"simulate-$w.log" 2>&1) ||
      { echo "compare: $side $w failed (logs in $OUT/$side)" >&2; status=1; }
  done
done
[[ $status == 0 ]] || exit 1
python3 "$ROOT/bench/results_identity/compare.py" "$OUT/before/out" "$OUT/after/out"
