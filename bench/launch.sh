#!/bin/bash
# The launch overhead of a spool launch: N launches of a trivial task
# (`true`) through the follower raymond starts (raymond-launch-follow,
# else `raymond launch-follow`) with the fake Slurm of tests/fake/slurm
# (sbatch starting the spool's task.sh on this machine), against N spawns
# of `true` itself, and against the same Slurm commands run by a bash loop
# without raymond (sbatch, then waiting for the task's exit file, polled
# every 0.2 ms without a fork), one launch of each in turn: the difference
# per launch is the follower's share, what it adds to what the cluster
# costs anyway (its start included).  With perf, the follower's own
# processor time too; and the time of its `--version`, the part of the
# share that is the program's start.  Then a whole run of STEPS script
# steps on the slurm launcher (the fake) against the same run on the
# local launcher: the extra time a step, less the fake Slurm's own extra
# over a local spawn, is raymond's whole share of a launch.  Then the
# processor time of one follower waiting IDLE seconds for a running job
# (--check 10, its default), its own and that of the status commands it
# ran.  With a real Slurm on PATH (sbatch found, squeue answering), the
# first comparison against it, N_REAL launches.
#
#   bench/launch.sh BUILD_DIR   N=200, N_REAL=20, STEPS=100, IDLE=10;
#                               median of REPEAT (3)
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
# The follower raymond starts: raymond-launch-follow when it was built
# beside raymond (src/main_follow.c), else raymond launch-follow.
if [ -x "$build/raymond-launch-follow" ]; then
	follower=("$build/raymond-launch-follow")
else
	follower=("$build/raymond" launch-follow)
