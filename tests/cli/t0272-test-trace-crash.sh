#!/bin/bash
# The test trace under a kill -9 (raymond.trace): a save's step lines
# are written before the save, marked with its revision, and a resume
# drops those of a save that never happened, so the trace holds a step
# exactly when the state file holds its transition, wherever the engine
# dies.  RAYMOND_TEST_KILL_AT=K kills the engine at its K-th point, the
# moment raymond test --chaos uses.
. "$(dirname "$0")/lib.sh"

# wf: START -> MID -> END, each script counting its runs in runs.log; the
# case (compiled by raymond test --keep) is copied to ./case.json.  A
# step's transition is saved when the next state starts, before its
# script runs.
setup() {
	mkdir -p wf/tests &&
	for s in START:MID MID:END; do
		printf "echo %s >>runs.log\necho \"<goto>%s</goto>\"\n" "${s%%:*}" "${s##*:}" >"wf/${s%%:*}.sh"
	done &&
	printf "echo END >>runs.log\necho \"<result>done</result>\"\n" >wf/END.sh &&
	cat >wf/tests/t.test.yaml <<-\EOS &&
	cases:
	  - name: three steps
	    expect: { path: [START, MID, END], result: done }
	EOS
	raymond test wf --keep >out &&
	kept=$(sed -n "s/^     kept in //p" out) &&
	cp "$kept/.raymond/test/case.json" case.json &&
	rm -rf "$kept"
}

# run_case DIR KILL_AT: the case as the runner starts it, in DIR.
run_case() {
	mkdir -p "$1/.raymond/test" &&
	cp case.json "$1/.raymond/test/case.json" &&
	(cd "$1" && RAYMOND_TEST_CASE=$PWD/.raymond/test/case.json RAYMOND_TEST_KILL_AT=$2 \
		"$RAYMOND" run "$OLDPWD/wf" --workflow-id test --no-debug --quiet)
}

# The number of the point described as $2 in DIR's points file.
point() { grep -F " $2" "$1/.raymond/test/points" | head -1 | cut -d" " -f1; }

steps() { grep -c "\"ev\":\"step\"" "$1/.raymond/test/trace.jsonl" || true; }

test_expect_success 'the uninterrupted run lists its kill points' '
	setup &&
	run_case count 0 &&
	cat count/.raymond/test/points &&
	grep -E "^[0-9]+ between the trace and the save of \[main\] START.sh -> goto$" count/.raymond/test/points &&
	grep -E "^[0-9]+ \[main\] MID.sh \(visit 1\) started$" count/.raymond/test/points &&
	test "$(steps count)" = 3
'

test_expect_success 'killed between the trace line and the save: the resume drops the line and writes it again' '
	setup &&
	run_case count 0 &&
	k=$(point count "between the trace and the save of [main] START.sh -> goto") &&
	expect_status 137 run_case killed "$k" &&
	grep -F "\"state\":\"START.sh\"" killed/.raymond/test/trace.jsonl | grep -F "\"ev\":\"step\"" &&
	(cd killed && RAYMOND_TEST_CASE=$PWD/.raymond/test/case.json "$RAYMOND" resume test --quiet >../res) &&
	grep -x done res &&
	test "$(steps killed)" = 3 &&
	test "$(grep -c "\"state\":\"START.sh\"" killed/.raymond/test/trace.jsonl | tr -d " ")" = 3 &&
	grep -F "\"ev\":\"step\"" killed/.raymond/test/trace.jsonl | grep -F "\"state\":\"START.sh\"" | grep -F "\"visit\":1" &&
	printf "START\nSTART\nMID\nEND\n" >want &&
	cmp want killed/runs.log
'

test_expect_success 'killed after the save: the step is kept and not run again' '
	setup &&
	run_case count 0 &&
	k=$(point count "after the save of [main] START.sh -> goto") &&
	expect_status 137 run_case killed "$k" &&
	(cd killed && RAYMOND_TEST_CASE=$PWD/.raymond/test/case.json "$RAYMOND" resume test --quiet >../res) &&
	grep -x done res &&
	test "$(steps killed)" = 3 &&
	test "$(grep -c "\"state\":\"START.sh\"" killed/.raymond/test/trace.jsonl | tr -d " ")" = 2 &&
	printf "START\nMID\nEND\n" >want &&
	cmp want killed/runs.log
'

test_done
