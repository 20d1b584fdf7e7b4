#!/bin/bash
# The slurm launcher (docs/cluster.md) on the fake Slurm of tests/fake/slurm,
# which runs each job on this machine: a fan-out of workers forked with
# launcher="slurm" runs as jobs and joins; a kill -9 of raymond in the
# middle of the fan-out, then a resume, completes with each worker's side
# effect exactly once; a submit Slurm refuses is an error naming the
# launcher, resumable.
. "$(dirname "$0")/lib.sh"

export PATH="$TESTS_TOP/tests/fake/slurm:$PATH"
# Each test's jobs are recorded in its own folder, ./slurm; every fake job
# still running when the file ends is killed.
slurm_cleanup() {
	for f in "$TEST_ROOT"/*/slurm/jobs/*.pid; do
		[ -e "$f" ] && kill -KILL -- "-$(cat "$f")" 2>/dev/null
	done
	rm -rf "$TEST_ROOT"
}
trap slurm_cleanup EXIT

# fan_out N: START forks N workers on slurm, joined by SUM; each worker
# appends its item to $OUT/done once, waiting for $OUT/go first when it
# exists as a directory.
fan_out() {
	export OUT=$PWD SLURM_FAKE_DIR=$PWD/slurm &&
	state START.sh <<-EOS &&
	for i in \$(seq $1); do echo "<fork next=\"END\" join=\"SUM\" launcher=\"slurm\" item=\"w\$i\">W</fork>"; done
	EOS
	state W.sh <<-\EOS &&
	echo "$item $RAYMOND_AGENT_ID $SLURM_JOB_ID" >>"$OUT/started"
	while test -d "$OUT/hold"; do sleep 0.05; done
	echo "$item" >>"$OUT/done"
	echo "<result>$item</result>"
	EOS
	state SUM.sh <<-\EOS &&
	n=$(grep -o '"status":"ok"' "$RAYMOND_RESULTS_FILE" | wc -l)
	echo "<result>joined $n</result>"
	EOS
	state END.sh <<-\EOS
	echo "<result>parent done</result>"
	EOS
}

# lines FILE N: FILE has N lines.
lines() { test -e "$1" && test "$(wc -l <"$1")" = "$2"; }

test_expect_success 'a fan-out of workers with launcher="slurm" runs as Slurm jobs and joins' '
	fan_out 5 &&
	raymond wf >out 2>err &&
	grep -q "join of 5 workers (wait all): 5 ok" err &&
	test "$(sort done | tr "\n" " ")" = "w1 w2 w3 w4 w5 " &&
	test "$(ls "$SLURM_FAKE_DIR"/jobs/*.name | wc -l)" = 5 &&
	! grep -q " $" started &&
	! test -e ".raymond/spool/$(run_id)"
'

# follower_of BIN: a fan-out of one worker, run by the raymond binary BIN;
# while the worker is held, the first two arguments of its follower's
# command line go to ./argv (the follower's copy holding its watch names
# the same folder: either will do), then the run ends.
follower_of() {
	local pid p ok=0
	rm -rf .raymond started done && mkdir hold || return 1
	"$1" wf --quiet >/dev/null 2>&1 &
	pid=$!
	wait_until 60 lines started 1 &&
	p=$(pids_with_arg "$PWD/\.raymond/spool/[^/]*/[^/]*" | head -1) &&
	tr '\0' '\n' <"/proc/$p/cmdline" | head -2 | tr '\n' ' ' >argv || ok=1
	rmdir hold
	wait $pid && return $ok
}

test_expect_success 'the follower is raymond-launch-follow beside raymond; a lone copy of raymond follows with its own launch-follow' '
	fan_out 1 &&
	follower_of "$RAYMOND" &&
	test "$(cut -d" " -f1 argv)" = "$(realpath "$RAYMOND")-launch-follow" &&
	mkdir solo &&
	cp "$RAYMOND" solo/raymond &&
	follower_of solo/raymond &&
	test "$(cut -d" " -f1-2 argv)" = "$(realpath solo/raymond) launch-follow" &&
	test "$(cat done)" = w1
'

# killed_mid_fan_out N: fan_out N with the workers held, raymond killed
# with -9 once all N jobs have started; ./hold is still there.
killed_mid_fan_out() {
	local pid
	fan_out "$1" && mkdir hold || return 1
	"$RAYMOND" wf --quiet >/dev/null 2>&1 &
	pid=$!
	wait_until 60 lines started "$1" || return 1
	kill -9 $pid
	wait $pid || true
}

test_expect_success 'kill -9 of raymond mid-fan-out, then resume: each worker ran exactly once' '
	killed_mid_fan_out 4 &&
	rmdir hold &&
	wait_until 60 lines done 4 &&
	raymond resume "$(run_id)" >out 2>err &&
	grep -q "join of 4 workers (wait all): 4 ok" err &&
	test "$(sort done | tr "\n" " ")" = "w1 w2 w3 w4 " &&
	test "$(wc -l <started)" = 4 &&
	test "$(ls "$SLURM_FAKE_DIR"/jobs/*.name | wc -l)" = 4
