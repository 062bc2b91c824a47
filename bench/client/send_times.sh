#!/usr/bin/env bash
# Send times of an open loop (docs/performance.md, "Client: send times of an open loop").
# Two measurements, each against `llmbench serve` in its own process:
#   trace: the first 10 minutes of the Azure LLM inference conversation trace at 10x against
#          `serve --tokenizer` (2,867 requests, 60 s), then the host's own wake-up floor on the
#          same schedule (`client_bench sleepfloor`: one thread, clock_nanosleep to each planned
#          time, nothing sent);
#   rate:  a Poisson schedule of RATE req/s for N requests (128 in / 16 out, fixed timing).
# Each prints n, p50/p90/p99/max of (sent - planned) in ms and how many are within 1 ms; rate
# also the client's CPU (GNU time) and the request throughput. With OTHER set to a second
# llmbench binary, every measurement is made with both, in alternation, so both see the same
# host. Everything listens on 127.0.0.1; the servers started here are stopped on exit.
#
#   bench/client/send_times.sh [BUILD_DIR] [DATA_DIR]
#       BUILD_DIR: where `llmbench` and bench/client/client_bench are built (default build/ci)
#       DATA_DIR: an unpacked ../shared/data (`../shared/data/unpack.sh DEST`; default
#       $LLMBENCH_DATA, else ../shared/data-unpacked next to the checkout)
# Environment: SECTIONS ["trace rate"], ROUNDS [1], SPEEDUP [10], DURATION_S [600],
#   RATE [2000], N [20000], LLMBENCH [BUILD_DIR/llmbench], OTHER [unset].
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build/ci}
DATA=${2:-${LLMBENCH_DATA:-$ROOT/../shared/data-unpacked}}
LLMBENCH=${LLMBENCH:-$BUILD/llmbench}
OTHER=${OTHER:-}
CB=$BUILD/bench/client/client_bench
SECTIONS=${SECTIONS:-"trace rate"}
ROUNDS=${ROUNDS:-1}
SPEEDUP=${SPEEDUP:-10}
DURATION_S=${DURATION_S:-600}
RATE=${RATE:-2000}
N=${N:-20000}
TRACE=$DATA/traces/azure_llm_2023/AzureLLMInferenceTrace_conv.csv
TOK=$DATA/tokenizers/deepseek-v3
for f in "$LLMBENCH" "$CB" ${OTHER:+"$OTHER"}; do
  [[ -x $f ]] || { echo "missing $f: build targets llmbench and client_bench in $BUILD" >&2; exit 2; }
done
[[ -x /usr/bin/time ]] || { echo "GNU time (/usr/bin/time, Debian 'time') is required" >&2; exit 2; }
binaries=("$LLMBENCH")
[[ -n $OTHER ]] && binaries+=("$OTHER")

WORK=$(mktemp -d)
SERVER_PID=""
stop_server() {
  if [[ -n $SERVER_PID ]]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
  fi
}
trap 'stop_server; rm -rf "$WORK"' EXIT

start_server() {  # start_server ARGS...: `llmbench serve` on a free port of 127.0.0.1 -> $PORT
  rm -f "$WORK/port"
  "$LLMBENCH" serve --host 127.0.0.1 --port 0 --port-file "$WORK/port" "$@" >"$WORK/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  [[ -s $WORK/port ]] || { echo "serve did not start:" >&2; cat "$WORK/serve.log" >&2; exit 1; }
  PORT=$(cat "$WORK/port")
}

echo "host: $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
for section in $SECTIONS; do
  case $section in
    trace)
      for f in "$TRACE" "$TOK/tokenizer.json"; do
        [[ -f $f ]] || { echo "missing $f: unpack ../shared/data (unpack.sh DEST) and pass DEST" >&2; exit 2; }
      done
      # The server of the e2e test (tests/e2e/trace_replay_test.cpp): real prompt counts, short
      # fixed timing, so what is measured is the client's sends.
      start_server --tokenizer "$TOK" --timing fixed --ttft-ms 2 --itl-ms 0.02 --tokens-per-chunk 16
      echo "trace: $(basename "$TRACE"), first ${DURATION_S} s at ${SPEEDUP}x"
      for r in $(seq "$ROUNDS"); do
        for i in "${!binaries[@]}"; do
          b=${binaries[$i]}
          out=$WORK/trace$r-$i
          timeout $((DURATION_S / SPEEDUP + 300)) "$b" run --base-url "http://127.0.0.1:$PORT" \
            --backend vllm --tokenizer "$TOK" --dataset-name trace --dataset-path "$TRACE" \
            --trace-duration-s "$DURATION_S" --trace-speedup "$SPEEDUP" --quiet --save-result \
            --result-dir "$out" --result-filename run.json >"$out.log" 2>&1 ||
            { echo "run failed ($b):" >&2; tail -20 "$out.log" >&2; exit 1; }
          echo "  round $r $b: $("$CB" lateness "$out/run.records.jsonl")"
        done
        echo "  round $r sleepfloor: $("$CB" sleepfloor "$out/run.records.jsonl")"
      done
      stop_server
      ;;
    rate)
      start_server --timing fixed --ttft-ms 5 --itl-ms 2
      echo "rate: ${RATE} req/s Poisson, ${N} requests, 128 in / 16 out"
      for r in $(seq "$ROUNDS"); do
        for i in "${!binaries[@]}"; do
          b=${binaries[$i]}
          out=$WORK/rate$r-$i
          /usr/bin/time -o "$out.time" -f "%U %S" timeout 600 "$b" run \
            --base-url "http://127.0.0.1:$PORT" --backend vllm --dataset-name random \
            --random-input-len 128 --random-output-len 16 --num-prompts "$N" \
            --request-rate "$RATE" --quiet --save-result --result-dir "$out" \
            --result-filename run.json >"$out.log" 2>&1 ||
            { echo "run failed ($b):" >&2; tail -20 "$out.log" >&2; exit 1; }
          read -r user sys <"$out.time"
          rps=$(sed -n 's/.*"request_throughput": *\([0-9.]*\).*/\1/p' "$out/run.json" | head -1)
          conns=$(sed -n 's/.*"connections_opened": *\([0-9]*\).*/\1/p' "$out/run.json" | head -1)
          echo "  round $r $b: $("$CB" lateness "$out/run.records.jsonl") cpu_s=$(awk "BEGIN { print $user + $sys }") req_per_s=$rps connections=$conns time_wait_after=$(ss -tanH state time-wait 2>/dev/null | wc -l)"
        done
      done
      stop_server
      ;;
    *) echo "unknown section $section (trace, rate)" >&2; exit 2 ;;
  esac
done
