#!/usr/bin/env bash
# Load test of `llmbench serve` (fixed timing and one worker thread unless TIMING or
# SERVER_THREADS say otherwise) pinned to SERVER_CPU, with the load generator
# (server_stream_bench) pinned to CLIENT_CPU. Prints one line per configuration: tokens/s
# delivered, server and client CPU, lateness of the response ends, streams held.
#
#   bench/server/run.sh BUILD_DIR
#   knobs: CONFIGS="streams:itl_ms ..." TOKENS=200 SECONDS=10 SERVER_CPU=0 CLIENT_CPU=1
#          CLIENT_THREADS=1 (CLIENT_CPU may then be a list, e.g. 4-6)
#          SERVER_THREADS=1: `serve --threads` (give SERVER_CPU as many CPUs, e.g. 2,3)
#          RAMP=0: seconds over which the streams' first requests are spread (0 = all at once)
#          LLMBENCH=/path/to/other/llmbench (e.g. an older build, for before/after)
#          FLOOR=1: before each configuration, the kernel's floor for the same streams and ITL
#            (server_loopback_floor send: one send per token in lock-step, nothing else) on the
#            same CPUs, for the ratio of serve's CPU per token to the floor's
#          TIMING=engine: `serve --timing engine $ENGINE_ARGS` instead of fixed timing (the ITL of a
#            configuration is then the engine's; its "itl" field only sets the client's expected
#            request time, so give it as 0 and read the engine's step lateness printed from
#            /metrics instead). Default ENGINE_ARGS: R1-Distill-Qwen-1.5B on one H200 with
#            max_num_seqs 10000 (about 75 k tokens/s at 10,000 streams).
#
# On loopback the server's send runs the client's TCP receive path and socket wake-up in
# softirq on the SERVER's core (about 45% of the server's CPU at 10,000 streams, Linux 6.x), so
# "tokens per CPU-second" is a pessimistic figure for a server whose clients are elsewhere.
set -euo pipefail
BUILD=${1:?usage: bench/server/run.sh BUILD_DIR}
LLMBENCH=${LLMBENCH:-$BUILD/llmbench}
BENCH=${BENCH:-$BUILD/bench/server/server_stream_bench}
FLOOR_BENCH=${FLOOR_BENCH:-$BUILD/bench/server/server_loopback_floor}
CONFIGS=${CONFIGS:-"2000:20 2000:10 5000:20 10000:50 10000:20"}
TOKENS=${TOKENS:-200}
SECONDS_=${SECONDS:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CLIENT_THREADS=${CLIENT_THREADS:-1}
SERVER_THREADS=${SERVER_THREADS:-1}
ulimit -n "$(ulimit -Hn)"
TMP=$(mktemp -d)
SERVER_PID=
cleanup() {
  [[ -n $SERVER_PID ]] && kill -INT "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
MODE=${TIMING:-fixed}
ENGINE_ARGS=${ENGINE_ARGS:-"--model-profile deepseek-r1-distill-qwen-1.5b --gpu h200 --tp 1 --max-num-seqs 10000 --max-num-batched-tokens 16384"}
TIMING=()
"$LLMBENCH" serve --help | grep -q -- '--timing' && TIMING=(--timing "$MODE")
# GET /metrics over bash's /dev/tcp (no curl needed): prints the body's non-comment lines.
metrics() {
  exec 3<>"/dev/tcp/127.0.0.1/$1"
  printf 'GET /metrics HTTP/1.0\r\nHost: x\r\n\r\n' >&3
  grep -v '^#' <&3 | tr -d '\r'
  exec 3<&-
}

for config in $CONFIGS; do
  streams=${config%%:*}
  itl=${config##*:}
  rm -f "$TMP/port"
  if [[ ${FLOOR:-0} == 1 && $MODE != engine ]]; then
    echo "== kernel floor: streams=$streams step_ms=$itl seconds=$SECONDS_"
    "$FLOOR_BENCH" send "$streams" "$itl" "$SECONDS_" "${SERVER_CPU%%[,-]*}" "${CLIENT_CPU%%[,-]*}" |
      sed 's/^/   /'
  fi
  if [[ $MODE == engine ]]; then
    # shellcheck disable=SC2086 # ENGINE_ARGS is a list of flags
    SERVE_ARGS=($ENGINE_ARGS)
  else
    SERVE_ARGS=(--ttft-ms 0 --itl-ms "$itl" --tokens-per-chunk 1 --max-num-seqs 100000)
  fi
  taskset -c "$SERVER_CPU" "$LLMBENCH" serve "${TIMING[@]}" --threads "$SERVER_THREADS" "${SERVE_ARGS[@]}" \
    --port 0 --port-file "$TMP/port" >"$TMP/serve.log" 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 100); do [[ -s $TMP/port ]] && break; sleep 0.1; done
  port=$(cat "$TMP/port")
  echo "== streams=$streams itl_ms=$itl tokens/request=$TOKENS seconds=$SECONDS_"
  # Streams held: established server-side connections, sampled halfway through the run.
  # (/proc/net/tcp: local address ends in the port in hex, state 01 = ESTABLISHED.)
  (sleep "$((SECONDS_ / 2))"
   awk -v p=":$(printf '%04X' "$port")" '$2 ~ p"$" && $4 == "01"' /proc/net/tcp /proc/net/tcp6 |
     wc -l >"$TMP/held") &
  held_pid=$!
  taskset -c "$CLIENT_CPU" "$BENCH" "$streams" "$TOKENS" "$itl" "$SECONDS_" "$CLIENT_THREADS" "$port" \
    "$SERVER_PID" "${RAMP:-0}" | sed 's/^/   /'
  wait "$held_pid" || true
  echo "   streams held (established server connections at half time): $(cat "$TMP/held")"
  if [[ $MODE == engine ]]; then
    metrics "$port" >"$TMP/metrics" || true
    awk '/^llmbench:engine_steps_total/ {s=$2} /^llmbench:engine_late_steps_total/ {l=$2}
         /^vllm:generation_tokens_total/ {g=$2}
         /^llmbench:engine_step_lateness_seconds_bucket/ {
           match($0, /le="[^"]*"/); le=substr($0, RSTART+4, RLENGTH-5); b[++n]=le; c[n]=$2 }
         END {
           printf "   engine: %d steps, %d applied > 5 ms late, %d tokens generated\n", s, l, g
           printf "   step lateness (cumulative share of steps):"
           for (i = 1; i <= n; i++) if (s > 0) printf " <=%ss %.1f%%", b[i], 100 * c[i] / s
           printf "\n" }' "$TMP/metrics"
  else
    echo "   demanded: $((streams * 1000 / itl)) tokens/s (streams / itl)"
  fi
  kill -INT "$SERVER_PID"
  wait "$SERVER_PID" || true
  SERVER_PID=
done
