#!/bin/bash
# tests/e2e/setup.sh - make sure the pinned Claude Code CLI is installed
# (from package.json and package-lock.json) and print the path of its
# `claude` on stdout.
#
#   RAYMOND_CLAUDE=$(tests/e2e/setup.sh)
#
# The install is kept between runs, and between clones, in a cache folder:
# $RAYMOND_TEST_CACHE, by default $XDG_CACHE_HOME/raymond-tests or
# ~/.cache/raymond-tests, in claude-code-VERSION-SUM/ where SUM is a
# checksum of package-lock.json.  A second run finds it there and neither
# downloads nor installs anything; changing the pinned version (or the
# lock file) names another folder, so the next run installs that.
#
# When it is not there: node and npm are installed if missing (apt-get, as
# root or through sudo), then `npm ci` (or `npm install` if that fails)
# runs in a fresh folder, renamed into place only once the CLI reports the
# pinned version.  Parallel callers wait for each other on a lock.
# Exits non-zero with a message on stderr when the CLI cannot be set up.
set -u

want=2.1.197
dir=$(cd "$(dirname "$0")" && pwd) || exit 1
cache=${RAYMOND_TEST_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/raymond-tests}
prefix="$cache/claude-code-$want-$(cksum <"$dir/package-lock.json" | cut -d' ' -f1)"
claude="$prefix/node_modules/.bin/claude"

fail() {
	echo "tests/e2e/setup.sh: $*" >&2
	exit 1
}

# installed [PREFIX]: the CLI under PREFIX is the pinned version.
installed() {
	local c=${1:-$prefix}/node_modules/.bin/claude v
	[ -x "$c" ] || return 1
	v=$("$c" --version 2>/dev/null) || return 1
	[ "${v%% *}" = "$want" ]
}

found() {
	echo "$claude"
	exit 0
}

installed && found

# One install at a time: test scripts run in parallel.
mkdir -p "$cache" || fail "cannot create the cache folder $cache (set RAYMOND_TEST_CACHE)"
if command -v flock >/dev/null 2>&1 && exec 9>>"$cache/.lock"; then
	flock 9 || fail "cannot lock $cache/.lock"
	installed && found
fi

# Install node and npm from the distribution if either is missing.
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	if [ "$(id -u)" = 0 ]; then
		sudo=
	elif command -v sudo >/dev/null 2>&1; then
		sudo="sudo -n"
	else
		fail "node and npm are missing; install them (apt-get install -y nodejs npm) and retry"
	fi
	command -v apt-get >/dev/null 2>&1 ||
		fail "node and npm are missing and there is no apt-get; install Node >= 18 and npm"
	echo "tests/e2e/setup.sh: installing nodejs and npm" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! $sudo apt-get install -y nodejs npm >&2; then
		$sudo apt-get update >&2 && $sudo apt-get install -y nodejs npm >&2 ||
			fail "apt-get install -y nodejs npm failed"
	fi
	command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 ||
		fail "node or npm still missing after apt-get"
fi
major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null) ||
	fail "node does not run"
[ "$major" -ge 18 ] 2>/dev/null || fail "node $(node --version) is too old; need >= 18"

new=$(mktemp -d "$prefix.new.XXXXXX") || fail "cannot create a folder in $cache"
trap 'rm -rf "$new"' EXIT
cp "$dir/package.json" "$dir/package-lock.json" "$new/" || fail "cannot copy package.json to $new"
cd "$new" || fail "cannot cd to $new"
echo "tests/e2e/setup.sh: installing @anthropic-ai/claude-code@$want in $prefix" >&2
if ! npm ci --no-audit --no-fund >&2; then
	echo "tests/e2e/setup.sh: npm ci failed; trying npm install" >&2
	npm install --no-audit --no-fund >&2 || fail "npm install failed in $new"
fi

# The package's postinstall copies the native binary over bin/claude.exe;
# run it by hand if npm skipped it (ignore-scripts, allowScripts).
if ! installed "$new" && [ -f node_modules/@anthropic-ai/claude-code/install.cjs ]; then
	(cd node_modules/@anthropic-ai/claude-code && node install.cjs) >&2
fi
installed "$new" ||
	fail "claude --version is not $want after npm install (got: $(node_modules/.bin/claude --version 2>&1 | head -n 1))"
cd / && rm -rf "$prefix" && mv "$new" "$prefix" || fail "cannot move $new to $prefix"
found
