#!/bin/sh
# Install the Debian packages the build needs, if any is missing.
# Safe to run repeatedly: when everything is present it prints nothing.
set -e

need=""
pkg-config --version >/dev/null 2>&1 || need="$need pkg-config"
for spec in lua5.4:liblua5.4-dev lua5.4-cjson:lua-cjson-dev yaml-0.1:libyaml-dev \
	    libuv:libuv1-dev libzip:libzip-dev libcrypto:libssl-dev libmicrohttpd:libmicrohttpd-dev; do
	pc=${spec%%:*}
	deb=${spec#*:}
	pkg-config --exists "$pc" 2>/dev/null || need="$need $deb"
done
# luac, to embed the engine's Lua as bytecode (tools/embed.sh).
command -v luac5.4 >/dev/null 2>&1 || need="$need lua5.4"
command -v cc >/dev/null 2>&1 || need="$need gcc libc6-dev"
command -v make >/dev/null 2>&1 || need="$need make"
command -v bash >/dev/null 2>&1 || need="$need bash"

[ -n "$need" ] || exit 0
# shellcheck disable=SC2086
sh "$(dirname "$0")/apt-install.sh" build $need
