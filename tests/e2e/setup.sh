#!/bin/bash
# tests/e2e/setup.sh - make sure the pinned Claude Code CLI is installed in
# tests/e2e/node_modules (from package.json and package-lock.json).
#
#   tests/e2e/setup.sh
#
# Idempotent and silent when node_modules/.bin/claude already reports the
# pinned version.  Otherwise it installs node and npm if they are missing
# (apt-get, as root or through sudo), then runs `npm ci` (or `npm install`
# if that fails) here.  Parallel callers wait for each other on a lock.
# Exits non-zero with a message on stderr when the CLI cannot be set up.
set -u

want=2.1.197
dir=$(cd "$(dirname "$0")" && pwd) || exit 1
claude="$dir/node_modules/.bin/claude"

fail() {
	echo "tests/e2e/setup.sh: $*" >&2
	exit 1
}

# True when the installed CLI is the pinned version.
installed() {
	[ -x "$claude" ] || return 1
	v=$("$claude" --version 2>/dev/null) || return 1
	[ "${v%% *}" = "$want" ]
}

installed && exit 0

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

# One install at a time: test scripts run in parallel.
lock="/tmp/raymond-e2e-setup-$(printf %s "$dir" | cksum | cut -d' ' -f1).lock"
if command -v flock >/dev/null 2>&1 && exec 9>>"$lock"; then
	flock 9 || fail "cannot lock $lock"
	installed && exit 0
fi

cd "$dir" || fail "cannot cd to $dir"
echo "tests/e2e/setup.sh: installing @anthropic-ai/claude-code@$want in $dir" >&2
if ! npm ci --no-audit --no-fund >&2; then
	echo "tests/e2e/setup.sh: npm ci failed; trying npm install" >&2
	npm install --no-audit --no-fund >&2 || fail "npm install failed in $dir"
fi

# The package's postinstall copies the native binary over bin/claude.exe;
# run it by hand if npm skipped it (ignore-scripts, allowScripts).
if ! installed && [ -f node_modules/@anthropic-ai/claude-code/install.cjs ]; then
	(cd node_modules/@anthropic-ai/claude-code && node install.cjs) >&2
fi
installed || fail "$claude --version is not $want after npm install (got: $("$claude" --version 2>&1 | head -n 1))"
exit 0
