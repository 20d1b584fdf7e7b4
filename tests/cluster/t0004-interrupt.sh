#!/bin/bash
# Ctrl-C during a fan-out on Slurm: raymond cancels its jobs by name
# (scancel, which lets each task'"'"'s TERM handler run), waits for them,
# and exits; within 10 s of the signal the queue holds none of its jobs
# and no follower process is left.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'SIGINT to raymond during a fan-out of 20: squeue empty within 10 s, raymond exits' '
	export WORK_DIR=$PWD &&
	fan_out 20 slurm &&
	state W.sh <<-\EOS
	echo "$item" >>"$WORK_DIR/started.log"
	while [ -d "$WORK_DIR" ]; do sleep 1; done
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	wait_until 60 count_is 20 lines_matching started.log . &&
	test "$(ray_job_count)" -eq 20 &&
	sent=$(now_ms) &&
	kill -INT $pid &&
	wait_until 10 no_jobs &&
	gone=$(now_ms) &&
	echo "queue empty $((gone - sent)) ms after SIGINT" &&
	wait_for_exit $pid 30 &&
	{ wait $pid; status=$?; } || { status=$?; } &&
	cat err &&
	test "$status" -eq 130 &&
	no_followers &&
	grep -E "raymond (--)?resume" err
'

test_done
