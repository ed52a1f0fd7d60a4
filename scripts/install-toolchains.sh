#!/usr/bin/env bash
# Installs the toolchains the tests use to build guests from source:
#   WAT (wabt), C (clang-19 + wasi-libc), Rust (Debian's rustc 1.63 + wasm32
#   std + lld-14), AssemblyScript (npm, pinned in sdk/assemblyscript),
#   headless Chromium for the dashboard's browser test (cmd/eddy), and kcat
#   (librdkafka), the client that is not Go reading exactly-once output in
#   cmd/eddy's kcat test; and iproute2 (`ip`), with which cmd/eddy's
#   TestHostsOnANetwork puts the broker and nodes on network namespaces.
# Go comes with the machine. Only Debian packages and the npm registry are
# used. Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

pkgs=(make wabt clang-19 lld-19 libclang-rt-19-dev-wasm32 wasi-libc rustc libstd-rust-dev-wasm32 lld-14 chromium kcat)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
# iproute2 by its command: a machine may have ip without the Debian package.
command -v ip >/dev/null 2>&1 || missing+=(iproute2)
if [ ${#missing[@]} -gt 0 ]; then
	echo "installing: ${missing[*]}"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# AssemblyScript compiler, pinned by the SDK's package-lock.json.
if [ -f sdk/assemblyscript/package.json ] && [ ! -x sdk/assemblyscript/node_modules/.bin/asc ]; then
	(cd sdk/assemblyscript && npm ci --no-audit --no-fund --loglevel=error)
fi
