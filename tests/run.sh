#!/bin/bash
# Run every test and print one summary line: "N passed, N failed".
#
#   tests/run.sh BUILD_DIR
#
# Unit tests (BUILD_DIR/tests/test_*), Lua tests (tests/lua/test_*.lua,
# through BUILD_DIR/tests/luarun), CLI tests (tests/cli/t*.sh, against
# BUILD_DIR/raymond) and end-to-end tests with the real Claude Code CLI
# (tests/e2e/t*.sh, which install it on first use) each print PASS/FAIL
# lines; this script counts them.
# A test program that exits non-zero without printing FAIL counts as one
# failure, so a crash is never silent.  TEST_JOBS sets how many test
# files run at once (default 2).
#
# Under `make check` the sanitizers write their reports to files here
# rather than to a test's stderr, where a test expecting exit status 1
# could swallow them; every report counts as a failure.
set -u
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
jobs=${TEST_JOBS:-2}
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
export RAYMOND="$build/raymond" TESTS_TOP="$top"
mkdir -p "$logs/san"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$logs/san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$logs/san/ubsan:print_stacktrace=1"

list() {
	for t in "$build"/tests/test_*; do [ -x "$t" ] && echo "unit $t"; done
	for t in "$top"/tests/lua/test_*.lua; do [ -f "$t" ] && echo "lua $t"; done
	for t in "$top"/tests/e2e/t*.sh; do [ -f "$t" ] && echo "cli $t"; done
	for t in "$top"/tests/cli/t*.sh; do [ -f "$t" ] && echo "cli $t"; done
}

run_one() {
	kind=$1 t=$2
	log="$logs/$(echo "$t" | tr / _).log"
	case $kind in
	unit) "$t" >"$log" 2>&1 ;;
	lua) "$build/tests/luarun" "$top/tests/lua/testing.lua" "$t" >"$log" 2>&1 ;;
	cli) bash "$t" >"$log" 2>&1 ;;
	esac
	rc=$?
	if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$log"; then
		echo "FAIL $(basename "$t"): exited with status $rc" >>"$log"
	fi
}

list >"$logs/list"
while read -r kind t; do
	while [ "$(jobs -pr | wc -l)" -ge "$jobs" ]; do sleep 0.05; done
	run_one "$kind" "$t" &
done <"$logs/list"
wait

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
