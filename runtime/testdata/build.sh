#!/usr/bin/env bash
# Rebuilds the runtime package's WAT fixtures (the shared ones are in
# guests/wat). Needs wat2wasm (apt-get install wabt).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
wat2wasm "$here/start.wat" -o "$out/start.wasm"
wat2wasm "$here/startloop.wat" -o "$out/startloop.wasm"
wat2wasm "$here/initloop.wat" -o "$out/initloop.wasm"
wat2wasm "$here/amplify.wat" -o "$out/amplify.wasm"
wat2wasm "$here/chatty.wat" -o "$out/chatty.wasm"
wat2wasm "$here/failures.wat" -o "$out/failures.wasm"
wat2wasm "$here/slowfill.wat" -o "$out/slowfill.wasm"
