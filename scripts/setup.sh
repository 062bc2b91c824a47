#!/usr/bin/env bash
# setup.sh [--deps-only] — install the Debian 12 packages llmbench needs, then build the release
# preset's llmbench binary into build/release/llmbench. Safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
  cmake ninja-build g++ git ca-certificates pkg-config
  libboost1.81-dev libssl-dev libsimdjson-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev libonig-dev libutf8proc-dev libsqlite3-dev
  clang-format clang-tidy zstd openmpi-bin libopenmpi-dev
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# Node.js and npm, for the HTML report's chart library (npm ci by CMake; docs/report.md). Judged
# by the commands, not by Debian's package names: a machine whose Node.js comes from another
# repository (NodeSource's nodejs bundles npm) has no Debian `npm` package, and asking apt for
# one there fails the whole install ("held broken packages").
command -v node >/dev/null || missing+=(nodejs)
command -v npm >/dev/null || missing+=(npm)
if ((${#missing[@]})); then
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
[ "${1:-}" = "--deps-only" ] && exit 0

# Only the binary: scripts/test.sh builds and runs the tests (preset "ci").
cmake --preset release >/dev/null
cmake --build --preset release -j "$(nproc)" --target llmbench
echo "setup: built build/release/llmbench"
