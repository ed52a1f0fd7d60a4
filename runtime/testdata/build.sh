#!/usr/bin/env bash
# Rebuilds the runtime package's WAT fixtures (the shared ones are in
# guests/wat). Needs wat2wasm (apt-get install wabt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
wat2wasm "$here/start.wat" -o "$out/start.wasm"
wat2wasm "$here/startloop.wat" -o "$out/startloop.wasm"
wat2wasm "$here/initloop.wat" -o "$out/initloop.wasm"
