#!/usr/bin/env bash
# Differential test of llmbench's chat templates against npm @huggingface/jinja (README.md,
# "Chat templates").
#   chat_templates.sh DRIVER OUT_DIR
# Environment: LLMBENCH_SOURCE_DIR (repo root), LLMBENCH_NPM_REF (folder whose node_modules holds
# the pinned packages; default $LLMBENCH_SOURCE_DIR/build/npm-ref), CHAT_CASES (cases per
# template; default 150, so 11 templates give 1,650 renders).
# Exit 77 (ctest: skipped) when node, the pinned package or the shared data is missing; exit 1
# instead under LLMBENCH_REQUIRE_SHARED_DATA=1 (scripts/test.sh sets it when the data is there).
set -euo pipefail
driver=$1
out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=${LLMBENCH_SOURCE_DIR:-$(cd "$here/../.." && pwd)}
data=$root/../shared/data/tokenizers
npm_ref=${LLMBENCH_NPM_REF:-$root/build/npm-ref}

skip() {
  if [[ ${LLMBENCH_REQUIRE_SHARED_DATA:-} == 1 ]]; then
    echo "chat templates: FAILED (LLMBENCH_REQUIRE_SHARED_DATA=1): $*" >&2
    exit 1
  fi
  echo "chat templates: SKIPPED: $*"
  exit 77
}
[[ -d $data ]] || skip "shared data not found at $data"
command -v node >/dev/null || skip "node not installed (scripts/test.sh installs nodejs/npm)"
pinned=$(node -p "require('$here/package.json').dependencies['@huggingface/jinja']")
export NODE_PATH=$npm_ref/node_modules
have=$(node -p "require('$NODE_PATH/@huggingface/jinja/package.json').version" 2>/dev/null || true)
[[ $have == "$pinned" ]] ||
  skip "npm @huggingface/jinja@$pinned not installed under $NODE_PATH (found '${have:-nothing}');" \
    "scripts/test.sh installs it"

# Every template of the shared tokenizers: name, file (under $data), profile (what it can render,
# gen_chat_cases.mjs), and for a bare Jinja file the BOS and EOS its tokenizer uses (- = none).
# deepseek-coder and deepseek-llm ship no chat template (vocabulary-only GGUF files).
bos_ds='<｜begin▁of▁sentence｜>'
eos_ds='<｜end▁of▁sentence｜>'
templates=(
  "deepseek-v3 deepseek-v3/tokenizer_config.json concat - -"
  "deepseek-v3-hf deepseek-v3/tokenizer_config.hf.json concat - -"
  "deepseek-r1 deepseek-r1/tokenizer_config.json r1 - -"
  "deepseek-r1-llamacpp deepseek-r1/chat_template.llamacpp-variant.jinja either $bos_ds $eos_ds"
  "deepseek-r1-distill-qwen deepseek-r1-distill-qwen/chat_template.llamacpp.jinja distill $bos_ds $eos_ds"
  "deepseek-v3.1 deepseek-v3.1/chat_template.llamacpp.jinja v31 $bos_ds $eos_ds"
  "deepseek-v3.2 deepseek-v3.2/chat_template.llamacpp.jinja v32 $bos_ds $eos_ds"
  "llama3 llama3/tokenizer_config.json llama3 - -"
  "llama3.1 llama3/chat_template.llama-3.1.llamacpp.jinja llama31 <|begin_of_text|> <|eot_id|>"
  "qwen2.5 qwen2.5/chat_template.llamacpp.jinja qwen25 - <|im_end|>"
  "qwen3 qwen3/tokenizer_config.json qwen3 - -"
)
mkdir -p "$out"
tsv=$out/templates.tsv
: >"$tsv"
for t in "${templates[@]}"; do
  read -r name file profile bos eos <<<"$t"
  [[ $bos == - ]] && bos=""
  [[ $eos == - ]] && eos=""
  [[ -f $data/$file ]] || skip "template $data/$file not found"
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$data/$file" "$profile" "$bos" "$eos" >>"$tsv"
done
node "$here/gen_chat_cases.mjs" "$tsv" "${CHAT_CASES:-150}" "$out/cases.jsonl"
node "$here/chat_reference.mjs" "$tsv" "$out/cases.jsonl" "$out/ref.jsonl"
"$driver" "$tsv" "$out/cases.jsonl" "$out/ref.jsonl" "$out/failures.jsonl"
