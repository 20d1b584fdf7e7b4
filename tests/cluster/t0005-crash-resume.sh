#!/bin/bash
# kill -9 of raymond in the middle of a fan-out on Slurm: the jobs go on
# without it (its followers end on their parent's death without cancelling
# anything), and `raymond --resume` completes the run with each worker's
# side effect exactly once: workers that finished while raymond was down
# have their output taken from the spool, the ones still running are
# attached to and waited for, and none is submitted again.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'kill -9 mid-fan-out of 20, then --resume: every worker ran exactly once' '
	export WORK_DIR=$PWD &&
	fan_out 20 slurm join &&
	# Odd workers wait for go-odd, even ones for go-even.
	state W.sh <<-\EOS &&
	echo "start $item" >>"$WORK_DIR/work.log"
	until [ -e "$WORK_DIR/go-$((item % 2 ? 0 : 1))" ]; do [ -d "$WORK_DIR" ] || exit 1; sleep 0.1; done
	echo "end $item" >>"$WORK_DIR/work.log"
	echo "<print>output of $item</print>"
	echo "<result>r$item</result>"
	EOS
	before=$(submissions)
	"$RAYMOND" wf --quiet >out1 2>err1 &
	pid=$!
	stop_on_exit $pid
	wait_until 60 count_is 20 lines_matching work.log "^start" &&
	kill -9 $pid && { wait $pid 2>/dev/null || true; } &&
	# The followers end with raymond; the jobs do not.
	wait_until 10 no_followers &&
	test "$(ray_job_count)" -eq 20 &&
	# The odd ones finish while raymond is down.
	touch go-0 &&
	wait_until 60 count_is 10 ray_job_count &&
	test "$(grep -c "^end" work.log)" -eq 10
	"$RAYMOND" --resume "$(run_id)" --quiet >out2 2>err2 &
	pid=$!
	stop_on_exit $pid
	# The even ones are still running when the resume attaches to them.
	test "$(ray_jobs_in RUNNING | wc -l)" -eq 10 &&
	touch go-1 &&
	wait $pid &&
	cat err2 &&
	test "$(tail -1 out2)" = "parent done" &&
	# Every worker started and ended once, and its output was read once.
	for i in $(seq 20); do
		test "$(grep -cx "start $i" work.log)" -eq 1 &&
		test "$(grep -cx "end $i" work.log)" -eq 1 &&
		test "$(cat out1 out2 | grep -cx "output of $i")" -eq 1 || { cat work.log out1 out2; exit 1; }
	done &&
	test $(( $(submissions) - before )) -eq 20 &&
	joined_ok 20 &&
	wait_no_jobs &&
	no_followers
'

test_done
