#!/usr/bin/env bash
# Client-side benchmark of `llmbench run` (docs/performance.md, "Client: SSE parsing and
# timestamping"). Everything listens on 127.0.0.1 only, every run is bounded, and every server
# this script starts is stopped on exit.
#
#   bench/client/run.sh [BUILD_DIR]            (default build/h-bench; needs targets llmbench and
#                                               client_bench built with -DCMAKE_BUILD_TYPE=Release)
#
# Environment knobs (defaults in brackets):
#   EVENTS [20000]   text chunks per static stream        PROMPTS [50]   requests per static run
#   REPS [3]         repetitions of each throughput run   MEM_CS ["1000 4000"] open streams for memory
#   SECTIONS ["micro static builtin memory wrk"]          which parts to run
#   LLMBENCH [BUILD_DIR/llmbench]                          the binary under test (e.g. a patched one)
#   OTHER []         a second llmbench (e.g. an older build) for the static section: each row
#                    runs with LLMBENCH then OTHER in turn, and a "side by side" table of the
#                    medians and their ratios follows
# Needs: nginx (Debian `nginx` / `nginx-light`), jq, GNU time (/usr/bin/time), ss, wrk (optional).
# Missing Debian packages are installed with apt-get when running as root.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${1:-$ROOT/build/h-bench}
LLMBENCH=${LLMBENCH:-$BUILD/llmbench}
CB=$BUILD/bench/client/client_bench
EVENTS=${EVENTS:-20000}
PROMPTS=${PROMPTS:-50}
REPS=${REPS:-3}
MEM_CS=${MEM_CS:-"1000 4000"}
SECTIONS=${SECTIONS:-"micro static builtin memory wrk"}
OTHER=${OTHER:-}
for b in "$LLMBENCH" "$CB" ${OTHER:+"$OTHER"}; do
  [[ -x $b ]] || { echo "missing $b: build targets llmbench and client_bench in $BUILD" >&2; exit 2; }
done

need() {  # need CMD PACKAGE: install PACKAGE when CMD is missing
  command -v "$1" >/dev/null 2>&1 && return 0
  if [[ $(id -u) -eq 0 ]]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$2" >/dev/null
  fi
  command -v "$1" >/dev/null 2>&1
}
need nginx nginx-light || need nginx nginx || { echo "nginx is required" >&2; exit 2; }
need jq jq || { echo "jq is required" >&2; exit 2; }
[[ -x /usr/bin/time ]] || need /usr/bin/time time || { echo "GNU time is required" >&2; exit 2; }
have_wrk=1
need wrk wrk || have_wrk=0

ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

WORK=$(mktemp -d /tmp/llmbench-client-bench.XXXXXX)
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
log() { echo "== $*" >&2; }

