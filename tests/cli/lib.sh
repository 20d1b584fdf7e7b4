# tests/cli/lib.sh - helpers for the CLI tests (sourced by tests/cli/t*.sh).
#
#   . "$(dirname "$0")/lib.sh"
#   test_expect_success 'title' '
#       state START.sh <<-\EOS &&
#       echo "<result>ok</result>"
#       EOS
#       raymond wf >out &&
#       grep -x ok out
#   '
#   test_done
#
# Each test runs in a fresh directory with `set -e`; `raymond` runs the
# binary under test ($RAYMOND).  A failing test prints its output.

: "${RAYMOND:?RAYMOND must name the binary under test}"
TEST_NAME=$(basename "$0" .sh)
TEST_ROOT=$(mktemp -d "${TMPDIR:-/tmp}/raymond-$TEST_NAME.XXXXXX")
trap 'rm -rf "$TEST_ROOT"' EXIT
test_count=0
test_failed=0
# No user's config file changes what the tests see (docs/config.md).
export XDG_CONFIG_HOME="$TEST_ROOT/xdg-config"

# A function, so `raymond ... &` puts a subshell in the background: use
# "$RAYMOND" directly when the test needs the pid of raymond itself, on a
# line of its own (`a && "$RAYMOND" wf &` backgrounds the whole list).
raymond() { "$RAYMOND" "$@"; }

# state NAME: write workflow state wf/NAME from stdin.
state() { mkdir -p wf && cat >"wf/$1"; }

# expect_status CODE CMD...: run CMD and require exit status CODE.
expect_status() {
	want=$1; shift
	set +e; "$@"; got=$?; set -e
	if [ "$got" != "$want" ]; then
		echo "expected exit status $want, got $got: $*"
		return 1
	fi
}

# The id of the only run in this test directory.
run_id() { ls .raymond/state | sed -n 's/\.json$//p' | head -1; }

# stopped_run ID: run ID of the workflow folder ./ID, which a RunStart
# hook stops at its start (exit status 3), so it is saved as stopped.
stopped_run() {
	mkdir -p "$1" &&
	printf "echo \"<result>x</result>\"\n" >"$1/START.sh" &&
	cat >"$1/hooks.lua" <<-\EOS &&
	return { RunStart = function() return { continue = false, stopReason = "not today" } end }
	EOS
	expect_status 3 raymond "$1" --workflow-id "$1" --quiet 2>/dev/null
}

# The only run's state file.  After raymond ends it holds the whole state;
# after a kill -9 the latest transitions may be only in its journal, so
# read the state then with state_json.
state_file() { echo ".raymond/state/$(run_id).json"; }

# The only run's state as a resume would read it (state file and journal).
state_json() { "$RAYMOND" --status "$(run_id)" --json; }

# The fault library (tests/fault/faultfs.c), for LD_PRELOAD; a sanitizer
# build must accept a library loaded before its runtime.
SHIM="$(dirname "$RAYMOND")/tests/faultfs.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

# chain: a workflow wf/STEP.sh of 10 steps from --input 1, each logged to
# ./chain.log; the last prints the result "done 10".
chain() {
	state STEP.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "step $n" >>"$CHAIN_LOG"
	if [ "$n" -ge 10 ]; then echo "<result>done $n</result>"; else echo "<goto input=\"$((n + 1))\">STEP</goto>"; fi
	EOS
	export CHAIN_LOG=$PWD/chain.log
}

# Waiting.  A test waits for an event (a file, a line, a process gone),
# never for a stretch of time: these poll every 20 ms up to a ceiling of
# SECONDS (default 60), far above what the event takes even on a loaded
# machine, and say what they waited for when it never came.

