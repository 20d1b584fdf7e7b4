#!/bin/bash
# list and status read files anyone with write access to the project can
# plant under .raymond/: a FIFO in place of a run's state file or lock is
# reported, never opened in a way that waits for a writer; and the text of
# a state file reaches the terminal with its control characters shown, not
# obeyed.
. "$(dirname "$0")/lib.sh"

# A run that failed, so list has something to show: its id in $id.
failed_run() {
	state START.sh <<-\EOS &&
	exit 3
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	id=$(run_id)
}

# within60 CMD...: CMD, killed after 60 s if it is still running then
# (SIGKILL: a process blocked in open(2) restarts it after a SIGTERM), so
# a hang fails the test instead of stopping the suite.
within60() { timeout -s KILL 60 "$@"; }

test_expect_success 'a FIFO planted as a run'"'"'s state file: list and status end at once and say so' '
	failed_run &&
	mkfifo .raymond/state/planted.json &&
	within60 "$RAYMOND" list >out 2>err &&
	grep -q "^$id  *failed " out &&
	grep -q "^planted  *unreadable  cannot read '"'"'$PWD/.raymond/state/planted.json'"'"': it is not a regular file (a FIFO)$" out &&
	expect_status 1 within60 "$RAYMOND" status planted 2>err &&
	grep -qF "it is not a regular file (a FIFO)" err
'

test_expect_success 'a FIFO planted as the lock of a running run: list ends at once' '
	failed_run &&
	sed -i "s/\"status\":\"failed\"/\"status\":\"running\"/" ".raymond/state/$id.json" &&
	rm -f ".raymond/state/$id.lock" &&
	mkfifo ".raymond/state/$id.lock" &&
	within60 "$RAYMOND" list >out 2>err &&
	grep -q "^$id  *interrupted " out
'

test_expect_success 'control characters in a state file'"'"'s workflow are shown by list, not sent to the terminal' '
	failed_run &&
	sed -i "s|\"workflow\":\"[^\"]*\"|\"workflow\":\"x\\\\u001b]0;owned\\\\u0007y\"|" ".raymond/state/$id.json" &&
	grep -qF "\\u001b]0;owned" ".raymond/state/$id.json" &&
	raymond list >out 2>err &&
	grep -q "^$id " out &&
	! grep -q "$(printf "\033")" out &&
	! grep -q "$(printf "\007")" out
'

test_done
