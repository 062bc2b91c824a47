#!/usr/bin/env bash
# live_llamacpp.sh — the live acceptance of `llmbench calibrate` against llama.cpp's llama-server
# (docs/simulator.md "Calibrating a live server"). Builds nothing: give it a llama-server binary and
# a GGUF model. It starts the server on 127.0.0.1, runs `calibrate --base-url` (at most 20 probes,
# 5 minutes), then a closed-loop concurrency sweep 1..16 at two input lengths with `llmbench run`,
# and prints the calibrated simulator's prediction of every sweep point against the measurement,
# with the errors and their MAPE (`calibrate --evaluate`; the probes go in too, unjudged, since
# llama-server keeps their prompts in its KV cache). Then it stops the server (by its pid), prints
# the per-step evidence of the sweep (steps.py: decode steps, prompt stalls) and refits offline
# for the other protocols: 256 -> 2048-token prompts and back, concurrency 1,4,16 -> 2,8.
#
# Usage: bench/calib/live_llamacpp.sh LLAMA_SERVER MODEL.gguf [options]
#   --llmbench PATH        llmbench binary (default build/ci/llmbench)
#   --model-profile NAME   data/sim/models profile of the GGUF (default ds2-random-tiny)
#   --gpu NAME             data/sim/gpus profile of the device (default cpu-host; h100-sxm on GPU)
#   --port N               (default 18777)      --slots N   (default 16)
#   --ctx-per-slot N       (default 2048)       --threads N (default 1)
#   --ngl N                layers on the GPU (default 0; 99 for a CUDA build)
#   --inputs "A B"         the sweep's two prompt lengths (default "128 1024")
#   --output-len N         output tokens per request (default 32)
#   --prompts-per-slot N   requests per concurrency level (default 2, i.e. 2 x concurrency)
#   --tokenizer PATH       tokenizer.json for exact prompt lengths (default: none)
#   --probe-max-input N    longest probe prompt (default: the longer sweep length)
#   --max-probe-seconds S  the probes' time budget (default 300)
#   --jobs N               simulations at once in the offline fits (default 4)
#   --refits 0|1           run the offline refits after the sweep (default 1; they need no
#                          server and can be run later from the saved files)
#   --out DIR              where everything goes (default /tmp/llmbench-live-<date>)
set -euo pipefail
[[ $# -ge 2 ]] || { sed -n '2,28p' "$0"; exit 2; }
server_bin=$1 model=$2
shift 2
here="$(cd "$(dirname "$0")/../.." && pwd)"
llmbench="$here/build/ci/llmbench" profile=ds2-random-tiny gpu=cpu-host port=18777 slots=16
ctx_slot=2048 threads=1 ngl=0 inputs="128 1024" out_len=32 per_slot=2 tokenizer="" probe_max=""
probe_seconds=300 jobs=4 refits=1
out="/tmp/llmbench-live-$(date +%Y%m%d-%H%M%S)"
while [[ $# -gt 0 ]]; do
  case $1 in
    --llmbench) llmbench=$2 ;; --model-profile) profile=$2 ;; --gpu) gpu=$2 ;;
    --port) port=$2 ;; --slots) slots=$2 ;; --ctx-per-slot) ctx_slot=$2 ;;
    --threads) threads=$2 ;; --ngl) ngl=$2 ;; --inputs) inputs=$2 ;; --output-len) out_len=$2 ;;
    --prompts-per-slot) per_slot=$2 ;; --tokenizer) tokenizer=$2 ;; --out) out=$2 ;;
    --probe-max-input) probe_max=$2 ;; --max-probe-seconds) probe_seconds=$2 ;; --jobs) jobs=$2 ;;
    --refits) refits=$2 ;;
    *) echo "unknown option $1" >&2; exit 2 ;;
  esac
  shift 2
done
mkdir -p "$out"
if [[ -z $probe_max ]]; then
  probe_max=0
  for in_len in $inputs; do
    if [[ $in_len -gt $probe_max ]]; then probe_max=$in_len; fi
  done
