#!/usr/bin/env bash
# Installs the toolchains the tests use to rebuild guest fixtures from source.
# Go comes with the machine. Debian packages only; idempotent.
set -euo pipefail
need=()
command -v wat2wasm >/dev/null || need+=(wabt)
command -v make >/dev/null || need+=(make)
if [ ${#need[@]} -gt 0 ]; then
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	$sudo apt-get update -qq
	$sudo apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
