#!/bin/bash
# A fan-out on the slurm launcher: 20 workers forked with
# <fork launcher="slurm"> run as 20 batch jobs at once, each with the
# environment a local worker gets, and their join gathers every result.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'a fan-out of 20 workers runs as 20 Slurm jobs and joins' '
	export WORK_DIR=$PWD &&
	fan_out 20 slurm join &&
	state W.sh <<-\EOS &&
	echo "$item ${SLURM_JOB_ID:-no-job} $RAYMOND_AGENT_ID" >>"$WORK_DIR/work.log"
	until [ -e "$WORK_DIR/go" ]; do [ -d "$WORK_DIR" ] || exit 1; sleep 0.1; done
	echo "<result>r$item</result>"
	EOS
	before=$(submissions)
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	stop_on_exit $pid
	# All 20 are in the queue and running at the same time, under
	# raymond'"'"'s job names.
	wait_until 60 count_is 20 running_jobs &&
	ray_jobs_in RUNNING >names &&
	grep -Ec "^ray-main-w[0-9]+-[0-9a-f]{8}$" names | grep -x 20 &&
	test "$(sort -u names | wc -l)" -eq 20 &&
	wait_for_line work.log "^20 " &&
	touch go &&
	wait $pid &&
	cat err &&
	test "$(cat out)" = "parent done" &&
	# Each worker ran once, in a Slurm job of its own.
	test "$(wc -l <work.log)" -eq 20 &&
	test "$(cut -d" " -f2 work.log | grep -Ec "^[0-9]+$")" -eq 20 &&
	test "$(cut -d" " -f2 work.log | sort -u | wc -l)" -eq 20 &&
	test $(( $(submissions) - before )) -eq 20 &&
	joined_ok 20 &&
	wait_no_jobs &&
	no_followers &&
	# The spool folders go with the completed run.
	test -z "$(find .raymond/spool -mindepth 1 2>/dev/null)"
'

test_done