fi
url="http://127.0.0.1:$port"
"$server_bin" -m "$model" --host 127.0.0.1 --port "$port" -np "$slots" -c $((slots * ctx_slot)) \
  -t "$threads" -ngl "$ngl" --metrics --threads-http $((slots + 8)) >"$out/server.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
# /health answers 200 once the model is loaded (bash's /dev/tcp: no curl needed).
healthy() {
  { exec 3<>"/dev/tcp/127.0.0.1/$port"; } 2>/dev/null || return 1
  printf 'GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' >&3
  local status
  read -r -t 5 _ status _ <&3 || status=0
  exec 3<&-
  [[ $status == 200 ]]
}
for _ in $(seq 1 300); do
  healthy && break
  kill -0 "$server_pid" 2>/dev/null || { echo "llama-server exited; see $out/server.log" >&2; exit 1; }
  sleep 1
done
tok=()
[[ -n $tokenizer ]] && tok=(--tokenizer "$tokenizer")
common=(--engine llamacpp --gpu "$gpu" --model-profile "$profile")

echo "== calibrate against $url (probes, at most 5 minutes)"
start=$(date +%s)
"$llmbench" calibrate --base-url "$url" "${common[@]}" "${tok[@]}" --probe-max-input "$probe_max" \
  --max-probe-seconds "$probe_seconds" -o "$out/calibration.json" --probe-dir "$out/probes" |
  tee "$out/calibrate.txt" || echo "calibrate exited with an error; the sweep still runs"
echo "calibrate took $(( $(date +%s) - start )) s (probes and fit)"

echo "== the sweep: concurrency 1..16 at input lengths $inputs"
for in_len in $inputs; do
  for c in 1 2 4 8 16; do
    [[ $c -le $slots ]] || continue
    "$llmbench" run --base-url "$url" --dataset-name random --random-input-len "$in_len" \
      --random-output-len "$out_len" --num-prompts $((per_slot * c)) --max-concurrency "$c" \
      --ignore-eos --seed $((1000 + c + in_len)) "${tok[@]}" --save-result \
      --result-dir "$out/sweep" --result-filename "sweep-in$in_len-c$c.json" --quiet >/dev/null ||
      echo "sweep point input $in_len, concurrency $c failed"
  done
done

kill "$server_pid" 2>/dev/null || true
wait "$server_pid" 2>/dev/null || true
trap - EXIT

echo "== predicted (calibrated on the probes) against measured (held out: the sweep)"
"$llmbench" calibrate "$out"/probes/*.json "$out"/sweep/sweep-*.json --calibration \
  "$out/calibration.json" "${common[@]}" --evaluate --holdout 'file=sweep-*' |
  tee "$out/prediction.txt"

if command -v python3 >/dev/null; then
  echo "== per-step evidence of the sweep (client token times)"
  python3 "$here/bench/calib/steps.py" "$out"/sweep/sweep-*.records.jsonl | tee "$out/steps.txt"
fi

if [[ $refits != 1 ]]; then
  echo "results in $out (offline refits skipped)"
  exit 0
fi
# Offline refits on the same measurements: fit on part of the sweep, judge the rest (the probes
# ride along unselected: they only set what the server's slots held before the sweep).
engine=("${common[@]}" --max-num-seqs "$slots" --ctx-size $((slots * ctx_slot)) --jobs "$jobs")
set -- $inputs
protocol() {
  local name=$1
  shift
  echo "== offline: $name"
  "$llmbench" calibrate "$out"/probes/*.json "$out"/sweep/sweep-*.json "${engine[@]}" \
    --select 'file=sweep-*' "$@" -o "$out/fit-$name.json" | tee "$out/fit-$name.txt" ||
    echo "offline fit $name failed"
}
protocol "isl$1-to-isl$2" --holdout "isl=$2"
protocol "isl$2-to-isl$1" --holdout "isl=$1"
protocol "c1-4-16-to-c2-8" --holdout concurrency=2,8
echo "results in $out"
