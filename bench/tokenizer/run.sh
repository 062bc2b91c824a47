#!/usr/bin/env bash
# Tokenizer speed and memory: llmbench::tokenizer vs HF tokenizers (npm `tokenizers`, Rust core) on
# the same DeepSeek-V3 documents (English, code, Chinese, multilingual, mixed), side by side:
# single thread per part, batch encode over thread counts, memory of a loaded tokenizer.
#   bench/tokenizer/run.sh [BUILD_DIR]     (default: build/dev)
# Environment: REPS (default 3: every figure is the median of REPS runs), BENCH_SECONDS (default
# 1: minimum timed seconds per figure), THREADS (default "1 2"), LLMBENCH_SHARED_DATA.
# HF side needs the npm package outside the repo: NODE_PATH defaults to build/npm-ref/node_modules
# (installed by tests/differential), e.g.
#   npm install --prefix /work/ext/npm tokenizers@0.23.2 && export NODE_PATH=/work/ext/npm/node_modules
# HF's thread count: the npm binding's native module reads RAYON_NUM_THREADS (rayon's global pool
# size) and TOKENIZERS_PARALLELISM (false: no rayon at all); this script sets
# RAYON_NUM_THREADS=N per node process and reports the process CPU/wall ratio to show it held.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/dev}
reps=${REPS:-3}
seconds=${BENCH_SECONDS:-1}
threads=${THREADS:-1 2}
bench=$(find "$build" -name tokenizer_bench -type f -perm -u+x | head -1)
[[ -n "$bench" ]] || { echo "tokenizer_bench not found under $build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LLMBENCH_SHARED_DATA=${LLMBENCH_SHARED_DATA:-$root/../shared/data}
if [[ -z "${NODE_PATH:-}" && -d "$root/build/npm-ref/node_modules" ]]; then
  export NODE_PATH=$root/build/npm-ref/node_modules
fi
unset TOKENIZERS_PARALLELISM
"$bench" --write-corpus="$tmp/corpus"
zstd -dq "$LLMBENCH_SHARED_DATA/tokenizers/deepseek-v3/tokenizer.json.zst" -o "$tmp/tokenizer.json" 2>/dev/null ||
  cp "$LLMBENCH_SHARED_DATA/tokenizers/deepseek-v3/tokenizer.json" "$tmp/tokenizer.json"
have_hf=0
if node -e "require('tokenizers')" 2>/dev/null; then
  have_hf=1
else
  echo "(npm package 'tokenizers' not found via NODE_PATH: HF columns are n/a)"
fi
parts=english,code,chinese,multilingual,mixed
echo "cpus: $(nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for ((r = 1; r <= reps; ++r)); do
  "$bench" --figures --seconds="$seconds" --threads="${threads// /,}" >>"$tmp/llmbench.jsonl"
  if ((have_hf)); then
    for n in $threads; do
      p=mixed
      ((n == 1)) && p=$parts
      RAYON_NUM_THREADS=$n node --expose-gc "$here/hf_bench.mjs" figures "$tmp/tokenizer.json" \
        "$tmp/corpus" "$seconds" "$n" "$p" >>"$tmp/hf.jsonl"
    done
  fi
  echo "repetition $r/$reps done; load average: $(cut -d' ' -f1-3 /proc/loadavg)"
done
touch "$tmp/hf.jsonl"
node "$here/report.mjs" "$tmp/llmbench.jsonl" "$tmp/hf.jsonl"
if [[ -n "${KEEP_RAW:-}" ]]; then
  cp "$tmp/llmbench.jsonl" "$tmp/hf.jsonl" "$KEEP_RAW"/
fi
