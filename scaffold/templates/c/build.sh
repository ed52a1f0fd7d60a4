#!/usr/bin/env bash
# Builds {{.Name}}.wasm from function.c with the Eddy C SDK in eddy-sdk/.
#
# Usage: ./build.sh          build {{.Name}}.wasm
#        ./build.sh test     run the native tests in test.c
#
# Needs clang-19 and lld-19 (apt-get install -y clang-19 lld-19); the tests
# need any C compiler for this machine (cc).
#
#   --target=wasm32 -nostdlib -Wl,--no-entry  a freestanding reactor module:
#                                             no C library, no WASI imports
#   -mbulk-memory                             copies are one instruction; the
#                                             host checks for interruption in
#                                             every loop, so loops are dear
#   -msimd128                                 Wasm SIMD (auto-vectorised loops)
#   -O2 -s -ffile-prefix-map                  optimised, stripped, reproducible
set -euo pipefail

cd "$(dirname "$0")"
name="{{.Name}}"

if [ "${1:-}" = test ]; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	"${HOSTCC:-cc}" -std=c11 -O1 -g -Wall -Wextra -Ieddy-sdk -o "$tmp/test" test.c
	"$tmp/test"
	exit
fi

"${CC:-clang-19}" --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -std=c11 -Wall -Wextra \
	-ffile-prefix-map="$PWD"=. -Ieddy-sdk -Wl,--no-entry -o "$name.wasm" function.c
echo "built $name.wasm"
