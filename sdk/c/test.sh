#!/usr/bin/env bash
# Runs the C SDK's tests:
#
#   1. tests/msgpack_test.c and tests/dispatch_test.c natively, with gcc
#      under AddressSanitizer and UndefinedBehaviorSanitizer (and clang-19,
#      when it is installed, with trapping UBSan): the codec, and every kind
#      driven through the ABI's envelopes with the native stand-ins for the
#      host;
#   2. tests/module.c, which uses the whole API, compiled to Wasm
#      freestanding and (when wasi-libc is installed) with wasi-libc, with
#      warnings as errors, checking the freestanding module's imports (and
#      that built without its timer calls it imports no timer function, and
#      without its config reads no config_get).
#
# Usage: sdk/c/test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here/tests"

common=(-std=c11 -g -Wall -Wextra -Werror)
run() { # run CC FLAGS...: builds and runs both tests
	local cc=$1
	shift
	for t in msgpack_test dispatch_test; do
		"$cc" "${common[@]}" "$@" -o "$tmp/$t" "$t.c"
		echo -n "$cc $*: "
		"$tmp/$t"
	done
}
run gcc -O1 -fsanitize=address,undefined -fno-sanitize-recover=all
if command -v clang-19 >/dev/null; then
	# Debian's clang-19 has no native sanitizer runtimes; trapping UBSan
	# needs none.
	run clang-19 -O2 -fsanitize=undefined -fsanitize-trap=all
fi

if ! command -v clang-19 >/dev/null; then
	echo "skip wasm builds: clang-19 is not installed (see docs/languages/c.md)"
	exit 0
fi
wflags=(-O2 -std=c11 -Wall -Wextra -Werror -I..)
clang-19 --target=wasm32 -nostdlib -Wl,--no-entry "${wflags[@]}" -o "$tmp/free.wasm" module.c
clang-19 --target=wasm32 -nostdlib -mbulk-memory -msimd128 -Wl,--no-entry "${wflags[@]}" -o "$tmp/free-bulk.wasm" module.c
echo "ok   freestanding builds: $(wc -c <"$tmp/free.wasm") and $(wc -c <"$tmp/free-bulk.wasm") bytes"
if command -v wasm-objdump >/dev/null; then
	imports() { wasm-objdump -x -j Import "$1" | grep -o '<- [a-z_0-9.]*' | sort | tr '\n' ' '; }
	have=$(imports "$tmp/free.wasm")
	base="<- eddy.counter_add <- eddy.error <- eddy.log <- eddy.state_delete <- eddy.state_get <- eddy.state_put "
	timers="<- eddy.time_now <- eddy.timer_delete <- eddy.timer_set "
	want="<- eddy.config_get $base$timers"
	if [ "$have" != "$want" ]; then
		echo "FAIL freestanding imports: $have"
		exit 1
	fi
	echo "ok   freestanding imports: $have"
	clang-19 --target=wasm32 -nostdlib -Wl,--no-entry "${wflags[@]}" -DNO_TIMERS -o "$tmp/free-notimers.wasm" module.c
	have=$(imports "$tmp/free-notimers.wasm")
	want="<- eddy.config_get $base"
	if [ "$have" != "$want" ]; then
		echo "FAIL imports without timer calls: $have"
		exit 1
	fi
	echo "ok   imports without timer calls: $have"
	clang-19 --target=wasm32 -nostdlib -Wl,--no-entry "${wflags[@]}" -DNO_CONFIG -o "$tmp/free-noconfig.wasm" module.c
	have=$(imports "$tmp/free-noconfig.wasm")
	want="$base$timers"
	if [ "$have" != "$want" ]; then
		echo "FAIL imports without config reads: $have"
		exit 1
	fi
	echo "ok   imports without config reads: $have"
fi
if [ -d /usr/lib/wasm32-wasi ] || [ -d /usr/share/wasi-sysroot ]; then
	clang-19 --target=wasm32-wasi -mexec-model=reactor "${wflags[@]}" -o "$tmp/wasi.wasm" module.c
	echo "ok   wasi-libc build: $(wc -c <"$tmp/wasi.wasm") bytes"
else
	echo "skip wasi-libc build: wasi-libc is not installed"
fi
