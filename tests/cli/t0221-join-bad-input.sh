#!/bin/bash
# Joins and bad input: a missing join target, a misspelt policy or
# attribute, forks of one reply that disagree, a hand-edited join in the
# state file.  Each is a clear error naming the file and line (lint, and
# the check before a run) or the state and agent (a script's computed
# tags at run time), and leaves the saved state as it was.
. "$(dirname "$0")/lib.sh"

# W.sh, DONE.sh and SUM.sh; START.sh is each test's own.
setup() {
	state W.sh <<-\EOS &&
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	state SUM.sh <<-\EOS
	echo sum >>sum.log
	echo "<result>sum</result>"
	EOS
}

# The saved state still has only main, at START.sh, and no join.
unchanged() {
	s=$(state_json) &&
	case $s in *'"joins"'* | *'"main_w'*) echo "state changed: $s"; return 1 ;; esac &&
	printf %s "$s" | grep -q '"state":"START.sh"'
}

test_expect_success 'lint: a missing join target is an error with file:line' '
	setup &&
	state START.sh <<-\EOS &&
	# fan out
	echo "<fork next=\"DONE\" join=\"SUMMRY\">W</fork>"
	EOS
	expect_status 1 raymond lint wf >out &&
	grep -F "wf/START.sh:2: error: <fork join=\"SUMMRY\">: state '"'"'SUMMRY'"'"' not found (looked for SUMMRY.md and SUMMRY.sh) [missing-target]" out &&
	expect_status 1 raymond wf 2>err &&
	grep -F "wf/START.sh:2: error: <fork join=\"SUMMRY\">" err &&
	grep -q "the run was not started" err &&
	! test -d .raymond/state
'

test_expect_success 'lint: a misspelt policy, wait= without join=, a misspelt attribute' '
	setup &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM\" wait=\"frist\">W</fork>"
	echo "<fork next=\"DONE\" wait=\"2\">W</fork>"
	echo "<fork next=\"DONE\" jion=\"SUM\">W</fork>"
	EOS
	expect_status 1 raymond lint wf >out &&
	grep -F "wf/START.sh:1: error: wait=\"frist\" is not a join policy" out &&
	grep -F "wf/START.sh:2: error: <fork wait=\"2\"> has no join=\"STATE\"" out &&
	grep -F "wf/START.sh:3: error: <fork>: attribute '"'"'jion'"'"' cannot be a worker variable: it looks like a misspelt join= of <fork>" out &&
	grep -F "[join-mismatch]" out
'

# At run time the tags a script prints are checked again: these print
# names computed when they run, which lint cannot read.  runtime_err
# MESSAGE: wf/START.sh, written by the test, stops the run with MESSAGE.
runtime_err() {
	setup &&
	expect_status 1 raymond wf 2>err &&
	grep -F "wf/START.sh (agent main): $1" err &&
	unchanged &&
	! test -e sum.log
}

test_expect_success 'run: a missing join target stops the run naming state and agent, state unchanged' '
	state START.sh <<-\EOS &&
	t=SUMMRY
	echo "<fork next=\"DONE\" join=\"$t\">W</fork>"
	EOS
	runtime_err "<fork join=\"SUMMRY\">: state '"'"'SUMMRY'"'"' not found"
'

test_expect_success 'run: a misspelt policy' '
	state START.sh <<-\EOS &&
	w=frist
	echo "<fork next=\"DONE\" join=\"SUM\" wait=\"$w\">W</fork>"
	EOS
	runtime_err "wait=\"frist\" is not a join policy"
'

test_expect_success 'run: a quorum beyond the workers' '
	state START.sh <<-\EOS &&
	w=3
	echo "<fork next=\"DONE\" join=\"SUM\" wait=\"$w\">W</fork>"
	EOS
	runtime_err "wait=\"3\" asks for 3 successes of 1 worker"
'

test_expect_success 'run: forks of one reply that join different states' '
	state SUM2.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	state START.sh <<-\EOS &&
	for t in SUM SUM2; do echo "<fork next=\"DONE\" join=\"$t\">W</fork>"; done
	EOS
	runtime_err "the forks of one reply join different states (SUM.sh and SUM2.sh)"
'

test_expect_success 'run: forks of one reply of which only some join' '
	state START.sh <<-\EOS &&
	for t in SUM ""; do echo "<fork next=\"DONE\" ${t:+join=\"$t\"}>W</fork>"; done
	EOS
	runtime_err "<fork>W</fork> has no join= while another fork of the reply joins SUM.sh"
'

# killed_join: a run killed -9 while its join's one worker runs (the
# worker stopped too); its state, as a resume reads it, in st.json, and
# the run's id in $id.
killed_join() {
	setup &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE\" join=\"SUM\">W</fork>"
	EOS
	state W.sh <<-\EOS
	echo $$ >w.pid.tmp && mv w.pid.tmp w.pid
	exec sleep 60
	EOS
	"$RAYMOND" wf --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file w.pid &&
	kill -9 $pid && { wait $pid 2>/dev/null || true; } &&
	kill "$(cat w.pid)" &&
	id=$(run_id) &&
	raymond --status "$id" --json >st.json &&
	grep -q "\"joins\":{\"main_w1\"" st.json
}

# edited SED-SCRIPT: the state file becomes st.json edited so, the
# journal gone; a copy of it in before.json.
edited() {
	sed "$1; s/\"revision\":[0-9]*/\"revision\":999999/" st.json >"$(state_file)" &&
	rm -f ".raymond/state/$id.journal" &&
	cp "$(state_file)" before.json
}

test_expect_success 'resume: a hand-edited join is refused naming the field, the file left as it is' '
	killed_join &&
	edited "s/\"state\":\"W.sh\",\"status\":\"running\"/\"state\":\"W.sh\",\"status\":\"done\"/" &&
	expect_status 1 raymond --resume "$id" 2>err &&
	grep -F "joins.main_w1.members[1].status '"'"'done'"'"' is not running, ok, failed or cancelled" err &&
	cmp before.json "$(state_file)"
'

test_expect_success 'resume: a join whose summary would start outside the project is refused' '
	killed_join &&
	edited "s|\"cwd\":\"$PWD\",\"members\"|\"cwd\":\"/\",\"members\"|" &&
	grep -q "\"cwd\":\"/\",\"members\"" "$(state_file)" &&
	expect_status 1 raymond --resume "$id" 2>err &&
	grep -F "joins.main_w1.cwd / is outside the directory the run was started in" err &&
	cmp before.json "$(state_file)"
'

test_done
