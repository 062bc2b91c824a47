#!/usr/bin/env bash
# Engine knobs of llama.cpp's llama-server, for real (docs/sweep.md "Restarting the server per
# setting"): two `llmbench sweep --serve-cmd` sweeps that start llama-server once per setting.
#
#  1. slots `-np {max_num_seqs}` in SLOTS (default 1,2,4,8) x concurrency CONC (default
#     1,2,4,8,16): one sweep, one server start per slot count, each setting's knee printed (the
#     sweep's "Knee (max-num-seqs=N)" lines; expected at about N);
#  2. `--cache-type-k {kv_dtype}` in f16,q8_0 at concurrency KV_CONC (default 1,4): TPOT per
#     setting, and the KV cache's memory from each server's log.
#
# Usage: bench/sweep/llamacpp_knobs.sh LLAMA_SERVER MODEL.gguf [--ngl N] [--threads T]
#          [--ctx C] [--slots 1,2,4,8] [--conc 1,2,4,8,16] [--kv-conc 1,4] [--prompts N]
#          [--input-len N] [--output-len N] [--port P] [--out DIR] [--llmbench PATH]
#          [--skip-kv] [-- extra llama-server flags]
# --prompts is per point (default 64); --ctx is llama-server's -c, shared by its slots (default
# 4096: 512 tokens a slot at 8 slots, enough for the default 128 in + 64 out). llama-server is
# never committed: build it beside the project. Every server is stopped by the sweep (its process
# group, SIGTERM then SIGKILL), also on Ctrl-C.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -lt 2 ]]; then
  sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
  exit 2
fi
server="$1"
model="$2"
shift 2
ngl=0 threads="" ctx=4096 slots=1,2,4,8 conc=1,2,4,8,16 kv_conc=1,4 prompts=64
input_len=128 output_len=64 port=18480 out="" llmbench="" skip_kv=0 extra=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --ngl) ngl="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --ctx) ctx="$2"; shift 2 ;;
    --slots) slots="$2"; shift 2 ;;
    --conc) conc="$2"; shift 2 ;;
    --kv-conc) kv_conc="$2"; shift 2 ;;
    --prompts) prompts="$2"; shift 2 ;;
    --input-len) input_len="$2"; shift 2 ;;
    --output-len) output_len="$2"; shift 2 ;;
    --port) port="$2"; shift 2 ;;
    --out) out="$2"; shift 2 ;;
    --llmbench) llmbench="$2"; shift 2 ;;
    --skip-kv) skip_kv=1; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "unknown option: $1" >&2; exit 2 ;;
  esac
done
[[ -x "$server" ]] || { echo "not an executable: $server" >&2; exit 2; }
[[ -f "$model" ]] || { echo "no such model file: $model" >&2; exit 2; }
llmbench="${llmbench:-$here/../../build/ci/llmbench}"
[[ -x "$llmbench" ]] || { echo "build llmbench first (or give --llmbench): $llmbench" >&2; exit 2; }
out="${out:-$(mktemp -d /tmp/llamacpp_knobs.XXXXXX)}"
mkdir -p "$out"
flags="-m $model --host {host} --port {port} -c $ctx -ngl $ngl --metrics"
[[ -n "$threads" ]] && flags+=" -t $threads"
[[ ${#extra[@]} -gt 0 ]] && flags+=" ${extra[*]}"
common=(--host 127.0.0.1 --port "$port" --backend llamacpp --dataset-name random
  --random-input-len "$input_len" --random-output-len "$output_len" --ignore-eos
  --num-prompts "$prompts" --server-ready-timeout 600 --result-dir "$out")
echo "host: $(uptime)"
echo "results in $out"

echo "== sweep 1: slots -np {max_num_seqs} in $slots x concurrency $conc"
"$llmbench" sweep --serve-cmd "$server $flags -np {max_num_seqs}" \
  --sweep "max-num-seqs=$slots" --sweep "max-concurrency=$conc" \
  --result-filename slots.json "${common[@]}" 2>"$out/slots.log" | tee "$out/slots.txt" || true
echo "-- knee per slot count (expected at about the slot count):"
grep '^Knee' "$out/slots.txt" | sed -E 's/; queue fits:.*//' || echo "(no knee line: see $out/slots.log)"
echo "-- server starts: $(grep -c 'setting [0-9]*: ready' "$out/slots.log" || true)"

if [[ $skip_kv -eq 0 ]]; then
  echo "== sweep 2: --cache-type-k {kv_dtype} in f16,q8_0 x concurrency $kv_conc (4 slots)"
  "$llmbench" sweep --serve-cmd "$server $flags -np 4 --cache-type-k {kv_dtype}" \
    --sweep kv_dtype=f16,q8_0 --sweep "max-concurrency=$kv_conc" \
    --result-filename kv.json "${common[@]}" 2>"$out/kv.log" | tee "$out/kv.txt" || true
  echo "-- KV cache memory per setting (from each server's log):"
  for log in "$out"/kv-s*.server.log; do
    [[ -f "$log" ]] || continue
    echo "$(basename "$log"): $(grep -hoE '(KV self size|KV buffer size) *= *[0-9.]+ MiB[^,]*(, K \([a-z0-9_]+\): *[0-9.]+ MiB)?' "$log" | tr '\n' ' ')"
  done
  echo "-- mean/p99 TPOT per point (ms), from the sweep CSV:"
  awk -F, 'NR==1 {for (i=1;i<=NF;i++) c[$i]=i; next}
    {printf "  kv_dtype=%s max-concurrency=%s: mean TPOT %s, p99 TPOT %s, out tok/s %s\n",
      $c["kv_dtype"], $c["max-concurrency"], $c["mean_tpot_ms"], $c["p99_tpot_ms"],
      $c["output_throughput"]}' "$out/kv.sweep.csv"
fi
