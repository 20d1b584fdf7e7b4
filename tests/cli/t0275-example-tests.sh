#!/bin/bash
# raymond test: every example workflow's test cases pass, offline; and the
# command fails usefully: a wrong expectation shows the path diff, a bad
# test file gets FILE:LINE errors (docs/bad-input.md), --filter, --junit,
# a hanging case ended by its timeout, no test files at all.
. "$(dirname "$0")/lib.sh"

top=$TESTS_TOP

# A small workflow wf/ (START.md -> CHECK.sh -> result) and its test file.
small_workflow() {
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: goto, target: CHECK.sh }
	---
	Do {{input}}.
	EOS
	state CHECK.sh <<-\EOS &&
	echo "<result>checked $RAYMOND_INPUT</result>"
	EOS
	mkdir -p wf/tests
}

test_expect_success 'every case of every example workflow passes, with no claude and no network, taking 90% of each one'"'"'s transitions' '
	(cd "$top" && PATH=/usr/bin:/bin HOME=$PWD/nohome raymond test workflows --jobs 2 --coverage-min 90) >out 2>err ||
		{ cat out err; return 1; }
	! grep "^FAIL" out &&
	grep -Eq "^[0-9]+ passed, 0 failed \(" out &&
	passed=$(sed -n "s/^\([0-9]*\) passed.*/\1/p" out) &&
	test "$passed" -ge 50 &&
	test "$(grep -c "^ok " out)" = "$passed" &&
	# Every example has cases.
	for w in approval classify evaluator-gate fan-out-join fanout fanout-md hello release-gate report \
		review-loop team-budget test-router wordcount; do
		grep -q "^ok   workflows/$w/tests/" out || { echo "no case of $w passed"; return 1; }
	done &&
	grep -q "^ok   workflows/todo-report.test.yaml:" out &&
	grep -q "^ok   workflows/word-stats.test.yaml:" out &&
	test "$(grep -c "^coverage of " out)" -ge 15
'

# review-loop and test-router each have a case whose project's tests fail
# once and then pass, counted in a file: a run of those tests again after
# a kill counts twice, which --chaos rightly reports, so they are left out.
test_expect_success 'the examples resume after a kill at any point with the same outcome (--chaos)' '
	(cd "$top/workflows" && PATH=/usr/bin:/bin raymond test approval classify evaluator-gate fan-out-join \
		fanout fanout-md hello release-gate report team-budget wordcount todo-report.test.yaml \
		word-stats.test.yaml --jobs 2 --chaos 4 --chaos-seed 11) >out 2>err || { cat out err; return 1; }
	grep -Eq "^[0-9]+ passed, 0 failed \(" out &&
	test "$(grep -c "^ok .*(chaos: 4 kills, " out)" -ge 30
'

test_expect_success 'a wrong expected path fails the case with the diff of both paths' '
	small_workflow &&
	cat >wf/tests/t.test.yaml <<-\EOF &&
	cases:
	  - name: passes
	    input: it
	    model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }
	    expect: { path: [START, CHECK], result: checked it }
	  - name: expects another path
	    input: it
	    model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }
	    expect:
	      path: [START, START, CHECK]
	      result: unchecked
	EOF
	expect_status 1 raymond test wf >out 2>err &&
	grep -q "^ok   wf/tests/t.test.yaml:2: passes (" out &&
	grep -q "^FAIL wf/tests/t.test.yaml:6: expects another path (" out &&
	sed -n "/^FAIL/,/^1 passed/p" out >fail &&
	grep -qx "     path of main:" fail &&
	grep -qx "       expected: START START CHECK" fail &&
	grep -qx "       actual:   START CHECK" fail &&
	grep -qx "                       ^ step 2" fail &&
	grep -qx "     result: expected \"unchecked\", got \"checked it\"" fail &&
	grep -q "^     the run said:" fail &&
	grep -qx "1 passed, 1 failed (.*)" out
'

# bad NAME LINE MESSAGE: the test file from stdin is refused with an error
# starting "wf/tests/NAME.test.yaml:LINE: MESSAGE", and nothing runs.
bad() {
	cat >"wf/tests/$1.test.yaml" &&
	expect_status 1 raymond test "wf/tests/$1.test.yaml" >out 2>err &&
	grep -q "^raymond: error: wf/tests/$1.test.yaml:$2: " err &&
	grep -qF "raymond: error: wf/tests/$1.test.yaml:$2: $3" err ||
		{ echo "expected: wf/tests/$1.test.yaml:$2: $3"; cat err; return 1; }
	grep -q "^0 passed, 0 failed, 1 test file(s) with errors" out &&
	test ! -e .raymond
}

