# tests/cluster/lib.sh - helpers for the cluster tests (tests/cluster/t*.sh),
# which run raymond's launchers against a real single-node Slurm.
#
#   . "$(dirname "$0")/lib.sh"     # also sources tests/cli/lib.sh
#   cluster_setup                  # once, at the top level of the script
#   test_expect_success 'title' '...'
#   test_done
#
# cluster_setup uses the cluster named by $RAYMOND_SLURM_DIR when it runs
# (tests/cluster/run.sh starts one for all the files), else starts one of
# its own under TEST_ROOT and stops it when the script ends, so a file also
# runs alone:
#
#   RAYMOND=$PWD/build/raymond TESTS_TOP=$PWD bash tests/cluster/t0001-smoke.sh
#
# After it, SLURM_CONF points the Slurm commands at the cluster, and
# CLUSTER_DIR is the cluster's folder (its logs are in CLUSTER_DIR/log).
#
# Functions:
#   cluster_setup          see above
#   ray_jobs               the names of the cluster's jobs that raymond
#                          submitted (ray-...), one a line, pending,
#                          running or completing
#   wait_no_jobs [SECONDS] until ray_jobs is empty (default 60)
#   cancel_ray_jobs        scancel every ray-... job, so one test's
#                          failure leaves nothing to the next
#   ray_job_count          how many of them there are
#   ray_jobs_in STATE      those in Slurm state STATE (PENDING, RUNNING...)
#   submissions            how many jobs the controller took since it started
#   followers, no_followers
#                          the follower processes of the run in the
#                          current directory (pids), or that there are none
#   release_held           wait for a held (pending) job of raymond's and
#                          release it (scontrol release)
#   count_is N CMD...      CMD prints N (for wait_until)
#   running_jobs           how many of raymond's jobs are running
#   lines_matching F RE    how many lines of F match RE
#   fan_out, joined_ok     a fan-out workflow and its join's check
#   stop_on_exit PID       SIGTERM to raymond PID when the test body ends
#
# A worker that waits for a file also gives up once the test's folder is
# gone ([ -d "$WORK_DIR" ]), so a failed test leaves no script spinning.

CLUSTER_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$CLUSTER_TOP/../cli/lib.sh"
CLUSTER_DIR=
_cluster_own=

