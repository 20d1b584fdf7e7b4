#!/bin/bash
# <ask timeout= timeout_next=>: the deadline is enforced while other agents
# run, and by a resume after it; without timeout_next the run fails
# naming the agent and the ask.
. "$(dirname "$0")/lib.sh"

# main forks a worker that asks with `attrs`; main then waits (WAIT.sh)
# until the worker's LATE.sh has run and made the file `late`.
timed_workflow() {
	attrs=$1
	state START.sh <<-\EOS &&
	echo "<fork next=\"WAIT.sh\">ASKER.sh</fork>"
	EOS
	state ASKER.sh <<-EOS &&
	echo "<ask next=\"ANSWERED.sh\" $attrs>anyone there?</ask>"
	EOS
	state WAIT.sh <<-\EOS &&
	for _ in $(seq 1 1200); do [ -e late ] && break; sleep 0.05; done
	[ -e late ] || { echo "LATE.sh never ran" >&2; exit 1; }
	echo "<result>main saw: $(cat late)</result>"
	EOS
	state LATE.sh <<-\EOS &&
	echo "timed out with input '${RAYMOND_INPUT-unset}'" >late
	echo "<result>late</result>"
	EOS
	state ANSWERED.sh <<-\EOS
	echo answered >>answered
	echo "<result>answered $RAYMOND_INPUT</result>"
	EOS
}

test_expect_success 'while other agents run, the deadline sends the asking agent to timeout_next' '
	timed_workflow "timeout=\\\"1s\\\" timeout_next=\\\"LATE.sh\\\"" &&
	raymond wf --on-ask pause --workflow-id t >out 2>err &&
	test "$(cat out)" = "main saw: timed out with input '"'"'unset'"'"'" &&
	test ! -e answered &&
	grep -Eq "\[main_asker1\] ASKER.sh -> ask ask_main_asker1_[0-9]+ timed out; going on at LATE.sh" err &&
	grep -q "\"timed_out\":true" .raymond/state/t.json &&
	grep -q "\"status\":\"completed\"" .raymond/state/t.json
'

test_expect_success 'without timeout_next the deadline fails the run, naming the agent and the ask' '
	timed_workflow "timeout=\\\"1s\\\"" &&
	expect_status 1 raymond wf --on-ask pause --workflow-id t >out 2>err &&
	grep -Eq "wf/ASKER.sh \(agent main_asker1\): ask ask_main_asker1_[0-9]+ timed out: no answer within 1s, and its <ask> has no timeout_next" err &&
	grep -Eq "hint: answer it late with: raymond answer t ask_main_asker1_[0-9]+ \"TEXT\"" err &&
	grep -q "\"status\":\"failed\"" .raymond/state/t.json &&
	grep -q "\"status\":\"asking\"" .raymond/state/t.json &&
	id=$(grep -Eo "ask_main_asker1_[0-9]+" err | head -1) &&
	touch late &&
	raymond answer t "$id" "sorry, late" --quiet >out &&
	test "$(cat answered)" = answered
'

test_expect_success 'a paused run resumed after the deadline takes the timeout route' '
	state START.sh <<-\EOS &&
	echo "<ask next=\"ANSWERED.sh\" timeout=\"1s\" timeout_next=\"LATE.sh\">anyone?</ask>"
	EOS
	state ANSWERED.sh <<-\EOS &&
	echo "<result>answered</result>"
	EOS
	state LATE.sh <<-\EOS &&
	echo "<result>nobody answered</result>"
	EOS
	expect_status 2 raymond wf --on-ask pause --workflow-id p >json 2>/dev/null &&
	grep -q "\"deadline\": " json &&
	deadline=$(sed -n "s/.*\"deadline\":\([0-9.]*\).*/\1/p" .raymond/state/p.json) &&
	wait_until 60 sh -c "[ \$(date +%s) -gt ${deadline%.*} ]" &&
	cp .raymond/state/p.json before &&
	expect_status 1 raymond --resume p --input "too late" 2>err &&
	grep -q "run p has no pending ask for --input to answer" err &&
	grep -q "hint: the asks left have timed out" err &&
	cmp before .raymond/state/p.json &&
	raymond --resume p --quiet >out &&
	test "$(cat out)" = "nobody answered"
'

test_expect_success 'a paused run resumed after the deadline of an ask without timeout_next fails clearly, unchanged' '
	state START.sh <<-\EOS &&
	echo "<ask next=\"ANSWERED.sh\" timeout=\"1s\">anyone?</ask>"
	EOS
	state ANSWERED.sh <<-\EOS &&
	echo "<result>answered $RAYMOND_INPUT</result>"
	EOS
	expect_status 2 raymond wf --on-ask pause --workflow-id p >json 2>/dev/null &&
	deadline=$(sed -n "s/.*\"deadline\":\([0-9.]*\).*/\1/p" .raymond/state/p.json) &&
	wait_until 60 sh -c "[ \$(date +%s) -gt ${deadline%.*} ]" &&
	cp .raymond/state/p.json before &&
	expect_status 1 raymond --resume p 2>err &&
	grep -Eq "run p: agent main: ask ask_main_[0-9]+ timed out: no answer within 1s" err &&
	cmp before .raymond/state/p.json &&
	raymond --resume p --input "late but here" --quiet >out &&
	test "$(cat out)" = "answered late but here"
'

test_done
