# tests/e2e/lib.sh - helpers for the end-to-end tests (tests/e2e/t*.sh),
# which run raymond with the real Claude Code CLI against mockapi.js.
#
#   . "$(dirname "$0")/lib.sh"      # also sources tests/cli/lib.sh if needed
#   e2e_setup                       # once, at the top level of the script
#   test_expect_success 'title' '
#       state START.md <<-\EOS &&
#       Say hello.
#       MOCK: reply <result>hi</result>
#       EOS
#       raymond wf >out &&
#       grep -x hi out
#   '
#   test_done
#
# e2e_setup runs setup.sh (installs the pinned CLI unless it is in the
# cache, see setup.sh), starts one mock API for the whole script and
# exports the environment that points the CLI at it (see below);
# RAYMOND_CLAUDE names the real `claude`.  The mock counts MOCK lines for
# its whole life, so give every test its own MOCK lines (e.g. put the
# test's name in the reply).  Its EXIT trap stops only
# the mock it started (by pid) and then runs the EXIT trap that was set
# before (tests/cli/lib.sh removes TEST_ROOT).
#
# Functions:
#   e2e_setup         start the mock, export the environment:
#                     ANTHROPIC_BASE_URL=http://127.0.0.1:PORT,
#                     ANTHROPIC_API_KEY=test, HOME (private, under TEST_ROOT),
#                     TMPDIR and CLAUDE_CODE_TMPDIR (inside that HOME),
#                     CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1,
#                     DISABLE_TELEMETRY=1, CLAUDE_CODE_MAX_RETRIES=0,
#                     IS_SANDBOX=1, RAYMOND_CLAUDE; it unsets CLAUDECODE,
#                     CLAUDE_CODE_OAUTH_TOKEN and other Claude variables.
#                     Called inside a test body instead, it gives that test
#                     a mock (and HOME) of its own, stopped when the body ends.
#   e2e_oauth         switch to OAuth ("subscriber") auth: needed for the
#                     "You've hit your session limit" wording of `limit`
#   e2e_apikey        switch back to API-key auth
#   mock_log          the path of the mock's request log (JSON lines)
#   mock_requests     the number of requests logged so far
#   claude_p ARGS...  the real CLI: claude -p --output-format stream-json
#                     --verbose --dangerously-skip-permissions ARGS </dev/null
#                     (put `--` before the prompt)
#   jsonl FILE EXPR   for each JSON line d of FILE, print the JavaScript
#                     expression EXPR (strings raw, others as JSON), skipping
#                     undefined, null and false: jsonl out 'd.type=="result" && d.result'
#                     (print a boolean with String(...): false is skipped)
#   result_of FILE    the result text of a stream-json output file
#   result_check FILE EXPR
#                     require the JavaScript expression EXPR to be true of
#                     the last `result` line r of FILE (stream-json); on
#                     failure print EXPR and that line:
#                     result_check out 'r.is_error && r.api_error_status == 529'
#   new_uuid          a random UUID (for --session-id)
#   same GOT WANT     require GOT = WANT; print both otherwise
#
# Variables after e2e_setup: E2E_DIR (this folder), E2E_ROOT (the mock's
# folder under TEST_ROOT), MOCK_PORT, MOCK_PID, MOCK_LOG, RAYMOND_CLAUDE.

E2E_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
E2E_CLAUDE_VERSION=2.1.197

if ! declare -F test_expect_success >/dev/null; then
	. "$E2E_DIR/../cli/lib.sh"
fi

MOCK_PID=
MOCK_LOG=
MOCK_PORT=
E2E_ROOT=
_e2e_prev_exit=
_e2e_own_root=
_e2e_claude=

# Stop the mock this shell started (only that pid).
e2e_stop_mock() {
	if [ -n "$MOCK_PID" ]; then
		kill "$MOCK_PID" 2>/dev/null
		wait "$MOCK_PID" 2>/dev/null
		MOCK_PID=
	fi
	return 0
}

# True once the mock has printed its port (then in MOCK_PORT) or exited.
mock_started() {
	MOCK_PORT=$(sed -n 's/^PORT \([0-9][0-9]*\)$/\1/p' "$E2E_ROOT/mock.port" 2>/dev/null)
	[ -n "$MOCK_PORT" ] || ! kill -0 "$MOCK_PID" 2>/dev/null
}

_e2e_exit() {
	e2e_stop_mock
	if [ -n "$_e2e_own_root" ]; then
		rm -rf "$_e2e_own_root"
	fi
	if [ -n "$_e2e_prev_exit" ]; then
		eval "$_e2e_prev_exit"
	fi
}

