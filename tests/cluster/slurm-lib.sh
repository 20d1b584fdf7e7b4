# tests/cluster/slurm-lib.sh - helpers of slurm-up.sh and slurm-down.sh
# (POSIX sh, sourced).

# proc_live PID: the process exists and is not a zombie (PID 1 of a
# container may reap an exited daemon only seconds later).
proc_live() {
	[ -r "/proc/$1/stat" ] || return 1
	st=$(sed 's/.*) //' "/proc/$1/stat" 2>/dev/null | cut -c1)
	[ -n "$st" ] && [ "$st" != Z ] && [ "$st" != X ]
}

# daemon_alive NAME PIDFILE: PIDFILE names a live process whose command
# name is NAME, so a reused pid is never taken for the daemon.
daemon_alive() {
	[ -s "$2" ] || return 1
	pid=$(cat "$2")
	case $pid in '' | *[!0-9]*) return 1 ;; esac
	[ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$1" ] && proc_live "$pid"
}

# port_busy PORT: some socket on this machine listens on TCP PORT.
port_busy() {
	hex=$(printf ':%04X ' "$1")
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p="$hex" 'index($2 " ", p) && $4 == "0A" { found = 1 } END { exit !found }'
}

# free_port_pair FROM: the first port from FROM up such that it and the
# next one are both free.
free_port_pair() {
	p=$1
	while port_busy "$p" || port_busy $((p + 1)); do p=$((p + 2)); done
	echo "$p"
}