free_port() {  # a port on 127.0.0.1 that nothing listens on
  local p
  for _ in $(seq 1 200); do
    p=$((20000 + RANDOM % 40000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

wait_port() {  # wait_port PORT: until something accepts on 127.0.0.1:PORT (10 s at most)
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
    sleep 0.1
  done
  echo "nothing listens on 127.0.0.1:$1" >&2
  return 1
}

json_num() {  # json_num FILE KEY: a top-level number from a results JSON
  jq -r ".$2" "$1"
}

# time_run OUT_PREFIX CMD...: runs CMD under GNU time; prints "user sys maxrss_kb".
time_run() {
  local out=$1; shift
  /usr/bin/time -f "%U %S %M" -o "$out.time" "$@" >"$out.stdout" 2>"$out.stderr" || {
    echo "command failed (see $out.stderr): $*" >&2; tail -5 "$out.stderr" >&2; return 1; }
  cat "$out.time"
}

# ---------------------------------------------------------------- in-process, no socket
if section micro; then
  log "micro: RecordingHandler (sse::Parser + protocol::Decoder + Chunk) without a socket"
  "$CB" handler "$EVENTS" 50 0 16384
  "$CB" handler "$EVENTS" 50 1 16384
  "$CB" chunkmem 100 "$EVENTS"
fi

# ---------------------------------------------------------------- a: static stream from nginx
mkdir -p "$WORK/www" "$WORK/tmp"
"$CB" gen "$WORK/www/stream.txt" "$EVENTS" 0 >&2
"$CB" gen "$WORK/www/stream_usage.txt" "$EVENTS" 1 >&2
NGINX_PORT=$(free_port)
cat >"$WORK/nginx.conf" <<EOF
daemon off;
master_process off;
worker_processes 1;
pid $WORK/nginx.pid;
error_log $WORK/nginx-error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path $WORK/tmp/body;
  proxy_temp_path $WORK/tmp/proxy;
  fastcgi_temp_path $WORK/tmp/fastcgi;
  uwsgi_temp_path $WORK/tmp/uwsgi;
  scgi_temp_path $WORK/tmp/scgi;
  sendfile on;
  keepalive_requests 1000000;
  keepalive_timeout 60s;
  types { }
  default_type text/event-stream;
  server {
    listen 127.0.0.1:$NGINX_PORT;
    root $WORK/www;
    # The client POSTs; the static module answers 405, which this turns into the file itself.
    location / { error_page 405 =200 \$uri; }
  }
}
EOF
start_nginx() {
  nginx -c "$WORK/nginx.conf" -p "$WORK" -e "$WORK/nginx-error.log" &
  NGINX_PID=$!
  PIDS+=("$NGINX_PID")
  wait_port "$NGINX_PORT"
}

# static_run NAME FILE THREADS CONC PROMPTS [BINARY]: one llmbench run (LLMBENCH unless BINARY is
# given) against nginx; prints a table row.
static_run() {
  local name=$1 file=$2 threads=$3 conc=$4 prompts=$5 bin=${6:-$LLMBENCH}
  local d="$WORK/res-$name"
  rm -rf "$d"; mkdir -p "$d"
  local t
  t=$(time_run "$d/run" "$bin" run --base-url "http://127.0.0.1:$NGINX_PORT" \
      --endpoint "/$file" --model static --client-threads "$threads" \
      --max-concurrency "$conc" --num-prompts "$prompts" --quiet --save-result \
      --result-dir "$d" --result-filename run.json)
  local c
  c=$("$CB" count "$d")
  local user sys rss
  read -r user sys rss <<<"$t"
  local chunks window
  chunks=$(sed 's/.*chunks=\([0-9]*\) .*/\1/' <<<"$c")
  window=$(sed 's/.*window_s=\([0-9.]*\).*/\1/' <<<"$c")
  local dur tok
  dur=$(json_num "$d/run.json" duration)
  tok=$(json_num "$d/run.json" total_output_tokens)
  awk -v n="$name" -v th="$threads" -v k="$conc" -v ch="$chunks" -v w="$window" -v u="$user" \
      -v s="$sys" -v r="$rss" -v du="$dur" -v to="$tok" -v c="$c" 'BEGIN {
    printf "%-24s threads=%d conc=%-3d chunks=%d window_s=%.3f events_per_s=%.0f per_thread=%.0f" \
           " duration_s=%s tokens=%s cpu_s=%.2f cpu_ns_per_event=%.0f maxrss_MB=%.1f  [%s]\n",
           n, th, k, ch, w, ch / w, ch / w / th, du, to, u + s, (u + s) * 1e9 / ch, r / 1024, c }'
}

# The binaries of the static section, with the tag their rows carry when there are two.
STATIC_BINS=("$LLMBENCH")
STATIC_TAGS=("")
if [[ -n $OTHER ]]; then
  STATIC_BINS=("$LLMBENCH" "$OTHER")
  STATIC_TAGS=("-test" "-other")
fi

# side_by_side ROWS: per row kind, the median CPU per event and peak RSS of each binary and the
# ratio test / other.
side_by_side() {
  log "side by side: LLMBENCH=$LLMBENCH (test) vs OTHER=$OTHER (other), medians of $REPS runs"
  sed -E 's/^([a-z0-9-]+)-(test|other)-r[0-9]+ .*cpu_ns_per_event=([0-9]+) maxrss_MB=([0-9.]+).*/\1 \2 \3 \4/' "$1" |
    awk '
    function median(a, n,   i, j, v) {  # sorts a[1..n] (insertion sort; n is small)
      for (i = 2; i <= n; i++) { v = a[i]; for (j = i - 1; j > 0 && a[j] > v; j--) a[j + 1] = a[j]; a[j + 1] = v }
      return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    { key = $1 " " $2; n[key]++; cpu[key, n[key]] = $3; rss[key, n[key]] = $4; kinds[$1] = 1 }
    END {
      for (k in kinds) {
        for (t = 0; t < 2; t++) {
          key = k " " (t ? "other" : "test"); m = n[key]
          for (i = 1; i <= m; i++) { c[i] = cpu[key, i]; r[i] = rss[key, i] }
          med_cpu[t] = median(c, m); med_rss[t] = median(r, m)
        }
        printf "side by side: %-18s cpu_ns_per_event test=%.0f other=%.0f ratio=%.3f" \
               "  maxrss_MB test=%.1f other=%.1f diff=%+.1f\n", k, med_cpu[0], med_cpu[1],
               med_cpu[0] / med_cpu[1], med_rss[0], med_rss[1], med_rss[0] - med_rss[1]
      }
    }' | sort
}

if section static; then
  start_nginx
  log "a: static stream from nginx on 127.0.0.1:$NGINX_PORT ($EVENTS events/request, $PROMPTS requests)"
  for rep in $(seq 1 "$REPS"); do
    for i in "${!STATIC_BINS[@]}"; do
      b=${STATIC_BINS[$i]} tag=${STATIC_TAGS[$i]}
      static_run "static-t1-k1$tag-r$rep" stream.txt 1 1 "$PROMPTS" "$b"
      static_run "static-t1-k8$tag-r$rep" stream.txt 1 8 "$PROMPTS" "$b"
      static_run "static-usage-t1-k1$tag-r$rep" stream_usage.txt 1 1 "$PROMPTS" "$b"
      static_run "static-t2-k8$tag-r$rep" stream.txt 2 8 "$PROMPTS" "$b"
    done
  done | tee "$WORK/static-rows"
  log "a: marginal CPU per event (runs of $((PROMPTS / 5)) vs $PROMPTS requests, t1 k1)"
  field() { sed "s/.* $1=\([0-9.]*\).*/\1/" <<<"$2"; }
  for i in "${!STATIC_BINS[@]}"; do
    b=${STATIC_BINS[$i]} tag=${STATIC_TAGS[$i]}
    small=$(static_run "static-small$tag-t1-k1" stream.txt 1 1 $((PROMPTS / 5)) "$b")
    large=$(static_run "static-large$tag-t1-k1" stream.txt 1 1 "$PROMPTS" "$b")
    echo "$small"; echo "$large"
    awk -v c1="$(field chunks "$small")" -v c2="$(field chunks "$large")" \
        -v u1="$(field cpu_s "$small")" -v u2="$(field cpu_s "$large")" \
        -v r1="$(field maxrss_MB "$small")" -v r2="$(field maxrss_MB "$large")" -v t="$tag" 'BEGIN {
      printf "marginal%s: cpu_ns_per_event=%.0f peak_rss_bytes_per_chunk=%.1f (whole run: records," \
             " JSONL sink, metrics)\n", t, (u2 - u1) * 1e9 / (c2 - c1), (r2 - r1) * 1048576 / (c2 - c1) }'
  done
  [[ -z $OTHER ]] || side_by_side "$WORK/static-rows"
fi

# ---------------------------------------------------------------- d: wrk reference
if section wrk && [[ $have_wrk -eq 1 ]]; then
  [[ -n ${NGINX_PID:-} ]] || start_nginx
  log "d: wrk GET of the same file (loopback + nginx ceiling; events/s = requests/s x $EVENTS)"
  wrk -t1 -c1 -d5s "http://127.0.0.1:$NGINX_PORT/stream.txt" | grep -E "Requests/sec|Transfer/sec"
  wrk -t1 -c8 -d5s "http://127.0.0.1:$NGINX_PORT/stream.txt" | grep -E "Requests/sec|Transfer/sec"
fi
if [[ -n ${NGINX_PID:-} ]]; then kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; NGINX_PID=; fi

# ---------------------------------------------------------------- llmbench serve
start_serve() {  # start_serve ITL_MS: sets SERVE_PID and SERVE_PORT
  rm -f "$WORK/port"
  "$LLMBENCH" serve --host 127.0.0.1 --port 0 --port-file "$WORK/port" --ttft-ms 0 \
    --itl-ms "$1" --tokens-per-chunk 1 --max-num-seqs 100000 >"$WORK/serve.log" 2>&1 &
  SERVE_PID=$!
  PIDS+=("$SERVE_PID")
  for _ in $(seq 1 100); do [[ -s $WORK/port ]] && break; sleep 0.1; done
  SERVE_PORT=$(cat "$WORK/port")
  wait_port "$SERVE_PORT"
}
stop_serve() { kill "$SERVE_PID" 2>/dev/null || true; wait "$SERVE_PID" 2>/dev/null || true; }

# builtin_run NAME THREADS CONC PROMPTS OUTLEN
builtin_run() {
  local name=$1 threads=$2 conc=$3 prompts=$4 outlen=$5
  local d="$WORK/res-$name"
  rm -rf "$d"; mkdir -p "$d"
  local t c user sys rss chunks window
  t=$(time_run "$d/run" "$LLMBENCH" run --base-url "http://127.0.0.1:$SERVE_PORT" \
      --client-threads "$threads" --max-concurrency "$conc" --num-prompts "$prompts" \
      --output-len "$outlen" --ignore-eos --quiet --save-result --result-dir "$d" \
      --result-filename run.json)
  c=$("$CB" count "$d")
  read -r user sys rss <<<"$t"
  chunks=$(sed 's/.*chunks=\([0-9]*\) .*/\1/' <<<"$c")
  window=$(sed 's/.*window_s=\([0-9.]*\).*/\1/' <<<"$c")
  awk -v n="$name" -v th="$threads" -v k="$conc" -v ch="$chunks" -v w="$window" -v u="$user" \
      -v s="$sys" -v r="$rss" -v c="$c" 'BEGIN {
    printf "%-24s threads=%d conc=%-3d chunks=%d window_s=%.3f events_per_s=%.0f" \
           " client_cpu_s=%.2f client_cpu_ns_per_event=%.0f maxrss_MB=%.1f  [%s]\n",
           n, th, k, ch, w, ch / w, u + s, (u + s) * 1e9 / ch, r / 1024, c }'
}

