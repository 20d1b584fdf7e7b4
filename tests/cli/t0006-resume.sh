#!/bin/bash
# Resuming: after errors, Ctrl-C, locks, and with bad state files.
. "$(dirname "$0")/lib.sh"

# SLOW.sh waits (in a child of its own) until go exists, then ends.
slow_workflow() {
	state START.sh <<-\EOS
	echo "<goto>SLOW</goto>"
	EOS
	state SLOW.sh <<-\EOS
	echo "ran" >>"$OLDPWD_RUNS"
	sleep 300 & echo $! >child.pid
	touch started
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	kill %1
	echo "<result>slow done</result>"
	EOS
}

test_expect_success 'SIGINT stops the run with 130, kills the state, and --resume runs it again' '
	slow_workflow &&
	export OLDPWD_RUNS=$PWD/runs
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	child=$(cat child.pid) &&
	kill -INT $pid &&
	expect_status 130 wait $pid &&
	grep -q "interrupted; continue with: raymond --resume" err &&
	grep -q "\"status\":\"interrupted\"" "$(state_file)" &&
	wait_for_exit "$child" &&
	rm -f started && touch go &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "slow done" &&
	test "$(wc -l <runs)" = 2
'

test_expect_success 'SIGTERM behaves like SIGINT' '
	slow_workflow &&
	export OLDPWD_RUNS=$PWD/runs
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	kill -TERM $pid &&
	expect_status 130 wait $pid &&
	grep -q "\"status\":\"interrupted\"" "$(state_file)"
'

test_expect_success 'a second process cannot drive the same run' '
	slow_workflow &&
	export OLDPWD_RUNS=$PWD/runs
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	expect_status 1 raymond --resume "$(run_id)" 2>err2 &&
	grep -q "being driven by another raymond process" err2 &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = "slow done"
'

test_expect_success 'a failed state runs again on --resume once fixed' '
	state START.sh <<-\EOS &&
	echo "<goto>CHECK</goto>"
	EOS
	state CHECK.sh <<-\EOS &&
	echo checked >>runs
	if [ -e fixed ]; then echo "<result>ok now</result>"; else echo "not yet" >&2; exit 3; fi
	EOS
	expect_status 1 raymond wf --quiet 2>err &&
	grep -q "exited with status 3" err &&
	grep -q "\"status\":\"failed\"" "$(state_file)" &&
	touch fixed &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "ok now" &&
	test "$(wc -l <runs)" = 2 &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

test_expect_success 'a completed run cannot be resumed' '
	state START.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >/dev/null &&
	expect_status 1 raymond --resume "$(run_id)" 2>err &&
	grep -q "already completed" err
'

test_expect_success 'a truncated state file is reported and left untouched' '
	state START.sh <<-\EOS &&
	exit 1
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	f=$(state_file) &&
	head -c 40 "$f" >trunc && cp trunc "$f" &&
	expect_status 1 raymond --resume "$(run_id)" 2>err &&
	grep -q "corrupt or truncated" err &&
	cmp trunc "$f"
'

test_expect_success 'a state file of the wrong shape is reported, naming the field' '
	state START.sh <<-\EOS &&
	exit 1
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	f=$(state_file) &&
	sed "s/\"agents\":\[/\"agents\":7,\"was\":[/" "$f" >bad &&
	grep -q "\"agents\":7" bad &&
	cp bad "$f" &&
	expect_status 1 raymond --resume "$(run_id)" 2>err &&
	grep -q "not a valid raymond state: agents should be a table" err &&
	cmp bad "$f"
'

test_expect_success 'resuming an unknown run says how to list runs' '
	expect_status 1 raymond --resume nosuchrun 2>err &&
	grep -q "no run nosuchrun" err &&
	grep -q "raymond --list" err
'

test_expect_success '--workflow-id names the run and may not be reused' '
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	raymond wf --workflow-id my-run_1 --quiet >/dev/null &&
	test -f .raymond/state/my-run_1.json &&
	expect_status 1 raymond wf --workflow-id my-run_1 2>err &&
	grep -q "already exists" err &&
	expect_status 1 raymond wf --workflow-id "bad/id" 2>err &&
	grep -q "invalid run id" err
'

test_expect_success '--list and --status describe runs' '
	state START.sh <<-\EOS &&
	echo "<call return=\"AFTER\" input=\"q\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	exit 2
	EOS
	state AFTER.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf --workflow-id r1 --quiet 2>/dev/null &&
	raymond --list >list &&
	grep -q "^r1 *failed" list &&
	raymond --status r1 >st &&
	grep -q "^Status: *failed" st &&
	grep -q "main at SUB.sh (returns to AFTER.sh)" st &&
	grep -q "input: \"q\"" st
'

test_expect_success '--list with no runs says so' '
	raymond --list >list &&
	test "$(cat list)" = "No runs found."
'

test_expect_success 'options given on --resume override the launch options' '
	state START.sh <<-\EOS &&
	if [ -e fixed ]; then sleep 300; echo "<result>x</result>"; else exit 1; fi
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	touch fixed &&
	expect_status 1 raymond --resume "$(run_id)" --timeout 1 2>err &&
	grep -q "no output for 1 seconds" err
'
test_done