'

test_expect_success 'kill -9 while the jobs still run: the resume attaches to them and they finish once' '
	killed_mid_fan_out 3 &&
	true
	"$RAYMOND" resume "$(run_id)" >out 2>err &
	rpid=$! &&
	wait_for_line err "resuming run" &&
	rmdir hold &&
	wait $rpid &&
	grep -q "join of 3 workers (wait all): 3 ok" err &&
	test "$(wc -l <started)" = 3 &&
	test "$(wc -l <done)" = 3
'

test_expect_success 'a resume whose spool folder was lost asks the cluster before it submits: a running job is not submitted twice' '
	killed_mid_fan_out 1 &&
	rm -rf .raymond/spool/"$(run_id)"/* &&
	true
	"$RAYMOND" resume "$(run_id)" >out 2>err &
	rpid=$! &&
	wait_for_line err "resuming run" &&
	rmdir hold &&
	{ wait $rpid || true; } &&
	test "$(cat done)" = w1 &&
	test "$(ls "$SLURM_FAKE_DIR"/jobs/*.name | wc -l)" = 1
'

test_expect_success 'Ctrl-C during a fan-out cancels the jobs: squeue lists none of them, and the resume completes' '
	fan_out 3 &&
	mkdir hold &&
	true
	"$RAYMOND" wf >out 2>err &
	pid=$! &&
	wait_until 60 lines started 3 &&
	test "$(squeue --noheader | wc -l)" = 3 &&
	kill -INT $pid &&
	expect_status 130 wait $pid &&
	test -z "$(squeue --noheader)" &&
	! test -e done &&
	rmdir hold &&
	raymond resume "$(run_id)" >out 2>err &&
	grep -q "join of 3 workers (wait all): 3 ok" err &&
	test "$(wc -l <done)" = 3
'

test_expect_success 'a job gets what its launcher passes and nothing else of raymond environment: sbatch starts with PATH and Slurm own variables' '
	export OUT=$PWD SLURM_FAKE_DIR=$PWD/slurm &&
	mkdir -p .raymond &&
	printf "raymond:\n  launchers:\n    lean:\n      base: slurm\n      env: [PATH, KEPT]\n" >.raymond/config.yaml &&
	state START.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: lean
	# ---
	echo "kept=${KEPT-unset} outer=${OUTER_SECRET-unset} job=${SLURM_JOB_ID:+set}" >seen
	echo "<result>ok</result>"
	EOS
	KEPT=k1 OUTER_SECRET=s3cret raymond wf --quiet >out &&
	test "$(cat out)" = ok &&
	test "$(cat seen)" = "kept=k1 outer=unset job=set"
'

test_expect_success 'a markdown state runs the Claude CLI as a Slurm job, the prompt in the spool folder' '
	use_fake &&
	export SLURM_FAKE_DIR=$PWD/slurm &&
	mkdir -p wf &&
	printf -- "---\nlauncher: {name: slurm, cpus: 2}\n---\nMOCK: reply <result>from the cluster</result>" >wf/START.md &&
	raymond wf --quiet >out &&
	test "$(cat out)" = "from the cluster" &&
	calls 1 &&
	test "$(ls slurm/jobs/*.name | wc -l)" = 1
'

test_expect_success 'a node without the claude program: an error naming the launcher and the node, resumable' '
	use_fake &&
	export SLURM_FAKE_DIR=$PWD/slurm &&
	mkdir -p wf &&
	printf -- "---\nlauncher: slurm\n---\nMOCK: reply <result>x</result>" >wf/START.md &&
	RAYMOND_CLAUDE=$PWD/no-claude-here expect_status 1 raymond wf 2>err &&
	grep -q "launcher slurm: $PWD/no-claude-here not found on node $(uname -n) (PATH=" err &&
	grep -q "raymond --resume" err &&
	calls 0
'

test_expect_success 'a submit Slurm refuses fails the state naming the launcher; the resume runs it' '
	export OUT=$PWD SLURM_FAKE_DIR=$PWD/slurm &&
	state START.sh <<-\EOS &&
	#!/bin/bash
	# ---
	# launcher: {name: slurm, partition: gpux}
	# ---
	echo ran >>"$OUT/ran"
	echo "<result>ok</result>"
	EOS
	SLURM_FAKE_SBATCH_FAIL="invalid partition specified: gpux" expect_status 1 raymond wf 2>err &&
	grep -q "launcher slurm: submit failed (exit 1): sbatch: error: invalid partition specified: gpux" err &&
	! test -e ran &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = ok &&
	test "$(cat ran)" = ran
'

test_done
