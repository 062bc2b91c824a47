#!/usr/bin/env bash
# tidy.sh [--all | BASE] — clang-tidy (14, the checks in .clang-tidy, every warning an error) on the
# C++ sources under src/ that changed since BASE. BASE defaults to the commit named in
# .ci/tidy-base: the newest commit whose changed files were all checked clean (a session that
# fixes what tidy found moves it forward). --all checks every source. Needs build/ci's
# compile_commands.json (scripts/test.sh configures it). Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

db=build/ci
[[ -f $db/compile_commands.json ]] || { echo "tidy: $db/compile_commands.json missing (cmake --preset ci)" >&2; exit 2; }
if ! command -v clang-tidy >/dev/null; then
  echo "tidy: clang-tidy not installed (scripts/setup.sh installs it)" >&2
  exit 2
fi

if [[ ${1:-} == --all ]]; then
  files=$(git ls-files 'src/*.cpp')
else
  base=${1:-$(cat .ci/tidy-base 2>/dev/null || true)}
  if [[ -z $base ]] || ! git cat-file -e "$base^{commit}" 2>/dev/null; then
    echo "tidy: base '${base}' is not a commit here; checking the last commit's files"
    base=HEAD~1
  fi
  # Sources changed since BASE, plus the sources beside changed headers (a header is checked
  # through the files that include it: HeaderFilterRegex in .clang-tidy).
  changed=$(git diff --name-only --diff-filter=AM "$base" -- 'src/*.cpp' 'src/*.hpp')
  files=$(for f in $changed; do
    case $f in
      *.cpp) echo "$f" ;;
      *.hpp) if [[ -f ${f%.hpp}.cpp ]]; then echo "${f%.hpp}.cpp"; fi ;;
    esac
  done | sort -u)
fi
if [[ -z $files ]]; then
  echo "tidy: no changed sources to check"
  exit 0
fi
echo "tidy: checking $(wc -w <<<"$files") sources"
# -Wno-unknown-warning-option: the build passes GCC-only warning flags (-Wno-restrict).
printf '%s\n' $files | xargs -P "$(nproc)" -n 4 clang-tidy -p "$db" --quiet \
  --warnings-as-errors='*' --extra-arg=-Wno-unknown-warning-option 2>/dev/null
echo "tidy: clean"
