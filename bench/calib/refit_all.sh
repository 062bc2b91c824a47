#!/usr/bin/env bash
# refit_all.sh — every offline calibration protocol of docs/calibration.md on every committed live
# llama-server run (bench/calib/*/probes and sweep), one line each: held-out MAPE of TPOT, mean
# TTFT and output tokens/s. Judges a change of the cost model on all runs at once.
#
# Usage: bench/calib/refit_all.sh LLMBENCH [OUT_DIR]   (LLMBENCH_DATA_DIR is passed through)
set -euo pipefail
bin=$1
out=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
h100=(--engine llamacpp --gpu h100-sxm --model-profile ds2-random-big --max-num-seqs 16
  --ctx-size 65536)
cpu=(--engine llamacpp --gpu cpu-host --model-profile ds2-random-tiny --max-num-seqs 16
  --ctx-size 8192)
# run NAME DIR SHORT LONG ENGINE-FLAGS...: the four protocols of one run.
run() {
  local name=$1 dir=$here/$2 short=$3 long=$4
  shift 4
  local files=("$dir"/probes/*.json "$dir"/sweep/*.json)
  one "$name" probes-to-sweep "${files[@]}" "$@" --holdout 'file=sweep-*'
  one "$name" "isl$short-to-isl$long" "${files[@]}" "$@" --select 'file=sweep-*' --holdout "isl=$long"
  one "$name" "isl$long-to-isl$short" "${files[@]}" "$@" --select 'file=sweep-*' --holdout "isl=$short"
  one "$name" c1-4-16-to-c2-8 "${files[@]}" "$@" --select 'file=sweep-*' --holdout concurrency=2,8
}
one() {
  local name=$1 protocol=$2
  shift 2
  "$bin" calibrate "$@" --jobs 2 -o "$out/$name-$protocol.json" >"$out/$name-$protocol.txt" \
    2>"$out/$name-$protocol.err" ||
    { echo "$name $protocol: failed (see $out/$name-$protocol.txt)"; return; }
  awk -v n="$name" -v p="$protocol" '/held-out points/ { h = 1 }
    h && $1 == "MAPE" { printf "%-24s %-20s TPOT %6s  TTFT %6s  tok/s %6s\n", n, p, $5, $2, $7; exit }' \
    "$out/$name-$protocol.txt"
}
printf '%-24s %-20s %s\n' run protocol "held-out MAPE"
run h100-1 h100-llamacpp-ds2big 256 2048 "${h100[@]}"
run h100-2 h100-llamacpp-ds2big-2 256 2048 "${h100[@]}"
run h100-3 h100-llamacpp-ds2big-3 256 2048 "${h100[@]}"
run h100-4 h100-llamacpp-ds2big-4 256 2048 "${h100[@]}"
run h100-5 h100-llamacpp-ds2big-5 256 2048 "${h100[@]}"
run cpu-loaded cpu-llamacpp-ds2tiny 64 256 "${cpu[@]}"
run cpu-quiet cpu-llamacpp-ds2tiny-quiet 64 256 "${cpu[@]}"
run cpu-quiet-2 cpu-llamacpp-ds2tiny-quiet-2 64 256 "${cpu[@]}"
run cpu-quiet-3 cpu-llamacpp-ds2tiny-quiet-3 64 256 "${cpu[@]}"
run cpu-quiet-4 cpu-llamacpp-ds2tiny-quiet-4 64 256 "${cpu[@]}"
echo "fits in $out"
