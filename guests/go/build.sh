#!/usr/bin/env bash
# Builds every Go reference guest (each directory here with a main.go) to
# OUTDIR/NAME.wasm, one at a time (a Wasm build of Go takes most of a core and
# a lot of memory), and records the toolchain in OUTDIR/TOOLCHAIN. OUTDIR
# defaults to testdata/go in the repository.
#
# Usage: guests/go/build.sh [OUTDIR]
#
# -buildvcs=false keeps the modules reproducible: otherwise Go stamps the
# commit into them, and guests/fixtures_test.go could never match.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../testdata/go}
mkdir -p "$out"
out=$(cd "$out" && pwd)

cd "$here"
for main in */main.go; do
	name=${main%/main.go}
	echo "building $name -> $out/$name.wasm"
	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -trimpath -buildvcs=false -ldflags="-s -w" \
		-o "$out/$name.wasm" "./$name"
done
go version > "$out/TOOLCHAIN"
