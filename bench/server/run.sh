#!/usr/bin/env bash
# Load test of `llmbench serve` (fixed timing, one worker thread) pinned to one CPU, with the
# load generator (server_stream_bench) pinned to another. Prints one line per configuration:
# tokens/s delivered, server and client CPU, lateness of the response ends, streams held.
#
#   bench/server/run.sh BUILD_DIR
#   knobs: CONFIGS="streams:itl_ms ..." TOKENS=200 SECONDS=10 SERVER_CPU=0 CLIENT_CPU=1
#          CLIENT_THREADS=1 (CLIENT_CPU may then be a list, e.g. 4-6)
#          CLIENT_POLL=1: client threads busy-poll (see stream_bench.cpp: no wake-up IPIs
#          charged to the server core)
#          LLMBENCH=/path/to/other/llmbench (e.g. an older build, for before/after)
#          RPS=1 (root): steer loopback receive processing to the client's CPUs for the run.
#
# Why RPS: on loopback the sender's system call runs the receiver's TCP input, socket wake-up
# and ACK path in softirq on the SENDER's core, so without it the server core also pays the
# client's kernel receive work (about 45% of the server core at 10,000 streams on Linux 6.x). A
# client on another machine pays that on its own CPUs; RPS (`/sys/class/net/lo/queues/rx-0/
# rps_cpus`) moves it to the client's CPUs, which is what "the server on one core" means. The
# setting is restored on exit; report runs with and without it side by side.
set -euo pipefail
BUILD=${1:?usage: bench/server/run.sh BUILD_DIR}
LLMBENCH=${LLMBENCH:-$BUILD/llmbench}
BENCH=${BENCH:-$BUILD/bench/server/server_stream_bench}
CONFIGS=${CONFIGS:-"2000:20 2000:10 5000:20 10000:50 10000:20"}
TOKENS=${TOKENS:-200}
SECONDS_=${SECONDS:-10}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CLIENT_THREADS=${CLIENT_THREADS:-1}
CLIENT_MODE=wait
[[ ${CLIENT_POLL:-0} == 1 ]] && CLIENT_MODE=poll
RPS=${RPS:-0}
RPS_FILE=/sys/class/net/lo/queues/rx-0/rps_cpus
ulimit -n "$(ulimit -Hn)"
TMP=$(mktemp -d)
SERVER_PID=
RPS_SAVED=
cleanup() {
  [[ -n $SERVER_PID ]] && kill -INT "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null
  [[ -n $RPS_SAVED ]] && echo "$RPS_SAVED" >"$RPS_FILE"
  rm -rf "$TMP"
}
trap cleanup EXIT
if [[ $RPS == 1 ]]; then
  # Hex CPU mask of CLIENT_CPU (a list such as 4-6,8), which must not hold SERVER_CPU.
  mask=$(python3 -c 'import sys
cpus = set()
for part in sys.argv[1].split(","):
    lo, _, hi = part.partition("-")
    cpus.update(range(int(lo), int(hi or lo) + 1))
if int(sys.argv[2]) in cpus:
    sys.exit("RPS=1: CLIENT_CPU must not include SERVER_CPU")
print(format(sum(1 << c for c in cpus), "x"))' "$CLIENT_CPU" "$SERVER_CPU")
  RPS_SAVED=$(cat "$RPS_FILE")
  echo "$mask" >"$RPS_FILE"
  echo "== RPS: loopback receive processing on CPUs $CLIENT_CPU (rps_cpus $mask, was $RPS_SAVED)"
fi
TIMING=()
"$LLMBENCH" serve --help | grep -q -- '--timing' && TIMING=(--timing fixed)

for config in $CONFIGS; do
  streams=${config%%:*}
  itl=${config##*:}
  rm -f "$TMP/port"
  taskset -c "$SERVER_CPU" "$LLMBENCH" serve "${TIMING[@]}" --threads 1 --ttft-ms 0 \
    --itl-ms "$itl" --tokens-per-chunk 1 --max-num-seqs 100000 --port 0 \
    --port-file "$TMP/port" >"$TMP/serve.log" 2>&1 &
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
    "$SERVER_PID" "$CLIENT_MODE" | sed 's/^/   /'
  wait "$held_pid" || true
  echo "   streams held (established server connections at half time): $(cat "$TMP/held")"
  echo "   demanded: $((streams * 1000 / itl)) tokens/s (streams / itl)"
  kill -INT "$SERVER_PID"
  wait "$SERVER_PID" || true
  SERVER_PID=
done
