#!/bin/sh
# tests/cluster/slurm-down.sh - stop the Slurm that slurm-up.sh started in
# DIR (default $RAYMOND_SLURM_DIR, else /tmp/raymond-slurm): cancel its
# jobs, then stop its three daemons.  Idempotent: with nothing running it
# does nothing.
#
# A daemon is found only by its pid file in DIR, and only if
# /proc/PID/comm names the daemon expected, so nothing else (another
# cluster, a reused pid) is ever signalled.  SIGTERM, then SIGKILL after
# 10 s.  The state, spool and logs stay for a look after a failure;
# slurm-up.sh removes them when it starts the next cluster.
set -u
dir=${1:-${RAYMOND_SLURM_DIR:-/tmp/raymond-slurm}}
[ -d "$dir" ] || exit 0
dir=$(cd "$dir" && pwd)
. "$(cd "$(dirname "$0")" && pwd)/slurm-lib.sh"
export SLURM_CONF="$dir/slurm.conf"

# stop_daemon NAME PIDFILE
stop_daemon() {
	if daemon_alive "$1" "$2"; then
		pid=$(cat "$2")
		kill -TERM "$pid" 2>/dev/null
		i=0
		while proc_live "$pid" && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
		if proc_live "$pid"; then
			echo "slurm-down.sh: $1 ($pid) ignored SIGTERM for 10 s; SIGKILL" >&2
			kill -KILL "$pid" 2>/dev/null
		fi
	fi
	rm -f "$2"
}

# Jobs first, while the controller can still cancel them (15 s at most):
# a job's processes belong to slurmd's steps, which stopping the daemons
# alone would leave running.
if daemon_alive slurmctld "$dir/slurmctld.pid" && daemon_alive munged "$dir/munge/munged.pid"; then
	ids=$(squeue --noheader --format=%i 2>/dev/null)
	if [ -n "$ids" ]; then
		# shellcheck disable=SC2086
		scancel $ids 2>/dev/null
		i=0
		while [ -n "$(squeue --noheader --format=%i 2>/dev/null)" ] && [ $i -lt 150 ]; do
			sleep 0.1; i=$((i + 1))
		done
	fi
fi

stop_daemon slurmd "$dir/slurmd.pid"
stop_daemon slurmctld "$dir/slurmctld.pid"
stop_daemon munged "$dir/munge/munged.pid"
exit 0
