#!/bin/bash
# The Claude Code CLI is installed once and kept in a cache outside the
# tree: a second setup (a second `make test`, or a fresh clone) neither
# downloads nor installs it, and changing the pinned version installs the
# new one.
. "$(dirname "$0")/lib.sh"
# setup.sh finds the cache through HOME, which e2e_setup changes.
OUTER_HOME=$HOME
e2e_setup || exit 1

# npm that writes down each call and fails, so that any install shows.
stub_npm() {
	mkdir -p bin
	cat >bin/npm <<-EOS
	#!/bin/sh
	echo "npm \$*" >>"$PWD/npm.log"
	exit 1
	EOS
	chmod +x bin/npm
}

test_expect_success 'a second setup finds the CLI in the cache and runs no npm' '
	stub_npm &&
	HOME=$OUTER_HOME PATH="$PWD/bin:$PATH" "$E2E_DIR/setup.sh" >claude-path 2>err &&
	same "$(cat claude-path)" "$RAYMOND_CLAUDE" &&
	test ! -e npm.log &&
	test ! -s err &&
	case "$RAYMOND_CLAUDE" in "$TESTS_TOP"/*) echo "the cache is inside the tree"; false ;; esac &&
	"$RAYMOND_CLAUDE" --version | grep -q "^$E2E_CLAUDE_VERSION "
'

test_expect_success 'a changed pinned version is installed, not taken from the cache' '
	stub_npm &&
	mkdir e2e &&
	for f in setup.sh package.json package-lock.json; do
		sed "s/$E2E_CLAUDE_VERSION/9.9.9/g" "$E2E_DIR/$f" >"e2e/$f" || exit 1
	done &&
	chmod +x e2e/setup.sh &&
	expect_status 1 env PATH="$PWD/bin:$PATH" RAYMOND_TEST_CACHE="$PWD/cache" e2e/setup.sh >out 2>err &&
	grep -q "^npm ci " npm.log &&
	grep -q "installing @anthropic-ai/claude-code@9.9.9 in $PWD/cache/claude-code-9.9.9-" err &&
	grep -q "npm install failed" err &&
	test ! -s out &&
	test -z "$(ls cache)"
'

test_done
