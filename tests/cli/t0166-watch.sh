#!/bin/bash
# raymond watch: follows a run another raymond drives, a line per change,
# until it ends, and exits with the status raymond gives that run.
. "$(dirname "$0")/lib.sh"

# gated: a workflow wf/ whose states each wait (up to 60 s) for a file:
# START.sh for go1, then it forks W.sh (waits for go2) and goes on to B.sh
# (waits for go3), whose result is "done"; B.sh exits 2 when fail exists.
gated() {
	state START.sh <<-\EOS
	for _ in $(seq 1 1200); do [ -e go1 ] && break; sleep 0.05; done
	echo "<fork next=\"B\">W</fork>"
	EOS
	state W.sh <<-\EOS
	for _ in $(seq 1 1200); do [ -e go2 ] && break; sleep 0.05; done
	echo "<result>w</result>"
	EOS
	state B.sh <<-\EOS
	for _ in $(seq 1 1200); do [ -e go3 ] && break; sleep 0.05; done
	[ -e fail ] && exit 2
	echo "<result>done</result>"
	EOS
}

# start_run ID: start wf in the background as run ID ($pid), and wait for
# its state file.
start_run() {
	"$RAYMOND" wf --workflow-id "$1" --quiet >run.out 2>run.err &
	pid=$!
	wait_for_file ".raymond/state/$1.json"
}

# start_watch ID: watch run ID in the background ($wpid), output in w.out.
start_watch() {
	"$RAYMOND" watch "$1" >w.out 2>w.err &
	wpid=$!
}

test_expect_success 'watch follows a run to its end, a line per change, and exits 0 when it completes' '
	gated &&
	start_run r1 &&
	start_watch r1 &&
	wait_for_line w.out "^watching run r1 \(wf\), cost \\\$0\.0000 of \\\$10\.00, running for [0-9]+s; Ctrl-C stops the watch, not the run$" &&
	wait_for_line w.out "^[0-9:]{8} \[main\] at START\.sh \(step [0-9]+\)$" &&
	touch go1 &&
	wait_for_line w.out "^[0-9:]{8} \[main\] -> B\.sh \(step [0-9]+\)$" &&
	wait_for_line w.out "^[0-9:]{8} \[main_w1\] started at W\.sh \(step [0-9]+\)$" &&
	touch go2 &&
	wait_for_line w.out "^[0-9:]{8} \[main_w1\] done \(step [0-9]+\)$" &&
	touch go3 &&
	expect_status 0 wait $wpid &&
	wait $pid &&
	cat w.out &&
	grep -Eq "^[0-9:]{8} \[main\] done \(step [0-9]+\)$" w.out &&
	grep -Eq "^[0-9:]{8} run completed \(step [0-9]+\)$" w.out &&
	grep -Eq "^run r1 completed: [0-9]+ steps, cost \\\$0\.0000 of \\\$10\.00, [0-9]+s$" w.out &&
	test "$(tail -n 1 w.out)" = "result: done" &&
	test ! -s w.err
'

test_expect_success 'watch exits 1 when the run fails, with its error and how to continue' '
	gated &&
	touch fail go1 go2 &&
	start_run r2 &&
	start_watch r2 &&
	touch go3 &&
	expect_status 1 wait $wpid &&
	{ wait $pid || :; } &&
	cat w.out &&
	grep -q "^run r2 failed: " w.out &&
	grep -q "^error: wf/B.sh (agent main): script exited with status 2$" w.out &&
	test "$(tail -n 1 w.out)" = "continue with: raymond resume r2"
'

test_expect_success 'watch shows the cost as it grows, and exits 3 when a hook stops the run' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: bash while [ ! -e go0 ]; do sleep 0.05; done => <goto>WAIT</goto>
	EOS
	state WAIT.sh <<-\EOS &&
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<goto>START</goto>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { PreState = function(ev)
	  if ev.state == "START.md" and ev.run.cost_usd > 0 then return { continue = false, stopReason = "enough" } end
	end }
	EOS
	"$RAYMOND" wf --workflow-id r3 --quiet >run.out 2>run.err &
	pid=$!
	wait_for_file .raymond/state/r3.json &&
	start_watch r3 &&
	wait_for_line w.out "\[main\] at START\.md" &&
	touch go0 &&
	wait_for_line w.out "^[0-9:]{8} cost \\\$0\.0[1-9][0-9]{2} of \\\$10\.00 \(step [0-9]+\)$" &&
	touch go &&
	expect_status 3 wait $wpid &&
	expect_status 3 wait $pid &&
	cat w.out &&
	grep -q "^run r3 stopped: .*cost \\\$0.0[1-9][0-9][0-9] of \\\$10.00" w.out &&
	grep -q "^error: stopped by .*hooks.lua:[0-9]*: enough$" w.out
'

test_expect_success 'watch exits 130 when the run is killed with -9, which shows as interrupted' '
	gated &&
	start_run r4 &&
	start_watch r4 &&
	wait_for_line w.out "\[main\] at START\.sh" &&
	kill -9 $pid && { wait $pid 2>/dev/null || :; } &&
	expect_status 130 wait $wpid &&
	touch go1 &&
	cat w.out &&
	grep -Eq "^[0-9:]{8} run interrupted \(step [0-9]+\)$" w.out &&
	grep -q "^run r4 interrupted: " w.out
'

test_expect_success 'watch on a run that has ended prints its summary and exits at once, with its status' '
	gated &&
	touch go1 go2 go3 &&
	raymond wf --workflow-id r5 --quiet >/dev/null &&
	raymond watch r5 >out &&
	test "$(head -n 1 out | sed "s/, [0-9]*s$//")" = "run r5 completed: 3 steps, cost \$0.0000 of \$10.00" &&
	test "$(tail -n 1 out)" = "result: done" &&
	test "$(wc -l <out)" = 2 &&
	touch fail &&
	expect_status 1 raymond wf --workflow-id r6 --quiet 2>/dev/null &&
	expect_status 1 raymond watch r6 >out &&
	grep -q "^run r6 failed: " out
'

test_expect_success 'watch on a run that does not exist is a clear error' '
	expect_status 1 raymond watch nosuch 2>err &&
	grep -q "^raymond: error: no run nosuch in .*/.raymond/state$" err &&
	grep -qx "hint: list runs with: raymond list" err &&
	expect_status 1 raymond watch 2>err &&
	grep -qx "raymond: error: no run id given" err &&
	expect_status 1 raymond watch "../x" 2>err &&
	grep -q "invalid run id" err
'

test_expect_success 'watch ends with an error when the run it follows is removed' '''
	gated &&
	start_run r8 &&
	start_watch r8 &&
	wait_for_line w.out "\[main\] at START\.sh" &&
	rm -f .raymond/state/r8.json .raymond/state/r8.journal &&
	expect_status 1 wait $wpid &&
	touch go1 go2 go3 &&
	{ wait $pid || :; } &&
	grep -qx "raymond: error: run r8 is gone: its state file was removed" w.err
'''

test_expect_success 'Ctrl-C ends the watch (exit 130) and leaves the run running' '
	gated &&
	start_run r7 &&
	start_watch r7 &&
	wait_for_line w.out "\[main\] at START\.sh" &&
	kill -INT $wpid &&
	expect_status 130 wait $wpid &&
	grep -qx "raymond: stopped watching run r7; it goes on (see: raymond status r7)" w.err &&
	! grep -q "stopping running states" w.err &&
	is_running $pid &&
	raymond list | grep -q "^r7  *running " &&
	touch go1 go2 go3 &&
	wait $pid &&
	test "$(cat run.out)" = done
'

test_done
