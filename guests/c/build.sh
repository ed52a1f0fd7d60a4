#!/usr/bin/env bash
# Builds every C reference guest (each *.c file here) to OUTDIR/NAME.wasm with
# the C SDK (sdk/c), freestanding: no C library, no WASI imports. OUTDIR
# defaults to testdata/c in the repository.
#
# Usage: guests/c/build.sh [OUTDIR]
#
# Needs clang-19 and lld-19 (apt-get install clang-19 lld-19; see
# docs/languages/c.md). The builds are reproducible: the same compiler gives
# the same bytes on every run and in any checkout, because -s strips the
# names and -ffile-prefix-map drops the build directory from the output.
#
#   --target=wasm32 -nostdlib -Wl,--no-entry  a freestanding reactor module;
#                                             eddy.h brings its allocator and
#                                             memcpy, memset, ...
#   -mbulk-memory                             memcpy and memset are single
#                                             instructions (memory.copy/fill)
#   -msimd128                                 Wasm SIMD (upper uses it; the
#                                             host, wazero, supports it)
#   -O2 -s                                    optimise, strip names
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/../../testdata/c}
mkdir -p "$out"
out=$(cd "$out" && pwd)
cc=${CC:-clang-19}

cd "$here"
for src in *.c; do
	name=${src%.c}
	echo "building $name -> $out/$name.wasm"
	"$cc" --target=wasm32 -nostdlib -mbulk-memory -msimd128 -O2 -s -std=c11 -Wall -Wextra -Werror \
		-ffile-prefix-map="$here"=. -I../../sdk/c -Iinternal \
		-Wl,--no-entry -o "$out/$name.wasm" "$src"
done
"$cc" --version | head -n 1 > "$out/TOOLCHAIN"