if section builtin; then
  start_serve 0
  log "b: llmbench serve (ttft 0, itl 0, 1 token/chunk) on 127.0.0.1:$SERVE_PORT; shares the 2 cores"
  for rep in $(seq 1 "$REPS"); do
    builtin_run "serve-t1-k1-r$rep" 1 1 20 "$EVENTS"
    builtin_run "serve-t1-k8-r$rep" 1 8 40 "$EVENTS"
  done
  stop_serve
fi

# ---------------------------------------------------------------- c: memory per open stream
rss_of() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }
# mem_run C: C streams held open (itl 1000 ms, 60 tokens); prints "C rss_kb established"
mem_run() {
  local c=$1 d="$WORK/mem-$1"
  mkdir -p "$d"
  "$LLMBENCH" run --base-url "http://127.0.0.1:$SERVE_PORT" --client-threads 1 \
    --max-concurrency "$c" --num-prompts "$c" --output-len 60 --ignore-eos --quiet \
    --result-dir "$d" >"$d/stdout" 2>"$d/stderr" &
  local pid=$!
  PIDS+=("$pid")
  # Wait until every stream is open (established client sockets) and has run a few seconds.
  local est=0
  for _ in $(seq 1 300); do
    est=$(ss -Htn state established "( dport = :$SERVE_PORT )" 2>/dev/null | wc -l)
    [[ $est -ge $c ]] && break
    sleep 0.1
  done
  sleep 5
  local rss
  rss=$(rss_of "$pid")
  est=$(ss -Htn state established "( dport = :$SERVE_PORT )" 2>/dev/null | wc -l)
  kill -INT "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  # The interrupted requests are recorded as cancelled, with the chunks they had received.
  local got
  got=$("$CB" count "$d" | sed 's/.* chunks=\([0-9]*\) .*/\1/')
  echo "$c $rss $est $got"
}

if section memory; then
  start_serve 1000
  log "c: memory per open stream (llmbench serve, itl 1000 ms, 60-token outputs, 1 client thread)"
  read -r _ base _ _ <<<"$(mem_run 1)"
  echo "memory: streams=1 rss_kb=$base"
  for c in $MEM_CS; do
    read -r _ rss est got <<<"$(mem_run "$c")"
    awk -v c="$c" -v r="$rss" -v b="$base" -v e="$est" -v g="$got" 'BEGIN {
      printf "memory: streams=%d established=%d chunks_received=%d rss_kb=%d delta_kb=%d" \
             " bytes_per_stream=%.0f\n", c, e, g, r, r - b, (r - b) * 1024 / (c - 1) }'
  done
  stop_serve
fi
