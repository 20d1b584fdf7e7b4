#!/bin/bash
# The test cluster itself: a plain batch job runs and leaves the queue, and
# slurm-up.sh / slurm-down.sh start and stop a cluster of their own,
# idempotently, leaving no daemon and no job process behind.
. "$(dirname "$0")/lib.sh"
cluster_setup

test_expect_success 'a batch job submitted with sbatch runs and leaves the queue' '
	mkdir job &&
	printf "#!/bin/sh\necho ran \$SLURM_JOB_ID >ran\n" >job/task.sh &&
	chmod +x job/task.sh &&
	id=$(sbatch --parsable --export=NONE --chdir="$PWD/job" --output="$PWD/job/slurm.out" \
		--job-name=ray-smoke "$PWD/job/task.sh") &&
	case $id in ""|*[!0-9]*) echo "sbatch printed \"$id\", not a job id"; false ;; esac &&
	wait_for_file job/ran &&
	grep -x "ran $id" job/ran &&
	wait_no_jobs
'

# daemon_pid FOLDER NAME FILE: the pid in FOLDER/FILE if it names a live
# process called NAME.
daemon_pid() {
	local pid
	pid=$(cat "$1/$3" 2>/dev/null) || return 1
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ] && is_running "$pid" && echo "$pid"
}

test_expect_success 'slurm-up and slurm-down: idempotent, a second cluster beside, nothing left' '
	own=$(mktemp -d "${TMPDIR:-/tmp}/raymond-slurm.XXXXXX") &&
	chmod 711 "$own" &&
	trap "sh \"\$CLUSTER_TOP/slurm-down.sh\" \"$own\"; rm -rf \"$own\"" EXIT &&
	first=$(sh "$CLUSTER_TOP/slurm-up.sh" "$own") &&
	pids=$(for d in munged:munge/munged.pid slurmctld:slurmctld.pid slurmd:slurmd.pid; do
		daemon_pid "$own" "${d%%:*}" "${d#*:}" || echo "${d%%:*} not running"; done) &&
	echo "$pids" &&
	! echo "$pids" | grep "not running" &&
	again=$(sh "$CLUSTER_TOP/slurm-up.sh" "$own") &&
	test "$first" = "$again" &&
	pids2=$(for d in munged:munge/munged.pid slurmctld:slurmctld.pid slurmd:slurmd.pid; do
		daemon_pid "$own" "${d%%:*}" "${d#*:}"; done) &&
	test "$pids" = "$pids2" &&
	! grep -q "$(grep ^SlurmctldPort= "$SLURM_CONF")" "$own/slurm.conf" &&
	(
		eval "$first" &&
		mkdir job &&
		printf "#!/bin/sh\necho \$\$ >pid\nexec sleep 300\n" >job/task.sh &&
		chmod +x job/task.sh &&
		sbatch --parsable --export=NONE --chdir="$PWD/job" --output=/dev/null \
			--job-name=ray-own "$PWD/job/task.sh" &&
		wait_for_file job/pid
	) &&
	task=$(cat job/pid) &&
	is_running "$task" &&
	sh "$CLUSTER_TOP/slurm-down.sh" "$own" &&
	for pid in $pids $task; do wait_for_exit "$pid" 10 || exit 1; done &&
	sh "$CLUSTER_TOP/slurm-down.sh" "$own" &&
	test ! -e "$own/slurmctld.pid" &&
	# The shared cluster was not touched.
	sinfo --noheader --format=%T | grep -Eq "^(idle|mixed|allocated)"
'

test_done
