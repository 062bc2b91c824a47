#!/usr/bin/env bash
# Tokenizer speed: llmbench::tokenizer vs HF tokenizers (npm, Rust core) on the same DeepSeek-V3
# documents, one thread each.
#   bench/tokenizer/run.sh [BUILD_DIR]     (default: build/dev)
# HF side needs the npm package outside the repo, e.g.
#   npm install --prefix /work/ext/npm tokenizers@0.23.2 && export NODE_PATH=/work/ext/npm/node_modules
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/dev}
bench=$(find "$build" -name tokenizer_bench -type f -perm -u+x | head -1)
[[ -n "$bench" ]] || { echo "tokenizer_bench not found under $build" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export LLMBENCH_SHARED_DATA=${LLMBENCH_SHARED_DATA:-$root/../shared/data}
"$bench" --write-corpus="$tmp/corpus.jsonl"
zstd -dq "$LLMBENCH_SHARED_DATA/tokenizers/deepseek-v3/tokenizer.json.zst" -o "$tmp/tokenizer.json" 2>/dev/null ||
  cp "$LLMBENCH_SHARED_DATA/tokenizers/deepseek-v3/tokenizer.json" "$tmp/tokenizer.json"
echo "== llmbench::tokenizer (Google Benchmark; rates per CPU second)"
"$bench" --benchmark_counters_tabular=true
if node -e "require('tokenizers')" 2>/dev/null; then
  echo "== HF tokenizers (npm) on the same mixed documents"
  node "$here/hf_bench.mjs" speed "$tmp/tokenizer.json" "$tmp/corpus.jsonl" 5
else
  echo "(npm package 'tokenizers' not found via NODE_PATH: HF comparison skipped)"
fi
