#!/bin/bash
# raymond launch-follow, the follower of a spool launch (src/cmd_follow.c),
# against the fake Slurm of tests/fake/slurm: it submits the spool's
# task.sh once, streams the task's stdout and stderr while it runs, ends
# as the task ended (its exit status, or its signal), and reports a launch
# that failed (the submit refused, the job gone without an exit status) in
# the spool's launch-error with exit status 125.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

# ends_as NAME HOW: the follower of ./NAME ends as HOW says ("exit N",
# "signal N"), its stdout in ./out.
ends_as() {
	follow_args "$1" &&
	how "$RAYMOND" launch-follow "${FARGS[@]}" >out &&
	[ "$(cat how)" = "$2" ] || { echo "$1: expected $2, got $(cat how)"; return 1; }
}

test_expect_success 'output streams while the task runs; the job is submitted once, with no environment but the spool env' '
	mkdir work &&
	export OUTER_SECRET=s3cret &&
	spool j1 "$PWD/work" sh -c "echo first; echo \"warn \$SPOOL_VAR\" >&2; while [ ! -e go ]; do sleep 0.05; done; echo second \${OUTER_SECRET-unset} \$(pwd)" &&
	follow_args j1 || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_for_line out "^first$" &&
	wait_for_line err "^warn it.s here$" &&
	is_running $pid && [ ! -e j1/exit ] &&
	touch work/go &&
	expect_status 0 wait $pid &&
	printf "first\nsecond unset %s\n" "$PWD/work" >want &&
	cmp want out &&
	[ "$(submits j1)" = 1 ] &&
	read -r host tpid jobid <j1/started &&
	[ "$jobid" = "$(cat j1/job)" ] &&
	[ "$(stat -c %a j1/job)" = 600 ] &&
	! queued j1
'

test_expect_success 'the task exit status is the follower exit status' '
	spool j2 /tmp sh -c "exit 7" &&
	ends_as j2 "exit 7" &&
	spool j3 /tmp true &&
	ends_as j3 "exit 0"
'

# named NAME: the processes naming the spool folder ./NAME (the follower,
# and the copy of it that holds its inotify watch).
named() { pids_with_arg "$PWD/$1"; }
none_named() { [ -z "$(named "$1")" ]; }

test_expect_success 'nothing of the follower outlives it: the copy holding its watch ends with it, ended by an exit or by SIGKILL' '
	mkdir work &&
	spool j2b "$PWD/work" sh -c "while [ ! -e go ]; do sleep 0.05; done" &&
	follow_args j2b || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out &
	pid=$!
	wait_for_file j2b/started &&
	[ "$(named j2b | wc -l)" = 2 ] &&
	touch work/go &&
	expect_status 0 wait $pid &&
	wait_until 30 none_named j2b &&
	rm work/go &&
	spool j2c "$PWD/work" sh -c "while [ ! -e go ]; do sleep 0.05; done" &&
	follow_args j2c || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out &
	pid=$!
	wait_for_file j2c/started &&
	kill -KILL $pid &&
	wait_until 30 none_named j2c &&
	touch work/go
'

test_expect_success 'a task killed by a signal ends the follower by the same signal, without a core; a stop signal is an exit status' '
	spool j4 /tmp sh -c "echo bye; kill -TERM \$\$" &&
	ends_as j4 "signal 15" &&
	[ "$(cat j4/exit)" = 143 ] &&
	grep -x bye out &&
	spool j5 /tmp sh -c "kill -KILL \$\$" &&
	ends_as j5 "signal 9" &&
	spool j5b /tmp sh -c "exit 134" &&
	(ulimit -c unlimited 2>/dev/null; ends_as j5b "signal 6") &&
	spool j5c /tmp sh -c "exit 147" &&
	ends_as j5c "exit 147"
'

test_expect_success 'a finished job is replayed from the spool: no submit, no question to the cluster' '
	spool j6 /tmp sh -c "echo out-line; echo err-line >&2; exit 5" &&
	follow_args j6 &&
	expect_status 5 "$RAYMOND" launch-follow "${FARGS[@]}" >out1 2>err1 &&
	before=$(wc -l <"$SLURM_FAKE_LOG") &&
	expect_status 5 "$RAYMOND" launch-follow "${FARGS[@]}" >out2 2>err2 &&
	cmp out1 out2 && cmp err1 err2 &&
	grep -x out-line out2 && grep -x err-line err2 &&
	[ "$(wc -l <"$SLURM_FAKE_LOG")" = "$before" ]
'