cluster_setup() {
	local prev
	if [ -n "${RAYMOND_SLURM_DIR:-}" ] && [ -s "$RAYMOND_SLURM_DIR/slurm.conf" ]; then
		CLUSTER_DIR=$RAYMOND_SLURM_DIR
		export SLURM_CONF="$CLUSTER_DIR/slurm.conf"
	else
		# Not under TEST_ROOT: munged wants every folder above its
		# socket searchable by all, and TEST_ROOT is private.
		CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/raymond-slurm.XXXXXX") &&
		chmod 711 "$CLUSTER_DIR" || exit 1
		_cluster_own=1
		prev=$(trap -p EXIT | sed "s/^trap -- '\(.*\)' EXIT$/\1/")
		# shellcheck disable=SC2064
		trap "sh '$CLUSTER_TOP/slurm-down.sh' '$CLUSTER_DIR'; rm -rf '$CLUSTER_DIR'; $prev" EXIT
		local up
		up=$(sh "$CLUSTER_TOP/slurm-up.sh" "$CLUSTER_DIR") || {
			echo "FAIL $TEST_NAME: the test cluster did not start"
			exit 1
		}
		eval "$up"
	fi
	export CLUSTER_DIR
	# The commands raymond runs must be the real ones, never the fakes of
	# `make test`.
	case $(command -v sbatch) in
	*/tests/fake/*) echo "FAIL $TEST_NAME: PATH names the fake sbatch"; exit 1 ;;
	esac
}

ray_jobs() { squeue --noheader --format=%j | grep '^ray-' || true; }

no_jobs() { [ -z "$(ray_jobs)" ]; }
wait_no_jobs() {
	wait_until "${1:-60}" no_jobs || { squeue; return 1; }
}

cancel_ray_jobs() {
	local j
	for j in $(ray_jobs); do scancel --name="$j"; done
	wait_no_jobs 30
}


# ray_job_count: how many jobs of raymond's are in the queue.
ray_job_count() { ray_jobs | grep -c . || true; }

# ray_jobs_in STATE: the names of raymond's jobs in Slurm state STATE
# (PENDING, RUNNING, COMPLETING), one a line.
ray_jobs_in() {
	squeue --noheader --states="$1" --format=%j | grep '^ray-' || true
}

# submissions: how many batch jobs the controller has taken since it
# started (from its log), to tell that a step really went through Slurm.
submissions() {
	grep -c '_slurm_rpc_submit_batch_job: JobId=' "$CLUSTER_DIR/log/slurmctld.log" || true
}

# followers: the processes naming a spool folder of the runs in this
# test's directory (raymond's followers), one pid a line.
followers() { pids_with_arg "$PWD/\.raymond/spool/[^/]*/[^/]*"; }
no_followers() { [ -z "$(followers)" ]; }

# release_held: wait until one of raymond's jobs is pending (held), then
# release it.
release_held() {
	local id
	wait_until 60 held_job_id_ready || return 1
	id=$(squeue --noheader --states=PENDING --format='%i %j' | awk '$2 ~ /^ray-/ { print $1; exit }')
	scontrol release "$id"
}
held_job_id_ready() { [ -n "$(ray_jobs_in PENDING)" ]; }

# fan_out N LAUNCHER [JOIN]: wf/START.sh forks N workers (item=1..N) to
# wf/W.sh (written by the caller) on launcher LAUNCHER and goes on at
# DONE.sh, which ends with "parent done".  With JOIN (any word), the
# workers join SUM.sh, which appends its agent id to $WORK_DIR/sum.log and
# keeps the results in $WORK_DIR/results.json.
fan_out() {
	local join=
	[ -n "${3:-}" ] && join=' join=\"SUM\"'
	mkdir -p wf &&
	cat >wf/START.sh <<-EOS &&
	for i in \$(seq $1); do echo "<fork launcher=\"$2\" next=\"DONE\"$join item=\"\$i\">W</fork>"; done
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>parent done</result>"
	EOS
	state SUM.sh <<-\EOS
	echo "$RAYMOND_AGENT_ID" >>"$WORK_DIR/sum.log"
	cp "$RAYMOND_RESULTS_FILE" "$WORK_DIR/results.json"
	echo "<result>summarised</result>"
	EOS
}

# joined_ok N: results.json holds the results r1..rN of workers
# main_w1..main_wN, each ok, in fork order, and the summary ran once.
joined_ok() {
	local want= i
	for i in $(seq "$1"); do
		want="$want${want:+,}{\"agent\":\"main_w$i\",\"result\":\"r$i\",\"state\":\"W.sh\",\"status\":\"ok\"}"
	done
	test "$(cat results.json)" = "[$want]" || { echo "results.json:"; cat results.json; return 1; }
	test "$(wc -l <sum.log)" -eq 1 || { echo "sum.log:"; cat sum.log; return 1; }
}

# count_is N CMD...: CMD prints the number N (for wait_until, which runs
# CMD again each time: wait_until 60 count_is 20 running_jobs).
count_is() {
	local n=$1
	shift
	[ "$("$@")" -eq "$n" ] 2>/dev/null
}
running_jobs() { ray_jobs_in RUNNING | grep -c . || true; }
# lines_matching FILE REGEX: how many lines of FILE match REGEX (0 when
# FILE is missing).
lines_matching() { grep -Ec -- "$2" "$1" 2>/dev/null || true; }

# stop_on_exit PID: when the test body ends, however it ends, SIGTERM to
# raymond PID if it still runs, so that a failing test leaves no raymond
# (and, through its stop, no job) behind.  Call it right after starting
# raymond in the background.
stop_on_exit() {
	# shellcheck disable=SC2064
	trap "if is_running $1; then kill -TERM $1 || true; wait_for_exit $1 60 >/dev/null || true; fi" EXIT
}
