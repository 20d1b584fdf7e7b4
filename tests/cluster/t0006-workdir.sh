#!/bin/bash
# A working directory missing on the node: the task checks it before the
# command runs (Slurm itself would run the command in /tmp instead) and the
# state fails with a clear error naming the state, the launcher and the
# directory; the run is resumable, and after the directory is back a
# resume completes, the command having run once.
#
# On one machine the directory is made to vanish between the submission
# and the start of the job: the state asks Slurm to hold its job
# (args: [--hold]), the test removes the directory and releases the job.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'the working directory is gone on the node: clear error before the command, resumable' '
	export MARK=$PWD/mark &&
	state START.sh <<-\EOS &&
	mkdir -p sub
	echo "<reset cd=\"sub\">REMOTE</reset>"
	EOS
	state REMOTE.sh <<-\EOS
	#!/bin/bash
	# ---
	# launcher: {name: slurm, args: [--hold]}
	# ---
	echo "ran in $PWD" >>"$MARK"
	echo "<result>remote ok</result>"
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	wait_until 60 held_job_id_ready &&
	rmdir sub &&
	release_held &&
	{ wait $pid; status=$?; } || status=$? &&
	cat err &&
	test "$status" -eq 1 &&
	grep -F "REMOTE.sh" err &&
	grep -F "launcher slurm: working directory $PWD/sub does not exist on node" err &&
	grep -E "raymond (--)?resume $(run_id)" err &&
	test ! -e mark &&
	wait_no_jobs &&
	mkdir sub
	"$RAYMOND" --resume "$(run_id)" --quiet >out2 2>err2 &
	pid=$!
	stop_on_exit $pid
	release_held &&
	wait $pid &&
	test "$(cat out2)" = "remote ok" &&
	test "$(cat mark)" = "ran in $PWD/sub" &&
	wait_no_jobs
'

test_done