test_expect_success 'with --new the cluster is not asked before the submit, and no command of the follower carries RAYMOND_PROCESS_GROUP' '
	spool j6n /tmp sh -c "echo fresh" &&
	follow_args j6n --new &&
	FARGS=("${FARGS[@]/#sbatch/$PWD/rec-sbatch}") &&
	printf "#!/bin/sh\nprintf %%s \"\${RAYMOND_PROCESS_GROUP-none}\" >\"%s/pg\"\nexec sbatch \"\$@\"\n" "$PWD" >rec-sbatch &&
	chmod +x rec-sbatch &&
	RAYMOND_PROCESS_GROUP=token-of-a-step expect_status 0 "$RAYMOND" launch-follow "${FARGS[@]}" >out &&
	grep -x fresh out &&
	[ "$(cat pg)" = none ] &&
	[ "$(submits j6n)" = 1 ] &&
	first=$(grep -m1 -e "--job-name=j6n " -e "--name=j6n " "$SLURM_FAKE_LOG") &&
	case $first in sbatch*) ;; *) echo "asked before the submit: $first"; false ;; esac
'

test_expect_success 'a refused submit: launch-error holds sbatch message, exit 125' '
	spool j7 /tmp true &&
	follow_args j7 &&
	SLURM_FAKE_SBATCH_FAIL="Invalid partition name specified" expect_status 125 "$RAYMOND" launch-follow "${FARGS[@]}" &&
	[ "$(cat j7/launch-error)" = "submit failed (exit 1): sbatch: error: Invalid partition name specified" ] &&
	[ ! -e j7/job ] && ! queued j7
'

test_expect_success 'a submit command that cannot run is a launch error too' '
	spool j8 /tmp true &&
	expect_status 125 "$RAYMOND" launch-follow "$PWD/j8" --name j8 \
		--submit 1 no-such-sbatch --cancel 1 true --status 1 true &&
	grep "^submit failed (cannot run .no-such-sbatch.: No such file or directory)$" j8/launch-error
'

test_expect_success 'a job that vanishes without an exit status: launch-error, exit 125' '
	spool j9 /tmp sleep 600 &&
	follow_args j9 || exit 1
	"$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_for_file j9/started &&
	kill -KILL -- "-$(job_pgid j9)" &&
	expect_status 125 wait $pid &&
	grep -x "job j9 ended without an exit status (cancelled, over its time limit, or its node was lost)" j9/launch-error &&
	[ ! -e j9/exit ]
'

test_expect_success 'the task own launch errors (no working directory, no program) end with its 125' '
	spool j10 "$PWD/nowhere" true &&
	follow_args j10 &&
	expect_status 125 "$RAYMOND" launch-follow "${FARGS[@]}" &&
	grep "^working directory $PWD/nowhere does not exist on node " j10/launch-error &&
	spool j11 /tmp no-such-program &&
	follow_args j11 &&
	expect_status 125 "$RAYMOND" launch-follow "${FARGS[@]}" &&
	grep "^no-such-program not found on node " j11/launch-error
'

test_expect_success 'a failing status command is reported once, and the follower keeps waiting' '
	mkdir work &&
	spool j12 "$PWD/work" sh -c "while [ ! -e go ]; do sleep 0.05; done; echo done" &&
	follow_args j12 || exit 1
	SLURM_FAKE_SQUEUE_FAIL=1 "$RAYMOND" launch-follow "${FARGS[@]}" >out 2>err &
	pid=$!
	wait_until 60 eval "[ \$(grep -c \"^squeue .*--name=j12 \" \"\$SLURM_FAKE_LOG\") -ge 4 ]" &&
	is_running $pid &&
	touch work/go &&
	expect_status 0 wait $pid &&
	grep -x done out &&
	[ "$(grep -c "cannot ask the cluster" err)" = 1 ] &&
	grep -x "raymond: cannot ask the cluster about job j12: exit 1: slurm_load_jobs error: Unable to contact slurm controller (connect failure)" err
'

test_expect_success 'usage errors say what is wrong, exit 2' '
	mkdir d &&
	expect_status 2 raymond launch-follow d --submit 1 true --cancel 1 true --status 1 true 2>err &&
	grep "^raymond launch-follow: no --name$" err && grep "^usage: raymond launch-follow DIR" err &&
	expect_status 2 raymond launch-follow d --name j --submit 3 a b 2>err &&
	grep "needs a count N of 1 or more and N arguments" err &&
	expect_status 2 raymond launch-follow d --name j --check 0 --submit 1 a --cancel 1 b --status 1 c 2>err &&
	grep "check needs a number of seconds above 0, not .0." err &&
	expect_status 2 raymond launch-follow d --name j --submit 1 a --status 1 c 2>err &&
	grep "submit, --cancel and --status are all needed" err &&
	expect_status 2 raymond launch-follow nodir --name j --submit 1 a --cancel 1 b --status 1 c 2>err &&
	grep "no spool folder .nodir." err &&
	expect_status 2 raymond launch-follow d --name j --bogus --submit 1 a --cancel 1 b --status 1 c 2>err &&
	grep "unknown option or missing value: --bogus" err
'

test_done
