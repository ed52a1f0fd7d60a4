#!/usr/bin/env bash
# Builds every AssemblyScript reference guest (each NAME.ts here) to
# OUTDIR/NAME.wasm, one at a time, with the compiler pinned by
# sdk/assemblyscript/package-lock.json. OUTDIR defaults to
# testdata/assemblyscript in the repository.
#
# Usage: guests/assemblyscript/build.sh [OUTDIR]
#
# The builds are reproducible: asc embeds no time stamps and no absolute
# paths (file names in abort messages are relative to this folder, which is
# why it compiles from here).
#
#   --runtime minimal   a TLSF allocator with a mark-and-sweep collector that
#                       runs only when asked; the SDK asks at the start of
#                       each call (sdk/assemblyscript/assembly/exports.ts)
#   --noAssert          drops assert() checks
#   --use abort=...     routes aborts to the SDK, which reports and traps,
#                       so the module imports nothing from "env"
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../testdata/assemblyscript}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$here"
asc=../../sdk/assemblyscript/node_modules/.bin/asc
if [ ! -x "$asc" ]; then
	echo "build.sh: $asc not found; run: (cd sdk/assemblyscript && npm ci)" >&2
	exit 1
fi
for src in *.ts; do
	name=${src%.ts}
	echo "building $name -> $out/$name.wasm"
	"$asc" "$src" -O3 --runtime minimal --noAssert \
		--use abort=../../sdk/assemblyscript/assembly/abort/eddyAbort \
		-o "$out/$name.wasm"
done
"$asc" --version > "$out/TOOLCHAIN"
