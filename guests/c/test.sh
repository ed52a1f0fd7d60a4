#!/usr/bin/env bash
# Tests the C reference guests natively (the behaviour through Wasm is checked
# by the golden test of cmd/eddy, which compares every language's guests with
# the Go guests):
#
#   1. internal/internal_test.c checks the ports of Go's strconv, unicode,
#      bytes.Fields and the jsonscan package against vectors that
#      internal/vectors_gen.go computes with Go (needs go);
#   2. internal/guests_test.c runs each guest on the cases of its Go twin's
#      tests, through the SDK's native stand-ins for the host.
#
# Both run under AddressSanitizer and UBSan (gcc). Usage: guests/c/test.sh
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$here"

flags=(-std=c11 -O1 -g -Wall -Wextra -Werror -fsanitize=address,undefined -fno-sanitize-recover=all
	-I../../sdk/c -Iinternal)
"${HOSTCC:-gcc}" "${flags[@]}" -o "$tmp/internal_test" internal/internal_test.c
if command -v go >/dev/null; then
	(cd internal && go run vectors_gen.go) | "$tmp/internal_test"
else
	echo "skip internal/internal_test: go is not installed"
fi
for src in *.c; do
	name=${src%.c}
	"${HOSTCC:-gcc}" "${flags[@]}" -DGUEST="$name" -DGUEST_"${name//-/_}" -o "$tmp/$name" internal/guests_test.c
	"$tmp/$name"
done