fi
n=${N:-200}
n_real=${N_REAL:-20}
idle=${IDLE:-10}
repeat=${REPEAT:-3}
work=$(mktemp -d)
real_path=$PATH
idle_pid=
cleanup() {
	local f
	[ -z "$idle_pid" ] || kill "$idle_pid" 2>/dev/null || true
	for f in "$work"/slurm/jobs/*.pid; do
		[ -e "$f" ] && kill -s KILL -- "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
. "$top/tests/cli/spool-lib.sh"
export SLURM_FAKE_DIR=$work/slurm
unset SLURM_FAKE_LOG SLURM_FAKE_SBATCH_FAIL SLURM_FAKE_SQUEUE_FAIL
# An fd that never has data: `read -t` on it is a sleep without a fork.
exec 3<> <(:)

ns() { echo "${EPOCHREALTIME/[.,]/}000"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# follow_argv DIR NAME: the follower's argv, as raymond's slurm launcher
# gives it for a new launch (--new: no status command before the submit),
# in the array A.
follow_argv() {
	A=("$1" --name "$2" --new
		--submit 8 sbatch --parsable "--job-name=$2" --export=ALL
		"--chdir=$1" "--output=$1/slurm.out" --open-mode=append "$1/task.sh"
		--cancel 2 scancel "--name=$2"
		--status 4 squeue --noheader "--name=$2" --format=%i)
}

# spools PREFIX COUNT: spool folders PREFIX1..PREFIXCOUNT for `true`.
spools() {
	local i
	for ((i = 1; i <= $2; i++)); do spool "$1$i" /tmp true; done
}

# start_round COUNT: COUNT starts of raymond (--version), the part of a
# launch that is the binary's loading, in nanoseconds.
start_round() {
	local t0 t1 i
	t0=$(ns)
	for ((i = 0; i < $1; i++)); do "${follower[0]}" --version >/dev/null; done
	t1=$(ns)
	echo $((t1 - t0))
}

# local_round COUNT: COUNT spawns of true, in nanoseconds.
local_round() {
	local t0 t1 i bin
	bin=$(type -P true)
	t0=$(ns)
	for ((i = 0; i < $1; i++)); do "$bin"; done
	t1=$(ns)
	echo $((t1 - t0))
}

# pairs PREFIX COUNT: COUNT launches through the follower and COUNT by
# the same Slurm commands without raymond, one of each in turn (so that a
# change of the machine's load, or of the number of jobs on record, falls
# on both), printed as "FOLLOWER_NS SCRIPT_NS".
pairs() {
	local t0 t1 t2 i d fol=0 scr=0
	spools "$1f" "$2"
	spools "$1s" "$2"
	for ((i = 1; i <= $2; i++)); do
		follow_argv "$work/$1f$i" "$1f$i"
		t0=$(ns)
		"${follower[@]}" "${A[@]}" >/dev/null
		t1=$(ns)
		d=$work/$1s$i
		sbatch --parsable "--job-name=$1s$i" --export=ALL "--chdir=$d" \
			"--output=$d/slurm.out" --open-mode=append "$d/task.sh" >"$d/job"
		until [ -e "$d/exit" ]; do read -r -t 0.0002 -u 3 || true; done
		t2=$(ns)
		fol=$((fol + t1 - t0))
		scr=$((scr + t2 - t1))
	done
	echo "$fol $scr"
}

# cpu_ms PREFIX COUNT: the follower's own processor time (perf stat -i
# counts no child) over COUNT launches, in ms; nothing without perf.
cpu_ms() {
	local i sum=0 one
	perf stat -i -e task-clock -x, true >/dev/null 2>&1 || return 0
	spools "$1" "$2"
	for ((i = 1; i <= $2; i++)); do
		follow_argv "$work/$1$i" "$1$i"
		one=$(perf stat -i -e task-clock -x, "${follower[@]}" "${A[@]}" 2>&1 >/dev/null | cut -d, -f1)
		sum=$(awk -v a="$sum" -v b="$one" 'BEGIN { print a + b }')
	done
	echo "$sum"
}

# compare LABEL COUNT: the rounds, medians of REPEAT, and the table rows.
compare() {
	local label=$1 count=$2 r loc both fol scr cpu st
	loc=$(for ((r = 0; r < repeat; r++)); do local_round "$count"; done | median)
	st=$(for ((r = 0; r < repeat; r++)); do start_round "$count"; done | median)
	both=$(for ((r = 0; r < repeat; r++)); do pairs "$label$r-" "$count"; done)
	fol=$(echo "$both" | cut -d' ' -f1 | median)
	scr=$(echo "$both" | cut -d' ' -f2 | median)
	cpu=$(cpu_ms "${label}cpu-" "$(( count < 50 ? count : 50 ))")
	FAKE_EXTRA_NS=$(( (scr - loc) / count ))
	awk -v l="$loc" -v f="$fol" -v s="$scr" -v n="$count" -v label="$label" \
	    -v cpu="$cpu" -v cn="$(( count < 50 ? count : 50 ))" -v st="$st" 'BEGIN {
		printf "%-42s %9.3f ms a launch\n", "local spawn of true", l / n / 1e6
		printf "%-42s %9.3f ms a launch  %7.1fx local\n", "launch-follow, " label " Slurm", f / n / 1e6, f / l
		printf "%-42s %9.3f ms a launch  %7.1fx local\n", label " Slurm alone (sbatch, exit)", s / n / 1e6, s / l
		printf "%-42s %9.3f ms a launch (target: 5)\n", "raymond share, " label " Slurm", (f - s) / n / 1e6
		printf "%-42s %9.3f ms\n", "  of which raymond start (--version)", st / n / 1e6
		if (cpu != "")
			printf "%-42s %9.3f ms a launch\n", "  its own processor time (perf stat -i)", cpu / cn
	}'
}

# whole_run LAUNCHER: one run of raymond through a workflow of STEPS
# script steps (each counts, then goes to itself) on LAUNCHER, in ns.
whole_run() {
	local t0 t1
	rm -rf whole/.raymond whole/count
	t0=$(ns)
	(cd whole && "$build/raymond" wf --launcher "$1" --quiet >/dev/null)
	t1=$(ns)
	echo $((t1 - t0))
}

# whole LABEL: the whole runs, local and slurm in turn, medians of REPEAT;
# the slurm run's extra time a step, less the cluster's own extra cost
# over a local spawn (from compare's figures, exported in FAKE_EXTRA_NS),
# is raymond's whole share of a launch: the spool folder written, the
# state saved with the job's name, the follower run, the folder removed.
whole() {
	local r both loc sl
	mkdir -p whole/wf
	cat >whole/wf/START.sh <<-'EOS'
	#!/bin/sh
	read -r n <count 2>/dev/null || n=0
	echo $((n + 1)) >count
	if [ $((n + 1)) -lt "$STEPS" ]; then echo "<goto>START.sh</goto>"; else echo "<result>done</result>"; fi
	EOS
	chmod +x whole/wf/START.sh
	both=$(for ((r = 0; r < repeat; r++)); do echo "$(whole_run local) $(whole_run slurm)"; done)
	loc=$(echo "$both" | cut -d' ' -f1 | median)
	sl=$(echo "$both" | cut -d' ' -f2 | median)
	awk -v l="$loc" -v s="$sl" -v n="$STEPS" -v x="$FAKE_EXTRA_NS" -v label="$1" 'BEGIN {
		printf "%-42s %9.3f ms a step\n", "a run of " n " steps, local", l / n / 1e6
		printf "%-42s %9.3f ms a step\n", "the same run, " label " Slurm", s / n / 1e6
		printf "%-42s %9.3f ms a launch (target: 5)\n", "raymond whole share, " label " Slurm", (s - l) / n / 1e6 - x / 1e6
	}'
}

PATH="$top/tests/fake/slurm:$real_path"
compare fake "$n"
export STEPS=${STEPS:-100} SLURM_FAKE_DIR
whole fake

# One follower waiting for a job for IDLE seconds.
mkdir -p idle-work
spool idle "$work/idle-work" sh -c 'while [ ! -e go ]; do sleep 1; done'
follow_argv "$work/idle" idle
"${follower[@]}" "${A[@]}" >/dev/null &
idle_pid=$!
until [ -e idle/started ]; do read -r -t 0.01 -u 3 || true; done
tick=$(getconf CLK_TCK)
before=$(cut -d' ' -f14-17 "/proc/$idle_pid/stat")
read -r -t "$idle" -u 3 || true
after=$(cut -d' ' -f14-17 "/proc/$idle_pid/stat")
touch idle-work/go
wait "$idle_pid" || true
idle_pid=
awk -v b="$before" -v a="$after" -v t="$tick" -v s="$idle" 'BEGIN {
	split(b, x, " "); split(a, y, " ")
	printf "%-40s %9.1f ms own, %.1f ms status commands, in %d s\n", "a waiting follower, processor time",
		(y[1] + y[2] - x[1] - x[2]) * 1000 / t, (y[3] + y[4] - x[3] - x[4]) * 1000 / t, s
}'

PATH=$real_path
if command -v sbatch >/dev/null 2>&1 && squeue --noheader >/dev/null 2>&1; then
	compare real "$n_real"
else
	echo "(no Slurm answering here: the comparison with a real sbatch is left out)"
fi
