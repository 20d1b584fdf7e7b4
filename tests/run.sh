#!/bin/bash
# Run every test and print one summary line, last: "N passed, N failed".
#
#   tests/run.sh BUILD_DIR
#
# Unit tests (BUILD_DIR/tests/test_*), Lua tests (tests/lua/test_*.lua,
# through BUILD_DIR/tests/luarun), CLI tests (tests/cli/t*.sh, against
# BUILD_DIR/raymond) and end-to-end tests with the real Claude Code CLI
# (tests/e2e/t*.sh, which install it once, see tests/e2e/setup.sh) each
# print PASS/FAIL lines; this script counts them.
# A test program that exits non-zero without printing FAIL counts as one
# failure, so a crash is never silent.
#
# Each file prints one line when it ends, so a long run shows progress:
#   [ 7/64] cli/t0109-signals.sh: 2 passed, 0 failed, 3.1 s
# TEST_JOBS files run at once (default: the number of cores, at least 2),
# the slowest first, so that a long file does not end the run alone: each
# file's time is kept in BUILD_DIR/test-times for the next run (a file
# never timed counts as slow).  A file still running after
# TEST_FILE_SECONDS (default 1800) is stopped, SIGTERM to its process
# group and SIGKILL 10 s later, and counts as a failure that names it.
#
# Under `make check` the sanitizers write their reports to files here
# rather than to a test's stderr, where a test expecting exit status 1
# could swallow them; every report counts as a failure.
set -u
if [ "${BASH_VERSINFO[0]}" -lt 5 ] || { [ "${BASH_VERSINFO[0]}" = 5 ] && [ "${BASH_VERSINFO[1]}" -lt 1 ]; }; then
	echo "tests/run.sh: needs bash 5.1 or later (wait -n -p), this is $BASH_VERSION" >&2
	exit 1
fi
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
cores=$(nproc 2>/dev/null || echo 2)
jobs=${TEST_JOBS:-$((cores > 2 ? cores : 2))}
ceiling=${TEST_FILE_SECONDS:-1800}
times="$build/test-times"
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export RAYMOND="$build/raymond" TESTS_TOP="$top"
mkdir -p "$logs/san" "$logs/result" "$logs/pid"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$logs/san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$logs/san/ubsan:print_stacktrace=1"

# Every test file as "KIND PATH NAME"; NAME is what progress lines and
# BUILD_DIR/test-times call it.
list() {
	for t in "$top"/tests/e2e/t*.sh; do [ -f "$t" ] && echo "cli $t e2e/${t##*/}"; done
	for t in "$top"/tests/cli/t*.sh; do [ -f "$t" ] && echo "cli $t cli/${t##*/}"; done
	for t in "$top"/tests/lua/test_*.lua; do [ -f "$t" ] && echo "lua $t lua/${t##*/}"; done
	for t in "$build"/tests/test_*; do [ -x "$t" ] && echo "unit $t unit/${t##*/}"; done
}

# The list, slowest first by the last run's times; a file with no time
# yet goes first.
by_time() {
	awk -v times="$times" '
	BEGIN { while ((getline line < times) > 0) { split(line, f, " "); secs[f[2]] = f[1] } }
	{ print ($3 in secs ? secs[$3] : 1e9), $0 }' | sort -s -k1,1gr | cut -d" " -f2-
}

# run_one KIND PATH NAME: run one file under the ceiling; its output goes
# to a log and "PASSED FAILED SECONDS" to result/NAME.  The pid of its
# `timeout`, which stops the file's whole process group, is in pid/NAME.
run_one() {
	local kind=$1 t=$2 name=$3 key=${3//\//_} log rc start tenths secs
	log="$logs/$key.log"
	case $kind in
	unit) set -- "$t" ;;
	lua) set -- "$build/tests/luarun" "$top/tests/lua/testing.lua" "$t" ;;
	cli) set -- bash "$t" ;;
	esac
	start=${EPOCHREALTIME//[.,]/}
	timeout -k 10 "$ceiling" "$@" >"$log" 2>&1 </dev/null &
	echo $! >"$logs/pid/$key"
	wait $!
	rc=$?
	tenths=$(( (${EPOCHREALTIME//[.,]/} - start) / 100000 ))
	secs=$((tenths / 10)).$((tenths % 10))
	if { [ $rc -eq 124 ] || [ $rc -eq 137 ]; } && [ "${secs%.*}" -ge "$ceiling" ]; then
		echo "FAIL $name: still running after $ceiling s (TEST_FILE_SECONDS), stopped" >>"$log"
	elif [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; then
		echo "FAIL $name: exited with status $rc" >>"$log"
	fi
	echo "$(grep -a -c '^PASS' "$log") $(grep -a -c '^FAIL' "$log") $secs" >"$logs/result/$key"
}

# On SIGINT or SIGTERM, stop the files that are running, each with its
# process group, and end.
stop() {
	local f
	trap - INT TERM
	for f in "$logs"/pid/*; do kill -TERM "$(cat "$f")" 2>/dev/null; done
	wait
	echo "interrupted"
	exit 130
}
trap stop INT TERM

# Wait for one running file to end and print its progress line.
declare -A running=()
done_count=0
reap() {
	local pid name p f s
	wait -n -p pid
	name=${running[$pid]}
	unset "running[$pid]"
	done_count=$((done_count + 1))
	read -r p f s <"$logs/result/${name//\//_}"
	rm -f "$logs/pid/${name//\//_}"
	printf '[%*d/%d] %s: %d passed, %d failed, %s s\n' \
		${#total} "$done_count" "$total" "$name" "$p" "$f" "$s"
	echo "$s $name" >>"$logs/times"
}

list | by_time >"$logs/list"
total=$(wc -l <"$logs/list")
echo "running $total test files, $jobs at a time; each is stopped after $ceiling s"
while read -r kind t name; do
	while [ ${#running[@]} -ge "$jobs" ]; do reap; done
	run_one "$kind" "$t" "$name" &
	running[$!]=$name
done <"$logs/list"
while [ ${#running[@]} -gt 0 ]; do reap; done
mv "$logs/times" "$times" 2>/dev/null

passed=$(cat "$logs"/*.log 2>/dev/null | grep -a -c '^PASS')
failed=$(cat "$logs"/*.log 2>/dev/null | grep -a -c '^FAIL')
for f in "$logs"/*.log; do
	if grep -q '^FAIL' "$f"; then
		echo "---- $(basename "$f" .log)"
		cat "$f"
	fi
done
for f in "$logs"/san/*; do
	[ -e "$f" ] || continue
	echo "---- sanitizer report $(basename "$f")"
	cat "$f"
	failed=$((failed + 1))
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
