#!/usr/bin/env bash
# Builds {{.Name}}.wasm from index.ts with the AssemblyScript compiler that
# package.json pins (installed into node_modules on the first build).
#
#   --runtime minimal   the SDK frees what the function allocates between calls
#   --use abort=...     routes aborts (throws, failed bounds checks) to the SDK
#   --noAssert          drops assert() checks; remove it to debug
set -euo pipefail
cd "$(dirname "$0")"
if [ ! -x node_modules/.bin/asc ]; then
	npm install --no-audit --no-fund --loglevel=error
fi
node_modules/.bin/asc index.ts -O3 --runtime minimal --noAssert \
	--use abort=eddy-sdk/assembly/abort/eddyAbort -o {{.Name}}.wasm
echo "built {{.Name}}.wasm"
