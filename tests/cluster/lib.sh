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
#   slurm_workflow N CMD   wf/START.sh forking N workers to wf/WORK.sh,
#                          each running CMD, on the slurm launcher

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

# slurm_workflow N CMD: START.sh forks N workers (items 1..N) to WORK.sh on
# the slurm launcher and joins them in JOINED.sh; WORK.sh runs CMD (a
# shell snippet; $RAYMOND_INPUT is the item) and then ends with
# <result>done ITEM</result>.
slurm_workflow() {
	local n=$1 cmd=$2 i
	state START.sh <<-EOS
	i=1
	while [ \$i -le $n ]; do
		echo "<fork launcher=\"slurm\" next=\"JOINED\" input=\"\$i\">WORK</fork>"
		i=\$((i + 1))
	done
	EOS
	state WORK.sh <<-EOS
	$cmd
	echo "<result>done \$RAYMOND_INPUT</result>"
	EOS
	state JOINED.sh <<-\EOS
	echo "<result>joined</result>"
	EOS
}
