#!/bin/bash
# tests/run.sh itself, on a tree of made-up test files: a line of progress
# per file, the summary line last, the slowest file first, and a file that
# hangs stopped at the ceiling (with what it started) and named as a
# failure.
. "$(dirname "$0")/lib.sh"

# A tree with tests/run.sh and the test files given as NAME=BODY.
tree() {
	mkdir -p tree/tests/cli build/tests
	cp "$TESTS_TOP/tests/run.sh" tree/tests/run.sh
	for f in "$@"; do
		printf '%s\n' "${f#*=}" >"tree/tests/cli/${f%%=*}"
	done
}

# runner [VAR=VALUE...]: run the tree's tests into out; a runner that does
# not end within 120 s is itself a failure.
runner() {
	env "$@" timeout 120 bash tree/tests/run.sh build >out 2>&1
}

test_expect_success 'a hanging file is stopped at TEST_FILE_SECONDS and named as a failure' '
	tree "t0001-ok.sh=echo PASS ok" \
	     "t0002-hangs.sh=sleep 300 & echo \$! >$PWD/child; echo \$\$ >$PWD/shell; echo PASS first; wait" &&
	expect_status 1 runner TEST_FILE_SECONDS=2 &&
	cat out &&
	grep -qx "FAIL cli/t0002-hangs.sh: still running after 2 s (TEST_FILE_SECONDS), stopped" out &&
	grep -q "^\[[ 0-9]*/2\] cli/t0002-hangs.sh: 1 passed, 1 failed, " out &&
	grep -q "^\[[ 0-9]*/2\] cli/t0001-ok.sh: 1 passed, 0 failed, " out &&
	test "$(tail -n 1 out)" = "2 passed, 1 failed" &&
	wait_for_exit "$(cat shell)" &&
	wait_for_exit "$(cat child)"
'

test_expect_success 'SIGTERM to the runner stops the files it runs, with what they started' '
	tree "t0001-hangs.sh=sleep 300 & echo \$! >$PWD/child; echo \$\$ >$PWD/shell.tmp; mv $PWD/shell.tmp $PWD/shell; wait" &&
	{ bash tree/tests/run.sh build >out 2>&1 & } &&
	runner=$! &&
	wait_for_file shell &&
	kill -TERM $runner &&
	expect_status 130 wait $runner &&
	test "$(tail -n 1 out)" = interrupted &&
	wait_for_exit "$(cat shell)" &&
	wait_for_exit "$(cat child)"
'

test_expect_success 'a file that exits non-zero without FAIL is a failure that names it' '
	tree "t0001-crash.sh=echo PASS before; exit 3" &&
	expect_status 1 runner &&
	grep -qx "FAIL cli/t0001-crash.sh: exited with status 3" out &&
	test "$(tail -n 1 out)" = "1 passed, 1 failed"
'

test_expect_success 'files run slowest first by the last run, a file never timed before them' '
	tree "t0001-fast.sh=echo PASS a" "t0002-slow.sh=echo PASS b" "t0003-new.sh=echo PASS c" &&
	printf "%s\n" "1.0 cli/t0001-fast.sh" "50.0 cli/t0002-slow.sh" >build/test-times &&
	runner TEST_JOBS=1 &&
	grep "^\[" out | sed "s/^\[ *\([0-9]*\)\/3\] \([^:]*\):.*/\1 \2/" >order &&
	printf "%s\n" "1 cli/t0003-new.sh" "2 cli/t0002-slow.sh" "3 cli/t0001-fast.sh" | diff - order &&
	test "$(tail -n 1 out)" = "3 passed, 0 failed" &&
	test "$(wc -l <build/test-times)" = 3 &&
	grep -q " cli/t0003-new.sh$" build/test-times
'

test_done
