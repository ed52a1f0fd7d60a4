#!/usr/bin/env bash
# Runs the Rust SDK's tests natively (no Wasm): the unit tests of the codec
# and the dispatch (src/tests.rs, with the host functions stubbed in memory)
# and the examples in the doc comments. Needs only rustc and rustdoc
# (Debian's rustc package).
#
# Usage: sdk/rust/test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
RUSTC=${RUSTC:-/usr/bin/rustc}
RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$RUSTC" --edition 2021 --test -o "$tmp/eddy-test" "$here/src/lib.rs"
"$tmp/eddy-test"
"$RUSTC" --edition 2021 --crate-type rlib --crate-name eddy --out-dir "$tmp" "$here/src/lib.rs"
"$RUSTDOC" --edition 2021 --test --crate-name eddy -L "$tmp" --extern eddy="$tmp/libeddy.rlib" "$here/src/lib.rs"
