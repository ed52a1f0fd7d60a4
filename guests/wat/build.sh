#!/usr/bin/env bash
# Rebuilds the WAT fixtures into testdata/wat. Needs wat2wasm (apt-get install wabt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../testdata/wat}
mkdir -p "$out"
for f in "$here"/*.wat; do
	name=$(basename "$f" .wat)
	wat2wasm "$f" -o "$out/$name.wasm"
done
