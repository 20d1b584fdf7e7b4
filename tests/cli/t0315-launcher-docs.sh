#!/bin/bash
# The launcher configurations docs/cluster.md shows are taken from the
# page itself and used: the example config loads and lists its
# launchers; the Kubernetes Job spool template (its config, scripts and
# Job spec) runs a state through a fake kubectl that starts the Job's
# script here, with the follower replaying its output and status.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/launch-lib.sh"

DOC=$TESTS_TOP/docs/cluster.md

# doc_block HEADING N: the N-th fenced block after the line HEADING.
doc_block() {
	awk -v h="$1" -v n="$2" '
		$0 == h { on = 1; next }
		on && /^```/ { if (inside) { inside = 0; if (++seen == n) exit; next } inside = 1; next }
		on && inside && seen == n - 1 { print }
	' "$DOC"
}

# kjob_setup: the Kubernetes Job template's config, scripts and Job spec,
# as docs/cluster.md shows them, in this project.
kjob_setup() {
	H="### A Kubernetes Job through a spool template" &&
	mkdir -p .raymond &&
	doc_block "$H" 1 >.raymond/config.yaml &&
	doc_block "$H" 2 >kjob-submit.sh &&
	doc_block "$H" 3 >kjob-status.sh &&
	doc_block "$H" 4 >job.yaml
}

test_expect_success 'the example config of "Configuring launchers" loads, every launcher listed' '
	mkdir -p .raymond &&
	doc_block "## Configuring launchers" 1 >.raymond/config.yaml &&
	grep -q "^  launchers:" .raymond/config.yaml &&
	raymond config >out &&
	grep -qx "launchers.gpu = base slurm (.raymond/config.yaml:4)" out &&
	grep -q "^launchers.kube = base kubernetes " out &&
	grep -q "^launchers.runner = run: template " out &&
	grep -q "^launchers.batch = submit: template " out &&
	test "$(grep -c "^launchers\." out)" = 6
'

test_expect_success 'the Kubernetes Job template of docs/cluster.md runs a state as a Job' '
	kjob_setup &&
	grep -q "kind: Job" job.yaml &&
	export FAKE_KUBECTL_LOG=$PWD/k.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "in the pod: $RAYMOND_AGENT_ID" >"$OUT/ran"
	echo "<print>from the job</print>"
	echo "<result>job done</result>"
	EOS
	raymond wf --launcher kjob >out 2>err &&
	test "$(tail -1 out)" = "job done" &&
	grep -qx "from the job" out &&
	test "$(cat ran)" = "in the pod: main" &&
	grep -qx create k.log &&
	grep -q "^  name: \"ray-main-[0-9a-f]\{8\}\"$" k.log.jobs/spec &&
	! test -e ".raymond/spool/$(run_id)"
'

test_expect_success 'a failing state in the Job fails the run with its status' '
	kjob_setup &&
	export FAKE_KUBECTL_LOG=$PWD/k.log &&
	state START.sh <<-\EOS &&
	echo "went wrong" >&2
	exit 4
	EOS
	expect_status 1 raymond wf --launcher kjob 2>err &&
	grep -q "script exited with status 4" err &&
	grep -q "went wrong" err
'

test_expect_success 'kill -9 of raymond while the Job runs: the resume attaches to it, which runs once' '
	kjob_setup &&
	export FAKE_KUBECTL_LOG=$PWD/k.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo started >>"$OUT/started"
	while test -d "$OUT/hold"; do sleep 0.05; done
	echo "<result>once</result>"
	EOS
	mkdir hold &&
	true
	"$RAYMOND" wf --launcher kjob --quiet >/dev/null 2>&1 &
	pid=$! &&
	wait_for_file started &&
	kill -9 $pid &&
	wait $pid || true
	rmdir hold &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = once &&
	test "$(cat started)" = started &&
	test "$(grep -cx create k.log)" = 1
'

test_done