e2e_setup() {
	# Once per script: a second call may come after HOME has changed,
	# and setup.sh finds its cache through HOME.
	if [ -z "$_e2e_claude" ]; then
		_e2e_claude=$("$E2E_DIR/setup.sh") ||
			{ echo "e2e_setup: tests/e2e/setup.sh failed" >&2; return 1; }
	fi
	if [ -n "$MOCK_PID" ]; then
		echo "e2e_setup: a mock is already running (pid $MOCK_PID)" >&2
		return 1
	fi

	# Chain the EXIT trap set before (tests/cli/lib.sh's) after ours.  In a
	# subshell that trap belongs to the parent shell and must not run here.
	local prev
	prev=$(trap -p EXIT)
	if [ -n "$prev" ] && [ "$BASH_SUBSHELL" -eq 0 ]; then
		eval "set -- $prev"
		_e2e_prev_exit=$3
	fi
	trap _e2e_exit EXIT

	local root=${TEST_ROOT:-}
	if [ -z "$root" ] || [ ! -d "$root" ]; then
		root=$(mktemp -d "${TMPDIR:-/tmp}/raymond-e2e.XXXXXX") || return 1
		_e2e_own_root=$root
	fi
	E2E_ROOT=$(mktemp -d "$root/e2e.XXXXXX") || return 1
	MOCK_LOG=$E2E_ROOT/mock.jsonl
	mkdir -p "$E2E_ROOT/home/tmp" || return 1

	node "$E2E_DIR/mockapi.js" --log "$MOCK_LOG" --ppid "$BASHPID" \
		>"$E2E_ROOT/mock.port" 2>"$E2E_ROOT/mock.err" &
	MOCK_PID=$!
	wait_until 60 mock_started >/dev/null
	if [ -z "$MOCK_PORT" ]; then
		echo "e2e_setup: mockapi.js printed no port (waited up to 60 s):" >&2
		cat "$E2E_ROOT/mock.err" >&2
		e2e_stop_mock
		return 1
	fi

	# Whatever the caller's environment says about Claude, use the mock.
	unset CLAUDECODE CLAUDE_CODE_ENTRYPOINT CLAUDE_CODE_SSE_PORT \
		CLAUDE_CODE_OAUTH_TOKEN ANTHROPIC_AUTH_TOKEN ANTHROPIC_MODEL \
		ANTHROPIC_SMALL_FAST_MODEL ANTHROPIC_DEFAULT_OPUS_MODEL \
		ANTHROPIC_DEFAULT_SONNET_MODEL ANTHROPIC_DEFAULT_HAIKU_MODEL \
		CLAUDE_CODE_USE_BEDROCK CLAUDE_CODE_USE_VERTEX CLAUDE_CODE_USE_FOUNDRY \
		CLAUDE_CONFIG_DIR API_TIMEOUT_MS
	export ANTHROPIC_BASE_URL="http://127.0.0.1:$MOCK_PORT"
	export ANTHROPIC_API_KEY=test
	export HOME="$E2E_ROOT/home"
	export TMPDIR="$E2E_ROOT/home/tmp"
	export CLAUDE_CODE_TMPDIR="$E2E_ROOT/home/tmp"
	export CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1
	export DISABLE_TELEMETRY=1
	export CLAUDE_CODE_MAX_RETRIES=0
	export IS_SANDBOX=1
	export RAYMOND_CLAUDE="$_e2e_claude"
	export MOCK_LOG MOCK_PORT
}

# OAuth ("subscriber") mode: the CLI words a `limit` step as
# "You've hit your session limit · resets <time>" only with an OAuth token
# and NO API key (a set ANTHROPIC_API_KEY wins over the token).  Any token
# text works against the mock.  The default model is then claude-sonnet-5.
e2e_oauth() {
	unset ANTHROPIC_API_KEY
	export CLAUDE_CODE_OAUTH_TOKEN=sk-ant-oat01-mock
}

e2e_apikey() {
	unset CLAUDE_CODE_OAUTH_TOKEN
	export ANTHROPIC_API_KEY=test
}

mock_log() { echo "$MOCK_LOG"; }

mock_requests() {
	if [ -f "$MOCK_LOG" ]; then wc -l <"$MOCK_LOG" | tr -d ' '; else echo 0; fi
}

claude_p() {
	"$RAYMOND_CLAUDE" -p --output-format stream-json --verbose \
		--dangerously-skip-permissions "$@" </dev/null
}

jsonl() {
	node -e '
const fs = require("fs");
const f = new Function("d", "return (" + process.argv[2] + ");");
for (const line of fs.readFileSync(process.argv[1], "utf8").split("\n")) {
	if (!line.trim()) continue;
	let d;
	try { d = JSON.parse(line); } catch (e) { continue; }
	const v = f(d);
	if (v === undefined || v === null || v === false) continue;
	process.stdout.write((typeof v === "string" ? v : JSON.stringify(v)) + "\n");
}' "$1" "$2"
}

result_of() { jsonl "$1" 'd.type == "result" && d.result'; }

result_check() {
	node -e '
const fs = require("fs");
const [file, expr] = process.argv.slice(1);
let r = null;
for (const line of fs.readFileSync(file, "utf8").split("\n")) {
	try { const d = JSON.parse(line); if (d && d.type === "result") r = d; } catch (e) {}
}
if (!r) { console.log("no result line in " + file); process.exit(1); }
if (!new Function("r", "return (" + expr + ");")(r)) {
	console.log("result_check failed: " + expr);
	console.log(JSON.stringify(r));
	process.exit(1);
}' "$1" "$2"
}

new_uuid() { node -p 'require("crypto").randomUUID()'; }

same() {
	[ "$1" = "$2" ] && return 0
	printf 'got:  %s\nwant: %s\n' "$1" "$2"
	return 1
}
