#!/usr/bin/env bash
# Builds {{.Name}}.wasm from function.rs with the Eddy Rust SDK in eddy-sdk/.
#
# Usage: ./build.sh          build {{.Name}}.wasm
#        ./build.sh test     run the tests in function.rs natively
#
# Needs Debian's rustc and the linker of LLVM 14:
#   apt-get install -y rustc libstd-rust-dev-wasm32 lld-14
set -euo pipefail

cd "$(dirname "$0")"
name="{{.Name}}"
crate=$(printf '%s' "$name" | tr -c 'A-Za-z0-9_' '_')
RUSTC=${RUSTC:-/usr/bin/rustc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${1:-}" = test ]; then
	"$RUSTC" --edition 2021 --crate-type rlib --crate-name eddy -o "$tmp/libeddy.rlib" eddy-sdk/src/lib.rs
	"$RUSTC" --edition 2021 --test --crate-name "$crate" --extern eddy="$tmp/libeddy.rlib" -o "$tmp/test" function.rs
	"$tmp/test"
	exit
fi

# bulk-memory makes copies one memory.copy instead of a loop; the paths are
# remapped so that the module does not depend on where it is built.
flags=(
	--edition 2021 --target wasm32-unknown-unknown
	-C opt-level=3 -C debuginfo=0 -C panic=abort -C codegen-units=1 -C target-feature=+bulk-memory
	--remap-path-prefix "$PWD/=" --remap-path-prefix "$tmp/="
)
"$RUSTC" "${flags[@]}" --crate-type rlib --crate-name eddy -C metadata=eddy-sdk \
	-o "$tmp/libeddy.rlib" eddy-sdk/src/lib.rs
"$RUSTC" "${flags[@]}" --crate-type cdylib --crate-name "$crate" -C metadata="$crate" \
	-C lto=fat -C linker=wasm-ld-14 -C strip=symbols --extern eddy="$tmp/libeddy.rlib" \
	-o "$name.wasm" function.rs
echo "built $name.wasm"
