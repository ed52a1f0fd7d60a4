#!/usr/bin/env bash
# Rebuilds this package's WAT fixtures. Needs wat2wasm (apt-get install wabt)
# and, for exceptions.wasm, binaryen's wasm-opt (the AssemblyScript SDK's:
# cd sdk/assemblyscript && npm ci), which turns the legacy exception
# instructions wat2wasm writes into the try_table form wazero runs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here}
wat2wasm "$here/features.wat" -o "$out/features.wasm"
wat2wasm --enable-tail-call "$here/tailcall.wat" -o "$out/tailcall.wasm"
wat2wasm --enable-threads "$here/atomics.wat" -o "$out/atomics.wasm"
wasmopt=${WASM_OPT:-$here/../../../../sdk/assemblyscript/node_modules/.bin/wasm-opt}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
wat2wasm --enable-exceptions "$here/exceptions.wat" -o "$tmp/legacy.wasm"
"$wasmopt" --enable-exception-handling --enable-reference-types --translate-to-exnref "$tmp/legacy.wasm" -o "$out/exceptions.wasm"
# The legacy encoding too, which wazero refuses but the walker reads.
wat2wasm --enable-exceptions "$here/exceptions.wat" -o "$out/exceptions-legacy.wasm"