# wait_until SECONDS CMD...: run CMD until it succeeds, up to SECONDS.
wait_until() {
	local limit=$1 end
	shift
	end=$(( ${EPOCHREALTIME//[.,]/} + limit * 1000000 ))
	until "$@"; do
		if [ "${EPOCHREALTIME//[.,]/}" -ge "$end" ]; then
			echo "waited ${limit} s for: $*"
			return 1
		fi
		sleep 0.02
	done
}

# wait_for_file PATH [SECONDS]: until PATH exists.
wait_for_file() { wait_until "${2:-60}" test -e "$1"; }

# wait_for_line FILE REGEX [SECONDS]: until a line of FILE matches the
# extended regular expression REGEX.
wait_for_line() { wait_until "${3:-60}" grep -Eqs -- "$2" "$1"; }

# wait_for_exit PID [SECONDS]: until process PID (not necessarily a child
# of this shell) has ended.
wait_for_exit() { wait_until "${2:-60}" not_running "$1"; }

# is_running PID: the process exists and has not ended.  A zombie has
# ended, whenever its reaper gets to it (orphans go to PID 1, which may be
# slow to reap in a container).  It starts no process, so a loop of checks
# stays fast on a loaded machine.
is_running() {
	local stat
	[ -n "$1" ] && { read -r stat <"/proc/$1/stat"; } 2>/dev/null || return 1
	case ${stat##*) } in
	Z* | X*) return 1 ;;
	esac
}
not_running() { ! is_running "$1"; }

# pids_with_arg REGEX: the processes one of whose arguments is all of
# REGEX (grep -x), one pid a line, e.g. those naming a spool folder.
pids_with_arg() {
	local f
	for f in /proc/[0-9]*/cmdline; do
		tr '\0' '\n' 2>/dev/null <"$f" | grep -qx -- "$1" &&
			{ f=${f#/proc/}; echo "${f%/cmdline}"; }
	done
	return 0
}

# now_ms: the wall clock in milliseconds, to measure how long an event took.
now_ms() { echo $(( ${EPOCHREALTIME//[.,]/} / 1000 )); }

# two_step: a workflow wf/ of START.sh -> B.sh -> result "b"; B.sh
# leaves a mark (b-ran) when it runs.
two_step() {
	state START.sh <<-\EOS
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS
	echo b >>b-ran
	echo "<result>b</result>"
	EOS
}

# record_piece FILE STEP PIECE: the data of PIECE of STEP in the debug
# record FILE (src/record.h), byte for byte; several such pieces (stdout
# chunks) one after the other.
record_piece() {
	LC_ALL=C awk -v step="$2" -v piece="$3" '
	NR == 1 { left = -1; next }
	left < 0 { split($0, h, " "); want = h[2] == step && h[3] == piece; left = h[4] + 1; next }
	{
		left -= length($0) + 1
		if (want) printf "%s%s", $0, (left > 0 ? "\n" : "")
		if (left <= 0) left = -1
	}' "$1"
}

test_expect_success() {
	title=$1 body=$2
	test_count=$((test_count + 1))
	dir="$TEST_ROOT/$test_count"
	mkdir -p "$dir"
	if (cd "$dir" && set -e && eval "$body") >"$dir.log" 2>&1; then
		echo "PASS $TEST_NAME: $title"
	else
		echo "FAIL $TEST_NAME: $title"
		sed 's/^/    /' "$dir.log"
		test_failed=$((test_failed + 1))
	fi
}

test_done() {
	[ "$test_failed" -eq 0 ]
}

# use_fake: markdown states run the fake Claude Code CLI ($FAKE), its state
# in ./fake.
FAKE=$(dirname "$RAYMOND")/tests/fake-claude
use_fake() {
	mkdir -p fake &&
	export RAYMOND_CLAUDE="$FAKE" FAKE_CLAUDE_DIR=$PWD/fake
}

# calls N: the fake was invoked exactly N times.
calls() {
	got=$(cat fake/log.jsonl 2>/dev/null | wc -l) &&
	[ "$got" -eq "$1" ] || { echo "expected $1 invocations, got $got:"; cat fake/log.jsonl; return 1; }
}
