#!/bin/bash
# raymond test --coverage: per workflow, which states its cases ran and
# which transitions of its static model they took, the others listed
# with FILE:LINE; transitions to computed states shown apart; and
# --coverage-min failing the run below a percentage (docs/testing.md,
# "Coverage").
. "$(dirname "$0")/lib.sh"

# wf: START goes to A, B or LOOP by its input, or to whatever the input
# names (a computed target); LOOP.md loops until max_visits routes it to
# B; tests/paths.test.yaml takes START -> A, the loop and its hook route,
# and the computed START -> C, but never START -> B nor LOOP's result.
setup() {
	mkdir -p wf/tests &&
	state START.sh <<-\EOS &&
	case "$RAYMOND_INPUT" in
	a) echo "<goto>A</goto>" ;;
	b) echo "<goto>B</goto>" ;;
	loop) echo "<goto>LOOP</goto>" ;;
	*) echo "<goto>$RAYMOND_INPUT</goto>" ;;
	esac
	EOS
	echo 'echo "<result>a</result>"' >wf/A.sh &&
	echo 'echo "<result>b</result>"' >wf/B.sh &&
	echo 'echo "<result>c</result>"' >wf/C.sh &&
	state LOOP.md <<-\EOS &&
	---
	max_visits: 2
	on_max_visits: B
	---
	Go round: <goto>LOOP</goto>, or stop: <result>done</result>.
	EOS
	cat >wf/tests/paths.test.yaml <<-\EOS
	cases:
	  - name: goes to A
	    input: a
	    expect: { path: [START, A], result: a }
	  - name: loops until the hook routes
	    input: loop
	    model: { LOOP: "<goto>LOOP</goto>" }
	    expect: { path: [START, LOOP, LOOP, LOOP, B], result: b }
	  - name: computed target
	    input: C
	    expect: { path: [START, C], result: c }
	EOS
}

test_expect_success 'the table counts states and transitions, lists the untaken ones with file:line' '
	setup &&
	raymond test wf --coverage >out &&
	cat out &&
	grep -x "coverage of wf" out &&
	grep -E "^  states +5/5 +100%$" out &&
	grep -E "^  transitions +7/9 +77%$" out &&
	grep -x "    wf/START.sh:3  START.sh -> goto B.sh" out &&
	grep -x "    wf/LOOP.md:5  LOOP.md -> result \"done\"" out &&
	! grep -F "LOOP.md -> goto B.sh" out &&
	grep -x "3 passed, 0 failed.*" out
'

test_expect_success 'a transition to a computed state is shown as dynamic, outside the percentage' '
	setup &&
	raymond test wf --coverage >out &&
	grep -E "^  dynamic +1 taken" out &&
	grep -x "    START.sh -> goto C.sh" out
'

test_expect_success 'the hook route and the states are counted from the cases that ran' '
	setup &&
	raymond test wf --coverage --filter "goes to A" >out &&
	cat out &&
	grep -E "^  states +2/5 +40%$" out &&
	grep -E "^  transitions +2/9 +22%$" out &&
	grep -x "  states never run: B.sh, C.sh, LOOP.md" out &&
	grep -F "wf/LOOP.md:3  LOOP.md -> goto B.sh (hook: max_visits 2)" out
'

test_expect_success '--coverage-min fails below the percentage, passes at or above it' '
	setup &&
	expect_status 1 raymond test wf --coverage-min 80 >out &&
	grep -x "1 workflow(s) below --coverage-min 80%" out &&
	grep -x "3 passed, 0 failed.*" out &&
	raymond test wf --coverage-min 77 >out &&
	grep -E "^  transitions +7/9" out
'

test_expect_success 'the JUnit XML is the same with --coverage' '
	setup &&
	raymond test wf --junit plain.xml >/dev/null &&
	raymond test wf --coverage --junit cov.xml >/dev/null &&
	sed "s/time=\"[0-9.]*\"//g" plain.xml | sort >a &&
	sed "s/time=\"[0-9.]*\"//g" cov.xml | sort >b &&
	cmp a b
'

test_expect_success 'states of a called workflow count for that one, not the caller' '
	mkdir -p caller/tests sub &&
	echo "echo \"<call-workflow return=\\\"BACK\\\">../sub</call-workflow>\"" >caller/START.sh &&
	echo "echo \"<result>back: \$RAYMOND_INPUT</result>\"" >caller/BACK.sh &&
	echo "echo \"<result>never</result>\"" >caller/X.sh &&
	echo "echo \"<goto>X</goto>\"" >sub/START.sh &&
	echo "echo \"<result>sub</result>\"" >sub/X.sh &&
	cat caller/START.sh sub/START.sh &&
	cat >caller/tests/call.test.yaml <<-\EOS &&
	cases:
	  - name: calls sub
	    expect: { result: "back: sub", path: [START, "...", BACK] }
	EOS
	raymond test caller --coverage >out &&
	cat out &&
	grep -E "^  states +2/3 +66%$" out &&
	grep -E "^  transitions +2/3 +66%$" out &&
	grep -x "  states never run: X.sh" out &&
	! grep -F "dynamic" out
'

test_done
