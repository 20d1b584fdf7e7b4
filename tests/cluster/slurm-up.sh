#!/bin/sh
# tests/cluster/slurm-up.sh - start a private single-node Slurm for the
# cluster tests, without systemd, and print the line that points the Slurm
# commands at it:
#
#   eval "$(sh tests/cluster/slurm-up.sh DIR)"    # export SLURM_CONF=DIR/slurm.conf
#   sbatch ...; squeue ...
#   sh tests/cluster/slurm-down.sh DIR
#
# DIR (default $RAYMOND_SLURM_DIR, else /tmp/raymond-slurm) holds
# everything: the configuration, the daemons' state, spool, logs and pid
# files, and a munge daemon of its own with its own key and socket, so the
# cluster touches no system-wide Slurm or munge.  The controller and the
# node daemon listen on two free ports from 17817 up, not Slurm's standard
# 6817/6818.
#
# Idempotent: when the daemons of DIR are already running they are kept and
# only the export line is printed again.  Otherwise the cluster starts from
# a fresh state: the old state, spool and logs are removed first, so job ids
# and jobs of an earlier run never come back.
#
# The daemons run as the user who calls this (as root, any user's jobs
# run).  The packages (slurmd slurmctld slurm-client munge) must be
# installed; `make test-cluster` installs them.
set -eu
dir=${1:-${RAYMOND_SLURM_DIR:-/tmp/raymond-slurm}}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/slurm-lib.sh"

for prog in munged slurmctld slurmd sinfo sbatch squeue scancel; do
	command -v "$prog" >/dev/null 2>&1 || {
		echo "slurm-up.sh: $prog is missing: apt-get install --no-install-recommends slurmd slurmctld slurm-client munge" >&2
		exit 1
	}
done
export SLURM_CONF="$dir/slurm.conf"

# munged refuses a socket whose folders others cannot search, all the way
# up from DIR; say which one rather than leave munged's message alone.
d=$dir
while [ "$d" != / ]; do
	case $(stat -c %A "$d") in
	*[xt]) ;;
	*) echo "slurm-up.sh: munged needs $d searchable by all (chmod o+x), or another DIR" >&2; exit 1 ;;
	esac
	d=$(dirname "$d")
done

if ! daemon_alive munged "$dir/munge/munged.pid" ||
   ! daemon_alive slurmctld "$dir/slurmctld.pid" ||
   ! daemon_alive slurmd "$dir/slurmd.pid"; then
	# Something is missing: stop whatever is left of an earlier cluster in
	# DIR and start again from nothing.
	sh "$here/slurm-down.sh" "$dir" >&2
	rm -rf "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
	mkdir -p "$dir/state" "$dir/spool" "$dir/log" "$dir/munge"
	chmod 755 "$dir"
	# munged refuses a socket folder that others cannot search.
	chmod 711 "$dir/munge"
	(umask 077 && dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 2>/dev/null)
	chmod 400 "$dir/munge/munge.key"
	munged --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" \
		--pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
		--seed-file="$dir/munge/munged.seed"

	port=$(free_port_pair 17817)
	user=$(id -un)
	# OverSubscribe: 32 jobs per core, so a fan-out of many small jobs
	# runs at once instead of queueing for whole cores.  KillWait: the
	# delay between the SIGTERM of a cancel and its SIGKILL.
	# batch_sched_delay=0: a batch job starts about 1 s after its
	# submission rather than on Slurm's default 3 s batch tick.
	# EnforcePartLimits=ALL: a request the partition can never satisfy
	# (more CPUs than the node has) fails at sbatch, as on most sites,
	# rather than pending forever.
	cat >"$dir/slurm.conf.tmp" <<EOC
ClusterName=raytest
SlurmctldHost=localhost
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=10
KillWait=5
MinJobAge=30
SchedulerParameters=batch_sched_delay=0
EnforcePartLimits=ALL
NodeName=localhost CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:32
EOC
	mv "$dir/slurm.conf.tmp" "$dir/slurm.conf"
	# -c: no state from an earlier start; -N: the node's name does not
	# depend on the machine's host name.
	slurmctld -c -i
	slurmd -c -N localhost
fi

# The node takes a moment to register; 30 s is far more than it needs.
i=0
until sinfo --noheader --format=%T 2>/dev/null | grep -Eq '^(idle|mixed|allocated)'; do
	i=$((i + 1))
	if [ $i -gt 300 ]; then
		echo "slurm-up.sh: the node did not come up within 30 s; logs in $dir/log" >&2
		exit 1
	fi
	sleep 0.1
done
echo "export SLURM_CONF='$dir/slurm.conf'"
