#!/bin/bash
# Hook decision lines (docs/hooks.md, "Decision lines"): every decision a
# hook makes is shown with the file and line of the handler that made it,
# and the same line goes to the debug record as a "decision" piece.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# decisions: every "decision" piece of the only run's debug record.
decisions() {
	LC_ALL=C awk '
	NR == 1 { left = -1; next }
	left < 0 { split($0, h, " "); want = h[3] == "decision"; left = h[4] + 1; next }
	{ left -= length($0) + 1; if (want) print; if (left <= 0) left = -1 }' ".raymond/debug/$(run_id).record"
}

test_expect_success 'a workflow hook routing a transition is shown with its file:line and reason, and recorded' '
	state START.sh <<-\EOS &&
	echo "<goto>REVIEW</goto>"
	EOS
	state REVIEW.sh <<-\EOS &&
	echo "<result>review</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	-- a comment, so the handler does not start on line 1
	return {
	  PreState = function(ev)
	    if ev.state == "REVIEW.sh" then
	      return { transition = { tag = "goto", target = "DONE" }, reason = "the review passed" }
	    end
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	grep -x done out &&
	grep -xF "[main] wf/hooks.lua:3 PreState: routed REVIEW.sh -> goto DONE.sh: the review passed" err &&
	decisions >rec &&
	grep -E "^[0-9T:.Z-]+ \[main\] wf/hooks.lua:3 PreState: routed REVIEW.sh -> goto DONE.sh: the review passed$" rec
'

test_expect_success '--quiet hides the decision line; the debug record still has it' '
	two_step &&
	echo "echo \"<result>c</result>\"" | state C.sh &&
	printf "return { PreTransition = function(ev)\n  if ev.state == \"START.sh\" then return { transition = { tag = \"goto\", target = \"C\" } } end\nend }\n" >wf/hooks.lua &&
	raymond wf --quiet >out 2>err &&
	grep -x c out &&
	! grep -q routed err &&
	decisions | grep -F "[main] wf/hooks.lua:1 PreTransition: routed START.sh -> goto C.sh"
'

test_expect_success 'a hook deciding again in a loop is shown and recorded each time' '
	two_step &&
	state A.sh <<-\EOS &&
	echo x >>a-ran
	if [ "$(wc -l <a-ran)" -lt 3 ]; then echo "<goto>START</goto>"; else echo "<result>looped</result>"; fi
	EOS
	printf "return {\n  PreTransition = function(ev)\n    if ev.state == \"START.sh\" then return { transition = { tag = \"goto\", target = \"A\" }, reason = \"policy\" } end\n  end,\n}\n" >wf/hooks.lua &&
	raymond wf >out 2>err &&
	grep -x looped out &&
	[ "$(wc -l <a-ran)" = 3 ] &&
	! test -e b-ran &&
	[ "$(grep -cxF "[main] wf/hooks.lua:2 PreTransition: routed START.sh -> goto A.sh: policy" err)" = 3 ] &&
	[ "$(decisions | grep -cF "[main] wf/hooks.lua:2 PreTransition: routed START.sh -> goto A.sh: policy")" = 3 ]
'

test_expect_success 'a stop by a default hook names hooks/FILE.lua:LINE, and the record holds the stop' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 1
	---
	the looping state
	MOCK: reply <goto>START</goto>
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	line=$(grep -n "PreState = function" "$TESTS_TOP/hooks/visits.lua" | cut -d: -f1) &&
	grep -F "stopped by hooks/visits.lua:$line: START.md reached max_visits (1)" err &&
	decisions | grep -F "[main] hooks/visits.lua:$line PreState: stop: START.md reached max_visits (1)"
'

test_expect_success 'on_max_visits shows why the default hook changed the route' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 1
	on_max_visits: DONE
	---
	the looping state
	MOCK: reply <goto>START</goto>
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>finished</result>"
	EOS
	raymond wf >out 2>err &&
	grep -x finished out &&
	line=$(grep -n "PreState = function" "$TESTS_TOP/hooks/visits.lua" | cut -d: -f1) &&
	grep -xF "[main] hooks/visits.lua:$line PreState: routed START.md -> goto DONE.sh: START.md reached max_visits (1), so on_max_visits decides" err
'

test_expect_success 'the budget hook'"'"'s turn cap is recorded, not shown' '
	use_fake &&
	state START.md <<-\EOS &&
	a turn
	MOCK: reply <result>ok</result>
	EOS
	raymond wf >out 2>err &&
	! grep -q "maxBudgetUsd" err &&
	line=$(grep -n "PreTurn = function" "$TESTS_TOP/hooks/budget.lua" | cut -d: -f1) &&
	decisions | grep -E "\[main\] hooks/budget.lua:$line PreTurn: set maxBudgetUsd = 10$"
'

test_done
