#!/bin/bash
# raymond launch-follow under signals, against the fake Slurm: a stop
# (SIGTERM, SIGINT) cancels the job, lets the task's TERM handler run and
# leaves no job behind; SIGHUP or the death of its parent (raymond killed)
# ends the follower alone, the job goes on, and a second follower on the
# same spool attaches to it (no second submit) and gets the whole output.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

# A task that says "ready", then waits; its TERM handler notes the
# signal in ./term-seen (relative to its working directory) and exits 3.
trapping() {
	mkdir -p work &&
	spool "$1" "$PWD/work" sh -c 'trap "echo got-term >>term-seen; exit 3" TERM; echo ready; while :; do sleep 0.05; done'
}

# A task that prints "one", waits for ./go in its working directory,
# prints "two" and exits 4.
gated() {
	mkdir -p work &&
	spool "$1" "$PWD/work" sh -c 'echo one; while [ ! -e go ]; do sleep 0.05; done; echo two; exit 4'
}

for sig in TERM INT; do
	test_expect_success "SIG$sig: the job is cancelled, its TERM handler runs, the follower ends with its status, no job is left" '
		trapping s$sig && follow_args s$sig || exit 1
		"$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
		pid=$!
		wait_for_line out "^ready$" &&
		kill -'$sig' $pid &&
		t0=$(now_ms) &&
		expect_status 3 wait $pid &&
		[ $(( $(now_ms) - t0 )) -lt 15000 ] &&
		grep -x got-term work/term-seen &&
		grep -x "scancel --name=s'$sig'" "$SLURM_FAKE_LOG" &&
		! queued s'$sig' &&
		grep "CANCELLED" s'$sig'/slurm.out
	'
done

test_expect_success 'a stop to the process group of the follower while the submit runs: the submit finishes, then the job is cancelled, and none is left' '
	trapping busy && follow_args busy || exit 1
	SLURM_FAKE_SBATCH_DELAY=2 setsid "$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_for_line "$SLURM_FAKE_LOG" "^sbatch .*--job-name=busy " &&
	kill -TERM -- -$pid &&
	set +e && wait $pid; st=$? && set -e &&
	{ [ $st = 3 ] || [ $st = 143 ]; } &&
	[ "$(submits busy)" = 1 ] &&
	grep -x "scancel --name=busy" "$SLURM_FAKE_LOG" &&
	wait_until 60 eval "! queued busy"
'

test_expect_success 'a task that ignores the stop: the follower ends after --grace with 143, and Slurm kills the job' '
	mkdir work &&
	spool deaf "$PWD/work" sh -c "trap \"\" TERM; echo ready; while :; do sleep 0.05; done" &&
	follow_args deaf --grace 1 || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_for_line out "^ready$" &&
	kill -TERM $pid &&
	expect_status 143 wait $pid &&
	[ "$(grep -c "^scancel --name=deaf$" "$SLURM_FAKE_LOG")" = 1 ] &&
	wait_until 60 eval "! queued deaf"
'

test_expect_success 'SIGHUP: the follower exits 129 without cancelling; a second follower attaches and gets all' '
	gated hup && follow_args hup || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out1 2>err1 &
	pid=$!
	wait_for_line out1 "^one$" &&
	kill -HUP $pid &&
	expect_status 129 wait $pid &&
	! grep -x "scancel --name=hup" "$SLURM_FAKE_LOG" &&
	queued hup || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out2 2>err2 &
	pid=$!
	wait_for_line out2 "^one$" &&
	touch work/go &&
	expect_status 4 wait $pid &&
	printf "one\ntwo\n" >want && cmp want out2 &&
	[ "$(submits hup)" = 1 ]
'

test_expect_success 'its parent killed: the follower exits without cancelling, the job goes on' '
	gated orphan && follow_args orphan || exit 1
	sh -c "\"\$@\" >out 2>err & echo \$! >fpid; exec sleep 600" sh "$RAYMOND" launch-follow "${FARGS[@]}" &
	parent=$!
	wait_for_file fpid &&
	wait_for_line out "^one$" &&
	fpid=$(cat fpid) &&
	is_running $fpid &&
	kill -KILL $parent &&
	wait_for_exit $fpid &&
	! grep -x "scancel --name=orphan" "$SLURM_FAKE_LOG" &&
	queued orphan &&
	touch work/go &&
	expect_status 4 "$RAYMOND" launch-follow "${FARGS[@]}" >again &&
	printf "one\ntwo\n" >want && cmp want again &&
	[ "$(submits orphan)" = 1 ]
'

test_expect_success 'two followers of one running job: one submit, both get the whole output and the status' '
	gated twice && follow_args twice || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out1 2>err1 &
	p1=$!
	wait_for_line out1 "^one$" || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out2 2>err2 &
	p2=$!
	wait_for_line out2 "^one$" &&
	touch work/go &&
	expect_status 4 wait $p1 &&
	expect_status 4 wait $p2 &&
	printf "one\ntwo\n" >want && cmp want out1 && cmp want out2 &&
	[ "$(submits twice)" = 1 ]
'

test_expect_success 'a job submitted before its id was written (raymond killed then) is found by its name, not submitted again' '
	gated noid &&
	sbatch --parsable --job-name=noid --export=NONE "--chdir=$PWD/noid" "--output=$PWD/noid/slurm.out" "$PWD/noid/task.sh" >/dev/null &&
	wait_for_file noid/started && rm noid/started &&
	follow_args noid || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_for_line out "^one$" &&
	touch work/go &&
	expect_status 4 wait $pid &&
	[ "$(submits noid)" = 1 ] && [ ! -e noid/job ]
'

test_done