test_expect_success 'an unknown key, a missing state and a bad type each name the file and line' '
	small_workflow &&
	bad key 4 "a case has no key '\''inptu'\'' (did you mean input?); it takes answers, env, evaluate, expect, files, input, model, name, options, scripts, start, timeout" <<-\EOF &&
	cases:
	  - name: one
	    expect: { exit: 0 }
	    inptu: it
	EOF
	bad state 5 "the workflow has no state REVIEW (state '\''REVIEW'\'' not found in" <<-\EOF &&
	cases:
	  - name: one
	    model:
	      START: "<goto>CHECK</goto>"
	      REVIEW: "<goto>CHECK</goto>"
	    expect: { exit: 0 }
	EOF
	bad type 3 "timeout must be a number from 0 up, not \"soon\"" <<-\EOF &&
	cases:
	  - name: one
	    timeout: soon
	    expect: { exit: 0 }
	EOF
	bad never 5 "a completed run exits with 0, so exit 1 can never be seen" <<-\EOF &&
	cases:
	  - name: one
	    expect:
	      status: completed
	      exit: 1
	EOF
	bad stub 3 "START.md is a markdown state, not a script state" <<-\EOF
	cases:
	  - name: one
	    scripts: { START: "<result>x</result>" }
	    expect: { exit: 0 }
	EOF
'

test_expect_success '--filter runs only the cases whose name holds the text, and one that matches none is an error' '
	small_workflow &&
	cat >wf/tests/t.test.yaml <<-\EOF &&
	cases:
	  - { name: first one, input: a, model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }, expect: { result: checked a } }
	  - { name: second one, input: b, model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }, expect: { result: wrong } }
	EOF
	raymond test wf --filter first >out &&
	grep -q "^ok   wf/tests/t.test.yaml:2: first one" out &&
	! grep -q "second one" out &&
	grep -q "^1 passed, 0 failed" out &&
	expect_status 1 raymond test wf --filter third >out 2>err &&
	grep -qxF "raymond: error: no case'\''s name holds '\''third'\''" err
'

test_expect_success '--junit writes JUnit XML that parses, a failure with its message' '
	small_workflow &&
	cat >wf/tests/t.test.yaml <<-\EOF &&
	cases:
	  - { name: "ok <&>", input: a, model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }, expect: { result: checked a } }
	  - { name: fails, input: b, model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }, expect: { result: wrong } }
	EOF
	expect_status 1 raymond test wf --junit junit.xml >out &&
	python3 -c "
import sys, xml.dom.minidom
d = xml.dom.minidom.parse(\"junit.xml\")
s = d.getElementsByTagName(\"testsuite\")
assert len(s) == 1 and s[0].getAttribute(\"tests\") == \"2\" and s[0].getAttribute(\"failures\") == \"1\", s
cases = {c.getAttribute(\"name\"): c for c in d.getElementsByTagName(\"testcase\")}
assert set(cases) == {\"ok <&>\", \"fails\"}, cases
assert not cases[\"ok <&>\"].getElementsByTagName(\"failure\")
f = cases[\"fails\"].getElementsByTagName(\"failure\")[0]
assert f.getAttribute(\"message\") == \"result: expected \\\"wrong\\\", got \\\"checked b\\\"\", f.getAttribute(\"message\")
"
'

test_expect_success 'a case that hangs is ended at its timeout, saying which state it was in, and its script is stopped' '
	small_workflow &&
	state CHECK.sh <<-\EOS &&
	echo $$ >"$PIDS/check.pid"
	exec sleep 300
	EOS
	export PIDS=$PWD &&
	cat >wf/tests/t.test.yaml <<-\EOF &&
	cases:
	  - name: hangs
	    input: a
	    timeout: 2
	    model: { START: "<goto input=\"{{input}}\">CHECK</goto>" }
	    expect: { result: never }
	EOF
	expect_status 1 raymond test wf >out 2>err &&
	grep -q "^FAIL wf/tests/t.test.yaml:2: hangs (" out &&
	grep -qx "     timed out after 2 s (the case.s timeout); main in CHECK.sh (visit 1)" out &&
	test -s check.pid &&
	wait_for_exit "$(cat check.pid)"
'

test_expect_success 'no test files is an error that says where they go' '
	mkdir empty &&
	expect_status 1 raymond test empty >out 2>err &&
	grep -qxF "raymond: error: no test files found (NAME.test.yaml)" err &&
	grep -q "^hint: put them in a workflow.s tests/ folder; see docs/testing.md" err &&
	expect_status 1 raymond test no-such-dir 2>err &&
	grep -qxF "raymond: error: no-such-dir: no such file or folder" err
'

test_expect_success 'convert leaves a tests/ folder out, with a warning, and the tests run against the YAML file' '
	cp -r "$top/workflows/hello" hello &&
	raymond convert hello --output hello.yaml 2>err &&
	grep -q "^raymond: warning: the tests/ folder is not converted" err &&
	! grep -q "test.yaml" hello.yaml &&
	sed "1a workflow: hello.yaml" hello/tests/hello.test.yaml >hello.test.yaml &&
	raymond test hello.test.yaml >out &&
	grep -q "^4 passed, 0 failed" out
'

test_done
