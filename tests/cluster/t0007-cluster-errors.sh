#!/bin/bash
# Cluster errors at submission: a partition Slurm rejects, and the
# controller being down, each stop the run with a clear error naming the
# state and the launcher and quoting Slurm; the run is resumable, and
# after the fix a resume completes, the command having run once.
. "$(dirname "$0")/lib.sh"
cluster_setup

# remote_flow LAUNCHER: START.sh goes to REMOTE.sh, which runs on
# LAUNCHER (its header's launcher: value), appends "ran" to ./mark and
# ends with "remote ok".
remote_flow() {
	export MARK=$PWD/mark &&
	state START.sh <<-\EOS &&
	echo "<goto>REMOTE</goto>"
	EOS
	printf '#!/bin/bash\n# ---\n# launcher: %s\n# ---\n%s\n%s\n' "$1" \
		'echo ran >>"$MARK"' 'echo "<result>remote ok</result>"' >wf/REMOTE.sh
}

test_expect_success 'a partition Slurm rejects: clear error, then a resume after the fix completes' '
	remote_flow "{name: slurm, partition: nosuch}" &&
	expect_status 1 raymond wf --quiet >out 2>err &&
	cat err &&
	grep -F "REMOTE.sh" err &&
	grep -F "launcher slurm: submit failed (exit 1)" err &&
	grep -F "Invalid partition name specified" err &&
	grep -E "raymond (--)?resume $(run_id)" err &&
	test ! -e mark &&
	wait_no_jobs &&
	sed -i "s/partition: nosuch/partition: debug/" wf/REMOTE.sh &&
	raymond --resume "$(run_id)" --quiet >out2 &&
	test "$(cat out2)" = "remote ok" &&
	test "$(cat mark)" = ran
'

# stop_controller: SIGTERM to this cluster's slurmctld (by its pid file,
# its name checked) and wait until it has gone.
stop_controller() {
	local pid
	pid=$(cat "$CLUSTER_DIR/slurmctld.pid") &&
	test "$(cat "/proc/$pid/comm")" = slurmctld &&
	kill -TERM "$pid" &&
	wait_for_exit "$pid" 30
}

test_expect_success 'the controller is down: clear error, then a resume once it is back completes' '
	remote_flow slurm &&
	st=0 &&
	{ stop_controller && expect_status 1 raymond wf --quiet >out 2>err || st=1; } &&
	# Whatever happened, the cluster comes back for the next tests.
	sh "$CLUSTER_TOP/slurm-up.sh" "$CLUSTER_DIR" >/dev/null &&
	cat err &&
	test $st -eq 0 &&
	grep -F "REMOTE.sh" err &&
	grep -F "launcher slurm: submit failed (exit 1)" err &&
	grep -F "Unable to contact slurm controller" err &&
	grep -E "raymond (--)?resume $(run_id)" err &&
	test ! -e mark &&
	raymond --resume "$(run_id)" --quiet >out2 &&
	test "$(cat out2)" = "remote ok" &&
	test "$(cat mark)" = ran &&
	wait_no_jobs
'

test_done
