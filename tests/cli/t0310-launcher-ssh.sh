#!/bin/bash
# The ssh launcher (docs/cluster.md), with a fake ssh on PATH that records
# its argv and runs the remote command here: the task goes over stdin, so
# no variable's value is on a command line; output streams back as it is
# printed; the exit status is carried; an unreachable host is an error
# naming the launcher, resumable; a kill -9 of raymond is followed, at the
# resume, by a cancel of the old remote command under its job name.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/launch-lib.sh"

test_expect_success 'a script runs through ssh with its variables on stdin, never on the argv' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD SECRET_TOKEN="s3cr3t it'\''s \$(x)" &&
	state START.sh <<-\EOS &&
	printf "%s" "$SECRET_TOKEN" >"$OUT/secret"
	printf "%s" "$RAYMOND_AGENT_ID $RAYMOND_JOB" >"$OUT/ids"
	pwd -P >"$OUT/cwd"
	echo "<result>done</result>"
	EOS
	raymond wf --launcher box --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat secret)" = "$SECRET_TOKEN" &&
	grep -q "^main ray-main-[0-9a-f]\{8\}$" ids &&
	test "$(cat cwd)" = "$(pwd -P)" &&
	sed -n 1,4p ssh.log >argv &&
	printf "%s\n" -T -o BatchMode=yes build1 >want &&
	diff want argv &&
	grep -q "^sh -s RAYMOND_JOB=ray-main-[0-9a-f]\{8\}$" ssh.log &&
	! grep -q s3cr3t ssh.log &&
	test "$(grep -c -- --end-- ssh.log)" = 1
'

test_expect_success 'the run keeps its launcher: a resume runs through ssh too' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	test -e "$OUT/go" || exit 4
	echo "<result>ok</result>"
	EOS
	expect_status 1 raymond wf --launcher box --quiet 2>err &&
	grep -q "script exited with status 4" err &&
	touch go &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = ok &&
	test "$(grep -c -- --end-- ssh.log)" = 2
'

test_expect_success 'output streams back while the remote command still runs' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "<print>halfway</print>"
	while ! test -e "$OUT/go"; do sleep 0.05; done
	echo "<result>ok</result>"
	EOS
	{ raymond wf --launcher box >out 2>err & } &&
	wait_for_line out "^halfway$" &&
	! grep -q "^ok$" out &&
	touch go &&
	wait_for_line out "^ok$"
'

test_expect_success 'an unreachable host fails the state naming the launcher; the resume runs it' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo ran >>"$OUT/ran"
	echo "<result>ok</result>"
	EOS
	FAKE_SSH_FAIL=1 expect_status 1 raymond wf --launcher box 2>err &&
	grep -q "launcher box: cannot reach build1: ssh: connect to host build1 port 22: Connection refused" err &&
	grep -q "raymond --resume" err &&
	! test -e ran &&
	state_json | grep -q "\"state\":\"START.sh\"" &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = ok &&
	test "$(cat ran)" = ran
'

test_expect_success 'after kill -9 of raymond, the resume cancels the old remote command by its job name' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "$RAYMOND_JOB" >>"$OUT/jobs"
	while ! test -e "$OUT/go"; do sleep 0.05; done
	echo "<result>ok</result>"
	EOS
	true
	"$RAYMOND" wf --launcher box --quiet >/dev/null 2>&1 &
	pid=$! &&
	wait_for_file jobs &&
	kill -9 $pid &&
	wait $pid || true
	first=$(cat jobs) &&
	state_json | grep -q "\"job\":\"$first\"" &&
	touch go &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = ok &&
	grep -qxF "pkill -TERM -f -- '\''[R]AYMOND_JOB=$first'\''" ssh.log &&
	test "$(wc -l <jobs)" = 2 &&
	! grep -q "\"job\":" "$(state_file)"
'

test_expect_success 'Ctrl-C stops the run resumably and cancels the remote command by its job name' '
	box_config &&
	export FAKE_SSH_LOG=$PWD/ssh.log OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "$RAYMOND_JOB" >"$OUT/job"
	sleep 60
	EOS
	true
	"$RAYMOND" wf --launcher box >out 2>err &
	pid=$! &&
	wait_for_file job &&
	kill -INT $pid &&
	expect_status 130 wait $pid &&
	grep -qxF "pkill -TERM -f -- '\''[R]AYMOND_JOB=$(cat job)'\''" ssh.log &&
	! grep -q "\"job\":" "$(state_file)"
'

test_expect_success 'a markdown state runs the Claude CLI through ssh, the prompt on its stdin' '
	box_config && use_fake &&
	export FAKE_SSH_LOG=$PWD/ssh.log &&
	mkdir -p wf &&
	printf -- "---\nlauncher: box\n---\nMOCK: reply <result>from afar</result>" >wf/START.md &&
	raymond wf --quiet >out &&
	test "$(cat out)" = "from afar" &&
	calls 1 &&
	grep -q "^sh -s RAYMOND_JOB=ray-main-" ssh.log &&
	! grep -q MOCK ssh.log
'

test_done
