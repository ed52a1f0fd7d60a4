#!/usr/bin/env bash
# Builds every Rust reference guest (each *.rs here) to OUTDIR/NAME.wasm,
# one at a time, and records the toolchain in OUTDIR/TOOLCHAIN. OUTDIR
# defaults to testdata/rust in the repository.
#
# Usage: guests/rust/build.sh [OUTDIR]
#
# It uses Debian's rustc 1.63 (/usr/bin/rustc, with libstd-rust-dev-wasm32)
# and wasm-ld-14 (lld-14), without cargo: the SDK (sdk/rust) and the guests'
# helpers (lib/jsonscan.rs, lib/words.rs) are compiled to rlibs in a
# temporary folder, and each guest is linked against them with --extern.
#
# -C target-feature=+bulk-memory makes copies (memcpy) one memory.copy
# instruction instead of a loop: the host checks for interruption at every
# loop iteration of a guest, which made a copy of 200 bytes cost some 2 µs.
#
# The modules are reproducible: no debug info, symbols stripped, one codegen
# unit, fixed crate metadata, and source paths remapped so that nothing
# depends on where the repository is checked out.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${1:-$repo/testdata/rust}
mkdir -p "$out"
out=$(cd "$out" && pwd)

RUSTC=${RUSTC:-/usr/bin/rustc}
LINKER=${LINKER:-wasm-ld-14}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

flags=(
	--edition 2021 --target wasm32-unknown-unknown
	-C opt-level=3 -C debuginfo=0 -C panic=abort -C codegen-units=1 -C target-feature=+bulk-memory
	--remap-path-prefix "$repo/=" --remap-path-prefix "$tmp/="
)

lib() { # lib NAME SOURCE [EXTERNS...]
	local name=$1 src=$2
	shift 2
	"$RUSTC" "${flags[@]}" --crate-type rlib --crate-name "$name" -C metadata="eddy-$name" \
		"$@" -o "$tmp/lib$name.rlib" "$src"
}

lib eddy "$repo/sdk/rust/src/lib.rs"
lib jsonscan "$here/lib/jsonscan.rs"
lib words "$here/lib/words.rs"

for src in "$here"/*.rs; do
	name=$(basename "$src" .rs)
	echo "building $name -> $out/$name.wasm"
	"$RUSTC" "${flags[@]}" --crate-type cdylib --crate-name "$name" -C metadata="eddy-guest-$name" \
		-C lto=fat -C linker="$LINKER" -C strip=symbols -L "$tmp" \
		--extern eddy="$tmp/libeddy.rlib" --extern jsonscan="$tmp/libjsonscan.rlib" \
		--extern words="$tmp/libwords.rlib" -o "$out/$name.wasm" "$src"
done
"$RUSTC" --version > "$out/TOOLCHAIN"
