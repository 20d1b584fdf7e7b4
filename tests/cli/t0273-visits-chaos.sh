#!/bin/bash
# max_visits counts a visit once when a crash makes --resume run the
# state again: under raymond test --chaos, killed at every kind of point,
# the examples whose loops end at max_visits take the same path as
# without a kill (hooks/visits.lua).
. "$(dirname "$0")/lib.sh"

export RAYMOND_CLAUDE=/nonexistent/claude

test_expect_success 'a killed and resumed run reaches max_visits at the same visit' '
	(cd "$TESTS_TOP/workflows" && raymond test test-router evaluator-gate review-loop team-budget \
		--filter max_visits --chaos 12 --chaos-seed 7 --jobs 2) >out 2>err || { cat out err; false; }
	grep -F "0 failed" out &&
	test "$(grep -c "^ok .*(chaos: 12 kills, " out)" = 4
'

test_expect_success 'the stop at max_visits without a route still runs the state afresh on resume' '
	mkdir -p wf &&
	printf -- "---\nmax_visits: 1\n---\nloop <goto>1_START</goto>\n" >wf/1_START.md &&
	mkdir -p wf/tests && cat >wf/tests/t.test.yaml <<-\EOF &&
	cases:
	  - name: stops at the second visit
	    model: { 1_START: "<goto>1_START</goto>" }
	    expect: { status: stopped, exit: 3, error: { contains: "reached max_visits (1)" }, path: [1_START, 1_START] }
	EOF
	raymond test wf >out 2>err || { cat out err; false; }
	grep -F "1 passed, 0 failed" out
'

test_done
