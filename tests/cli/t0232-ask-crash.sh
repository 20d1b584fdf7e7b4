#!/bin/bash
# kill -9 around an <ask>: while another agent runs with an ask pending,
# and while the answered state runs.  The resume keeps the ask (or the
# answer), and no state that completed runs again.
. "$(dirname "$0")/lib.sh"

# START.sh forks a worker that asks, then goes on at SLOW.sh, which waits
# for the file `go`; the answer goes to ANSWERED.sh, which waits for
# `go2`.  Every state logs its start to runs.
crash_workflow() {
	state START.sh <<-\EOS &&
	echo START >>runs
	echo "<fork next=\"SLOW.sh\">ASKER.sh</fork>"
	EOS
	state ASKER.sh <<-\EOS &&
	echo ASKER >>runs
	echo "<ask next=\"ANSWERED.sh\">approve?</ask>"
	EOS
	state SLOW.sh <<-\EOS &&
	echo SLOW >>runs
	touch slow-started
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>main done</result>"
	EOS
	state ANSWERED.sh <<-\EOS
	echo "ANSWERED $RAYMOND_INPUT" >>runs
	touch answered-started
	for _ in $(seq 1 1200); do [ -e go2 ] && break; sleep 0.05; done
	echo "<result>worker got $RAYMOND_INPUT</result>"
	EOS
}

test_expect_success 'kill -9 while another agent runs: the ask survives, the resume pauses at it again' '
	crash_workflow
	"$RAYMOND" wf --on-ask pause --workflow-id k --quiet >out 2>err &
	pid=$! &&
	wait_for_file slow-started &&
	wait_until 60 sh -c "\"$RAYMOND\" --status k --json | grep -q \"\\\"status\\\":\\\"asking\\\"\"" &&
	kill -9 $pid &&
	expect_status 137 wait $pid &&
	touch go &&
	expect_status 2 raymond --resume k >json 2>/dev/null &&
	grep -q "\"agent_id\": \"main_asker1\"" json &&
	grep -q "\"prompt\": \"approve?\"" json &&
	touch go2 &&
	raymond --resume k --input yes --quiet >out &&
	test "$(cat out)" = "main done" &&
	printf "ANSWERED yes\nASKER\nSLOW\nSLOW\nSTART\n" >expect &&
	sort runs >got &&
	cmp expect got || { cat runs; false; }
'

test_expect_success 'kill -9 while the answered state runs: the answer is kept, the ask is not asked again' '
	crash_workflow &&
	touch go &&
	expect_status 2 raymond wf --on-ask pause --workflow-id k >json 2>/dev/null
	"$RAYMOND" --resume k --input "ship it" --quiet >out 2>err &
	pid=$! &&
	wait_for_file answered-started &&
	kill -9 $pid &&
	expect_status 137 wait $pid &&
	raymond --status k --json >st &&
	! grep -q "\"status\":\"asking\"" st &&
	grep -q "\"response_text\":\"ship it\"" st &&
	touch go2 &&
	raymond --resume k --quiet >out &&
	test "$(cat out)" = "main done" &&
	printf "ANSWERED ship it\nANSWERED ship it\nASKER\nSLOW\nSTART\n" >expect &&
	sort runs >got &&
	cmp expect got &&
	test "$(grep -o "\"resolved_at\"" .raymond/state/k.json | wc -l)" = 1
'

test_done
