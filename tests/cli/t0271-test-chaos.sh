#!/bin/bash
# raymond test --chaos N: each case runs again N times, the engine killed
# with SIGKILL at a point of the run and resumed, and must end as the
# uninterrupted run did (docs/testing.md, "Chaos").
. "$(dirname "$0")/lib.sh"

CHAOS=$TESTS_TOP/tests/cli/chaos

# The parallel workers of the fan-out save together or one by one as
# their timing falls, so a trial may pass a point or two fewer than the
# uninterrupted run counted, and a kill drawn among the last points may
# find its trial already over: 9 kills of 10 is then right.
test_expect_success 'the fan-out and call examples run clean under --chaos 10' '
	raymond test "$CHAOS/fan-out-join.test.yaml" "$CHAOS/report.test.yaml" --chaos 10 >out &&
	cat out &&
	grep -E "^chaos: 10 kills per case, seed [0-9]+ " out &&
	grep -E "^ok   .*fan-out-join.test.yaml:5: three words joined \(chaos: (9|10) kills, (8|9|10) resumed, [0-9]+ ms avg\)$" out &&
	grep -E "^ok   .*report.test.yaml:5: counts the words through wordcount \(chaos: 10 kills, (9|10) resumed, [0-9]+ ms avg\)$" out &&
	grep -x "2 passed, 0 failed.*" out
'

# wf: START.sh appends a line to log.txt each time it runs, and the case
# expects the one line; DONE.sh ends.
append_wf() {
	mkdir -p wf/tests &&
	state START.sh <<-\EOS &&
	echo ran >>log.txt
	echo "<goto>DONE</goto>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	cat >wf/tests/append.test.yaml <<-\EOS
	cases:
	  - name: appends once
	    expect:
	      path: [START, DONE]
	      files: { "log.txt": "ran\n" }
	EOS
}

test_expect_success 'a script run again by the resume, which appends twice, is reported with what to do' '
	append_wf &&
	raymond test wf >out &&
	grep -x "1 passed, 0 failed.*" out &&
	expect_status 1 raymond test wf --chaos 30 --chaos-seed 7 >out &&
	cat out &&
	grep -E "^FAIL wf/tests/append.test.yaml:2: appends once" out &&
	grep -E "chaos: [0-9]+ of 30 kills changed the outcome; the first: killed at point [0-9]+ of [0-9]+ \(" out &&
	grep -F "file log.txt: \"ran\\n\" uninterrupted, \"ran\\nran\\n\" after the kill" out &&
	grep -F "START.sh ran twice: the kill came before its transition was saved, so the resume ran it again" out &&
	grep -F "make it idempotent" out &&
	grep -F "replay: raymond test --chaos 30 --chaos-seed 7 --filter \"appends once\"" out
'

test_expect_success 'the same seed kills at the same points' '
	append_wf &&
	expect_status 1 raymond test wf --chaos 30 --chaos-seed 7 >a &&
	expect_status 1 raymond test wf --chaos 30 --chaos-seed 7 >b &&
	grep "killed at point" a >pa &&
	grep "killed at point" b >pb &&
	cmp pa pb
'

test_expect_success '--chaos-seed without --chaos is an error' '
	append_wf &&
	expect_status 1 raymond test wf --chaos-seed 7 >out 2>err &&
	grep -F "chaos-seed chooses the kill points of --chaos N, which is not given" err &&
	! grep -F "passed" out
'

test_expect_success 'an idempotent script passes: only the files the case names are compared' '
	append_wf &&
	cat >wf/START.sh <<-\EOS &&
	echo ran >log.txt
	echo "<goto>DONE</goto>"
	EOS
	raymond test wf --chaos 30 >out &&
	cat out &&
	grep -E "^ok   wf/tests/append.test.yaml:2: appends once \(chaos: 30 kills" out
'

test_expect_success 'a case with answers is answered again after a kill, in order' '
	mkdir -p wf/tests &&
	state START.sh <<-\EOS &&
	echo "<ask next=\"SECOND\">first?</ask>"
	EOS
	state SECOND.sh <<-\EOS &&
	echo "$RAYMOND_INPUT" >first.txt
	echo "<ask next=\"END\">second?</ask>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>$(cat first.txt) then $RAYMOND_INPUT</result>"
	EOS
	cat >wf/tests/ask.test.yaml <<-\EOS &&
	cases:
	  - name: two answers
	    answers: ["one", "two"]
	    expect: { result: "one then two", path: [START, SECOND, END] }
	EOS
	raymond test wf --chaos 20 >out &&
	cat out &&
	grep -E "^ok   wf/tests/ask.test.yaml:2: two answers \(chaos: 20 kills" out
'

test_expect_success 'the kill point variable never reaches a state' '
	mkdir -p wf/tests &&
	state START.sh <<-\EOS &&
	echo "<result>[${RAYMOND_TEST_KILL_AT-unset}]</result>"
	EOS
	cat >wf/tests/env.test.yaml <<-\EOS &&
	cases:
	  - name: env
	    expect: { result: "[unset]" }
	EOS
	raymond test wf --chaos 5 >out &&
	cat out &&
	grep -E "^ok   wf/tests/env.test.yaml:2: env \(chaos: 5 kills" out
'

test_done
