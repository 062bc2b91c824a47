#!/usr/bin/env bash
# check_includes.sh — every `#include "llmbench/<module>/..."` in src/llmbench/<m>/ must name <m>
# itself or a module that <m> may use (docs/architecture.md, "Modules"; DESIGN.md §4). Prints each
# violation as FILE:LINE and exits 1 if there is any. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

# module: the modules it may include (besides itself). Keep in step with docs/architecture.md.
declare -A allowed=(
  [core]=""
  [sse]="core"
  [http]="core"
  [protocol]="core"
  [tokenizer]="core"
  [workload]="core tokenizer"
  [metrics]="core"
  [analysis]="core metrics"
  [telemetry]="core http"
  [sim]="core metrics"
  [calib]="core metrics sim"
  [report]="core metrics analysis"
  [loadgen]="core http sse protocol tokenizer workload metrics"
  [server]="core http sim tokenizer"
  [dist]="core workload metrics loadgen"
  [app]="core sse http protocol tokenizer workload metrics analysis telemetry sim calib report loadgen server dist"
  [cli]="*"
)

status=0
for dir in src/llmbench/*/; do
  module=$(basename "$dir")
  if [[ ! -v allowed[$module] ]]; then
    echo "check_includes: src/llmbench/$module is not in the module table (scripts/check_includes.sh)"
    status=1
    continue
  fi
  [[ ${allowed[$module]} == "*" ]] && continue
  while IFS=: read -r file line text; do
    used=$(sed -n 's|.*#include "llmbench/\([a-z_]*\)/.*|\1|p' <<<"$text")
    [[ -z $used || $used == "$module" ]] && continue
    if [[ " ${allowed[$module]} " != *" $used "* ]]; then
      echo "check_includes: $file:$line: $module may not include llmbench/$used (allowed: ${allowed[$module]:-nothing})"
      status=1
    fi
  done < <(grep -rn '#include "llmbench/' "$dir" || true)
done
[[ $status == 0 ]] && echo "check_includes: every module includes only what it may use"
exit $status
