#!/usr/bin/env bash
# Differential test of llmbench::tokenizer against HF tokenizers (README.md in this folder).
#   run.sh DRIVER OUT_DIR
# Environment: LLMBENCH_SOURCE_DIR (repo root), LLMBENCH_NPM_REF (folder whose node_modules holds
# the pinned npm `tokenizers`; default $LLMBENCH_SOURCE_DIR/build/npm-ref), DIFF_TOKENIZERS
# (space-separated subset of the names below; default all nine). The five DeepSeek/Qwen/Llama
# tokenizers listed first below get all ~25,000 strings, the other four every second one (CI time).
# Exit 77 (ctest: skipped) when node, the pinned package, zstd or the shared data is missing;
# exit 1 instead under LLMBENCH_REQUIRE_SHARED_DATA=1 (scripts/test.sh sets it when the data is
# there, and installs the rest), so CI cannot pass by skipping.
set -euo pipefail
driver=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${LLMBENCH_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
data=$root/../shared/data
npm_ref=${LLMBENCH_NPM_REF:-$root/build/npm-ref}

skip() {
  if [[ ${LLMBENCH_REQUIRE_SHARED_DATA:-} == 1 ]]; then
    echo "differential: FAILED (LLMBENCH_REQUIRE_SHARED_DATA=1): $*" >&2
    exit 1
  fi
  echo "differential: SKIPPED: $*" >&2
  echo "differential: SKIPPED: $*"
  exit 77
}
[[ -d $data/tokenizers ]] || skip "shared data not found at $data"
command -v zstd >/dev/null || skip "zstd not installed"
command -v node >/dev/null || skip "node not installed (scripts/test.sh installs nodejs/npm)"
pinned=$(node -p "require('$here/package.json').dependencies.tokenizers")
export NODE_PATH=$npm_ref/node_modules
have=$(node -p "require('tokenizers/package.json').version" 2>/dev/null || true)
[[ $have == "$pinned" ]] ||
  skip "npm tokenizers@$pinned not installed under $NODE_PATH (found '${have:-nothing}');" \
    "scripts/test.sh installs it"
node -e "require('tokenizers')" 2>/dev/null || skip "npm tokenizers@$pinned does not load here"

# name folder tokenizer-file strings (the five DeepSeek/Qwen/Llama ones first)
cases=(
  "deepseek-v3 deepseek-v3 tokenizer.json all"
  "deepseek-r1 deepseek-r1 tokenizer.derived.json all"
  "deepseek-llm deepseek-llm tokenizer.reconstructed.json all"
  "qwen3 qwen3 tokenizer.json all"
  "llama3 llama3 tokenizer.json all"
  "deepseek-v3.1 deepseek-v3.1 tokenizer.derived.json half"
  "deepseek-coder deepseek-coder tokenizer.reconstructed.json half"
  "deepseek-r1-distill-qwen deepseek-r1-distill-qwen tokenizer.reconstructed.json half"
  "qwen2.5 qwen2.5 tokenizer.derived.json half"
)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$out"
start=$SECONDS
driver_args=()
jsons=()
for c in "${cases[@]}"; do
  read -r name folder file subset <<<"$c"
  if [[ -n ${DIFF_TOKENIZERS:-} && " $DIFF_TOKENIZERS " != *" $name "* ]]; then
    continue
  fi
  src=$data/tokenizers/$folder
  mkdir -p "$tmp/$name"
  if [[ -f $src/$file ]]; then
    cp "$src/$file" "$tmp/$name/$file"
  else
    zstd -dcq "$src/$file.zst" >"$tmp/$name/$file"
  fi
  # tokenizer_config.json beside it, as `llmbench tokenize --tokenizer FOLDER` would read it
  # (only BOS/EOS rules come from it; this test encodes with add_special_tokens=false).
  [[ -f $src/tokenizer_config.json ]] && cp "$src/tokenizer_config.json" "$tmp/$name/"
  jsons+=("$tmp/$name/$file")
  driver_args+=(--case "$name" "$tmp/$name/$file" "$tmp/strings_$subset.jsonl" "$tmp/ref_$name.jsonl")
done
((${#jsons[@]})) || skip "DIFF_TOKENIZERS='${DIFF_TOKENIZERS:-}' names no tokenizer"

# Added-token strings of every tokenizer under test, for the random mixes.
node -e '
  const fs = require("fs"); const set = new Set();
  for (const f of process.argv.slice(2)) for (const t of JSON.parse(fs.readFileSync(f)).added_tokens) set.add(t.content);
  fs.writeFileSync(process.argv[1], JSON.stringify([...set].sort()));
' "$tmp/added.json" "${jsons[@]}"
node "$here/gen_strings.mjs" "$data" "$tmp/strings_all.jsonl" "$tmp/added.json"
awk 'NR % 2 == 1' "$tmp/strings_all.jsonl" >"$tmp/strings_half.jsonl"

# HF reference outputs, one tokenizer after another, in the background: the driver loads the next
# tokenizer and compares while node encodes the following one.
(
  for ((i = 0; i < ${#jsons[@]}; ++i)); do
    strings=${driver_args[$((i * 5 + 3))]}
    ref=${driver_args[$((i * 5 + 4))]}
    if ! node "$here/hf_reference.mjs" "${jsons[$i]}" "$strings" "$ref"; then
      for ((j = i; j < ${#jsons[@]}; ++j)); do touch "${driver_args[$((j * 5 + 4))]}.failed"; done
      exit 1
    fi
  done
) &
refs=$!
rc=0
"$driver" --failures "$out/failures.jsonl" --allow-cat unicode-new "${driver_args[@]}" || rc=$?
if ((rc != 0)); then  # the driver gave up early: stop the reference runs too
  pkill -P "$refs" 2>/dev/null || true
  kill "$refs" 2>/dev/null || true
fi
wait "$refs" 2>/dev/null || true
echo "differential: finished in $((SECONDS - start)) s (failures, if any: $out/failures.jsonl)"
exit $rc
