#!/bin/bash
# bench/cluster.sh BUILD_DIR: what raymond costs while it holds many Slurm
# jobs.  A fan-out of WORKERS (default 50) workers, each a script that
# sleeps SLEEP seconds (default 20), runs on the slurm launcher with
# --max-parallel 0, so all are submitted at once; the same fan-out runs
# again on the local launcher as the baseline.  Printed:
#   - raymond's processor time over the whole run (utime + stime of
#     raymond and of every child it waited for, the followers and the
#     sbatch/squeue/scancel they ran: cutime + cstime of a shell that
#     waited for raymond, from /proc), as a share of one core over the
#     run's wall time;
#   - the same while all the jobs are running (the hold): the sum of
#     utime + stime + cutime + cstime of raymond and its live descendants,
#     read from /proc when every worker has started and again SLEEP/2
#     seconds later, over that interval.
# The target is under 10% of a core for 50 jobs.  The Slurm daemons' own
# time is not raymond's and is not counted.
#
# It needs a running Slurm: the one SLURM_CONF names when `sinfo` answers,
# else it starts a private one with tests/cluster/slurm-up.sh and stops it
# at the end.  bench/run.sh runs it only when Slurm is up.
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
workers=${WORKERS:-50}
sleep_s=${SLEEP:-20}
tck=$(getconf CLK_TCK)
work=$(mktemp -d "${TMPDIR:-/tmp}/raymond-bench-cluster.XXXXXX")
chmod 711 "$work"
own=
finish() {
	[ -n "$own" ] && sh "$top/tests/cluster/slurm-down.sh" "$own"
	rm -rf "$work"
}
trap finish EXIT
if ! sinfo --noheader >/dev/null 2>&1; then
	own="$work/slurm"
	eval "$(sh "$top/tests/cluster/slurm-up.sh" "$own")"
fi

# ticks PID: utime + stime + cutime + cstime of PID and of its live
# descendants, in clock ticks.
ticks() {
	local pids=$1 all=$1 next p
	while [ -n "$pids" ]; do
		next=
		for p in $pids; do
			next="$next $(cat "/proc/$p/task/$p/children" 2>/dev/null)"
		done
		pids=$(echo $next)
		all="$all $pids"
	done
	for p in $all; do
		sed 's/.*) //' "/proc/$p/stat" 2>/dev/null
	done | awk '{ t += $12 + $13 + $14 + $15 } END { print t + 0 }'
}

# fan LAUNCHER: run the fan-out on LAUNCHER in a folder of its own; print
# "WALL_MS CPU_TICKS HOLD_MS HOLD_TICKS".
fan() {
	local d="$work/$1" pid t0 t1 a b ta tb
	mkdir -p "$d/wf" && cd "$d"
	echo "for i in \$(seq $workers); do echo \"<fork launcher=\\\"$1\\\" next=\\\"DONE\\\" item=\\\"\$i\\\">W</fork>\"; done" >wf/START.sh
	echo "touch \"$d/started-\$item\"; sleep $sleep_s; echo \"<result>w\$item</result>\"" >wf/W.sh
	echo 'echo "<result>done</result>"' >wf/DONE.sh
	# The shell waits for raymond, then its own cutime + cstime hold
	# raymond's and every descendant's that was waited for.
	bash -c 't0=${EPOCHREALTIME//[.,]/}; "$0" wf --quiet --max-parallel 0 >/dev/null 2>err || { cat err >&2; exit 1; }
		t1=${EPOCHREALTIME//[.,]/}
		read -r s </proc/$$/stat; set -- ${s##*) }
		echo $(( (t1 - t0) / 1000 )) $(( ${14} + ${15} )) >result' "$ray" &
	pid=$!
	until [ "$(ls "$d" | grep -c '^started-')" -ge "$workers" ]; do
		kill -0 $pid 2>/dev/null || { wait $pid; return 1; }
		sleep 0.1
	done
	ta=${EPOCHREALTIME//[.,]/}
	a=$(ticks $pid)
	sleep $((sleep_s / 2))
	tb=${EPOCHREALTIME//[.,]/}
	b=$(ticks $pid)
	wait $pid
	echo "$(cat result) $(( (tb - ta) / 1000 )) $((b - a))"
	cd "$work"
}

read -r sw sc shw shc <<<"$(fan slurm)"
read -r lw lc lhw lhc <<<"$(fan local)"
awk -v n="$workers" -v tck="$tck" -v sw="$sw" -v sc="$sc" -v shw="$shw" -v shc="$shc" \
    -v lw="$lw" -v lc="$lc" -v lhw="$lhw" -v lhc="$lhc" 'BEGIN {
	printf "%-40s %12s %12s\n", "benchmark", "slurm", "local"
	printf "%-40s %10.1f s %10.1f s\n", "fan-out of " n " sleeping workers, wall", sw / 1000, lw / 1000
	printf "%-40s %10.2f s %10.2f s\n", "  raymond + followers, processor time", sc / tck, lc / tck
	printf "%-40s %10.2f %% %10.2f %%\n", "  share of one core over the run", 100 * sc / tck / (sw / 1000), 100 * lc / tck / (lw / 1000)
	printf "%-40s %10.2f %% %10.2f %%\n", "  share of one core while holding " n, 100 * shc / tck / (shw / 1000), 100 * lhc / tck / (lhw / 1000)
}'
