#!/usr/bin/env bash
# Copies a built `llmbench` and the three Debian libraries it links that a CUDA image may lack
# (SQLite, Oniguruma, simdjson) into DEST (default build/devrun/comm), for run_device.sh on such a
# machine: carry DEST there and pass DEST/llmbench. Usage: bench/comm/pack.sh [BUILD_DIR] [DEST]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-$here/../../build/ci}"
dest="${2:-$here/../../build/devrun/comm}"
mkdir -p "$dest"
cp "$build/llmbench" "$dest/"
for lib in libsqlite3.so.0 libonig.so.5 libsimdjson.so.14; do
  cp -L "$(ldd "$build/llmbench" | awk -v l="$lib" '$1 == l {print $3}')" "$dest/$lib"
done
ls -la "$dest"
