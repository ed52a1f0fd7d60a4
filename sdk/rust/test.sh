#!/usr/bin/env bash
# Runs the Rust SDK's tests natively (no Wasm): the unit tests of the codec
# and the dispatch (src/tests.rs, with the host functions stubbed in memory)
# and the examples in the doc comments. Needs only rustc and rustdoc
# (Debian's rustc package).
#
# Then, when the wasm32 standard library (libstd-rust-dev-wasm32),
# wasm-ld-14 and wasm-objdump (wabt) are installed, it builds
# tests/module.rs, which calls every host function, for wasm32 and checks
# its imports, and that built without its config reads or timer calls it
# imports no config_get or timer function.
#
# Usage: sdk/rust/test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
RUSTC=${RUSTC:-/usr/bin/rustc}
RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/wasm"

"$RUSTC" --edition 2021 --test -o "$tmp/eddy-test" "$here/src/lib.rs"
"$tmp/eddy-test"
"$RUSTC" --edition 2021 --crate-type rlib --crate-name eddy --out-dir "$tmp" "$here/src/lib.rs"
"$RUSTDOC" --edition 2021 --test --crate-name eddy -L "$tmp" --extern eddy="$tmp/libeddy.rlib" "$here/src/lib.rs"

LINKER=${LINKER:-wasm-ld-14}
if ! "$RUSTC" --print sysroot >/dev/null 2>&1 || [ ! -d "$("$RUSTC" --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ] ||
	! command -v "$LINKER" >/dev/null || ! command -v wasm-objdump >/dev/null; then
	echo "skip wasm import checks: needs libstd-rust-dev-wasm32, $LINKER and wasm-objdump"
	exit 0
fi
wflags=(--edition 2021 --target wasm32-unknown-unknown -C opt-level=3 -C panic=abort -C target-feature=+bulk-memory)
"$RUSTC" "${wflags[@]}" --crate-type rlib --crate-name eddy -o "$tmp/wasm/libeddy.rlib" "$here/src/lib.rs"
imports() { wasm-objdump -x -j Import "$1" | grep -o '<- [a-z_0-9.]*' | sort | tr '\n' ' '; }
check() { # check NAME WANT [CFG...]: builds tests/module.rs with the cfgs and compares its imports
	local name=$1 want=$2
	shift 2
	"$RUSTC" "${wflags[@]}" --crate-type cdylib --crate-name module -C lto=fat -C linker="$LINKER" -C strip=symbols \
		"$@" --extern eddy="$tmp/wasm/libeddy.rlib" -o "$tmp/wasm/$name.wasm" "$here/tests/module.rs"
	local have
	have=$(imports "$tmp/wasm/$name.wasm")
	if [ "$have" != "$want" ]; then
		echo "FAIL imports of $name: $have (want $want)"
		exit 1
	fi
	echo "ok   imports of $name: $have"
}
base="<- eddy.counter_add <- eddy.error <- eddy.log <- eddy.state_delete <- eddy.state_get <- eddy.state_put "
timers="<- eddy.time_now <- eddy.timer_delete <- eddy.timer_set "
check module "<- eddy.config_get $base$timers"
check module-noconfig "$base$timers" --cfg no_config
check module-notimers "<- eddy.config_get $base" --cfg no_timers
check module-neither "$base" --cfg no_config --cfg no_timers
