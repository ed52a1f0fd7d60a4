#!/usr/bin/env bash
# Runs the Rust reference guests' tests natively (no Wasm), with the SDK's
# test harness (eddy::testing) and its in-memory host stand-ins, and the
# tests of the helpers in lib/. Needs only rustc.
#
# Usage: guests/rust/test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
RUSTC=${RUSTC:-/usr/bin/rustc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for lib in eddy:"$repo/sdk/rust/src/lib.rs" jsonscan:"$here/lib/jsonscan.rs" words:"$here/lib/words.rs"; do
	"$RUSTC" --edition 2021 --crate-type rlib --crate-name "${lib%%:*}" --out-dir "$tmp" "${lib#*:}"
done
externs=(--extern eddy="$tmp/libeddy.rlib" --extern jsonscan="$tmp/libjsonscan.rlib" --extern words="$tmp/libwords.rlib")

for src in "$here"/lib/*.rs "$here"/*.rs; do
	name=$(basename "$src" .rs)
	echo "== $name"
	"$RUSTC" --edition 2021 --test -L "$tmp" "${externs[@]}" -o "$tmp/$name-test" "$src"
	"$tmp/$name-test" -q
done
