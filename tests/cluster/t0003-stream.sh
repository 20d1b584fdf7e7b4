#!/bin/bash
# Output of a Slurm worker streams back while the job runs: a <print> line
# shows on raymond's stdout before the worker ends, as a local child's does.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'a worker'"'"'s lines arrive while its Slurm job still runs' '
	export WORK_DIR=$PWD &&
	fan_out 1 slurm &&
	state W.sh <<-\EOS
	echo "<print>first line from worker $item</print>"
	echo "more text" >&2
	until [ -e "$WORK_DIR/go" ]; do [ -d "$WORK_DIR" ] || exit 1; sleep 0.1; done
	echo "<print>second line from worker $item</print>"
	echo "<result>w$item</result>"
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	wait_for_line out "^first line from worker 1$" &&
	# The job is still running and has not printed its second line.
	test "$(ray_jobs_in RUNNING | wc -l)" -eq 1 &&
	! grep -q "second line" out &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = "first line from worker 1
second line from worker 1
parent done" &&
	wait_no_jobs
'

test_done
