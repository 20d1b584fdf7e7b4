#!/bin/bash
# A run under raymond test killed with -9 and resumed picks the same
# script stubs and replies by visit as the uninterrupted run: visits are
# counted from the trace's saved steps, so nothing scripted for visit 1 is
# served again, and no saved step runs twice.
. "$(dirname "$0")/lib.sh"

test_expect_success 'a resumed test run serves the stubs of the visits it has not done yet' '
	state STEP.sh <<-\EOS &&
	echo "<result>the real script ran</result>"
	EOS
	state WAIT.sh <<-\EOS &&
	touch "$DIR/waiting"
	for _ in $(seq 1 1200); do
		if [ -e "$DIR/go" ]; then echo "<goto>STEP</goto>"; exit 0; fi
		sleep 0.05
	done
	exit 1
	EOS
	state ASK.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: goto, target: WAIT.sh }
	---
	Wait.
	EOS
	export DIR=$PWD &&
	mkdir -p box/.raymond/test &&
	cat >box/.raymond/test/case.json <<-\EOF &&
	{"model": {"ASK.md": [{"reply": ["<goto>WAIT</goto> visit {{visit}}"]}]},
	 "scripts": {"STEP.sh": [{"stdout": "<goto>ASK</goto>"}, {"stdout": "<result>second {{visit}}</result>"}]},
	 "evaluate": []}
	EOF
	export RAYMOND_TEST_CASE=$PWD/box/.raymond/test/case.json &&
	cd box &&
	{ "$RAYMOND" run ../wf/STEP.sh --workflow-id test --no-debug >../out1 2>../err1 & } &&
	pid=$! &&
	wait_for_file ../waiting &&
	kill -9 "$pid" &&
	wait_for_exit "$pid" &&
	touch ../go &&
	"$RAYMOND" resume test >../out2 2>../err2 &&
	trace=.raymond/test/trace.jsonl &&
	grep -q "\"result\": *\"second 2\"" .raymond/state/test.json &&
	# STEP visit 1 and ASK visit 1 were saved before the kill: each began once.
	test "$(grep "\"ev\":\"start\"" $trace | grep "\"state\":\"STEP.sh\"" | grep -c "\"visit\":1")" = 1 &&
	test "$(grep "\"ev\":\"start\"" $trace | grep -c "\"state\":\"ASK.md\"")" = 1 &&
	test "$(grep "\"ev\":\"step\"" $trace | grep "\"state\":\"STEP.sh\"" | grep -c "\"visit\":1")" = 1 &&
	# WAIT was killed before its transition was saved: it began twice.
	test "$(grep "\"ev\":\"start\"" $trace | grep -c "\"state\":\"WAIT.sh\"")" = 2 &&
	test "$(grep "\"ev\":\"step\"" $trace | grep -c "\"state\":\"WAIT.sh\"")" = 1 &&
	! grep -q "the real script ran" .raymond/state/test.json
'

test_done
