#!/bin/bash
# The default hooks driven by frontmatter (docs/hooks.md, "Default hooks"):
# max_visits/on_max_visits, evaluate, loop detection (max_repeats) and the
# budget.  Markdown states run with the fake CLI; its log is
# fake/log.jsonl, one JSON line per invocation.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }
jnum() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\)[,}].*/\1/p"; }
log() { sed -n "${1}p" fake/log.jsonl; }
# prompts_with TEXT: how many invocations had a prompt containing TEXT.
prompts_with() { grep -c -F "$1" fake/log.jsonl || true; }
eq() { [ "$2" = "$3" ] || { printf '%s:\n  expected: %s\n  got:      %s\n' "$1" "$3" "$2"; return 1; }; }
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }
# The run's total cost from the state file.
run_cost() { sed -n 's/.*"cost":\([0-9.e+-]*\),"created_at".*/\1/p' "$(state_file)"; }
approx() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }' ||
		{ echo "expected about $2, got '$1'"; return 1; }
}

done_state() {
	state DONE.md <<-\EOS
	the done state
	MOCK: reply <result>finished</result>
	EOS
}

# -------------------------------------------------------------- max_visits

test_expect_success 'max_visits: 2 with on_max_visits: a self-loop runs exactly twice, then the target' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 2
	on_max_visits: DONE
	---
	the looping state
	MOCK: reply one <goto>START</goto> || reply two <goto>START</goto> || reply three <goto>START</goto>
	EOS
	done_state &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" finished &&
	calls 3 &&
	eq "looping turns" "$(prompts_with "the looping state")" 2 &&
	log 3 | grep -q -F "the done state" &&
	! grep -q "unknown frontmatter" err
'

test_expect_success 'max_visits without on_max_visits stops the run (exit 3, stopped, naming max_visits)' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 2
	---
	the looping state
	MOCK: reply one <goto>START</goto> || reply two <goto>START</goto> || reply three <goto>START</goto>
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	grep -qx "raymond: run $(run_id) stopped; continue with: raymond --resume $(run_id)" err &&
	grep "max_visits" err &&
	grep -q "START.md reached max_visits (2)" err &&
	calls 2 &&
	eq status "$(run_status)" stopped &&
	grep -q "\"error\":\"[^\"]*max_visits" "$(state_file)"
'

test_expect_success 'visit counts survive a failure and --resume' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 3
	on_max_visits: DONE
	---
	the counted state
	MOCK: reply a <goto>P</goto> || reply b <goto>P</goto> || reply c <goto>P</goto> || reply d <goto>P</goto> || reply e <goto>P</goto>
	EOS
	state P.sh <<-\EOS &&
	n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
	if [ $n = 2 ]; then echo "failing once" >&2; exit 1; fi
	echo "<goto>START</goto>"
	EOS
	done_state &&
	expect_status 1 raymond wf --quiet 2>err &&
	eq "turns before the failure" "$(prompts_with "the counted state")" 2 &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" finished &&
	eq "turns in all" "$(prompts_with "the counted state")" 3
'

# ---------------------------------------------------------------- evaluate

# An evaluated state: its reply carries a MOCK line for the evaluator,
# whose prompt holds the reply ({{output}}).  $1: the reply; $2: extra
# frontmatter lines for evaluate.
evaluated_state() {
	cat >wf/START.md <<-EOS
	---
	evaluate:
	  model: haiku
	  prompt: |
	    Did the review find problems? Answer YES or NO.
	    {{output}}
	  routes:
	    YES: FIX
	    NO: SHIP
	$2
	---
	review the work
	MOCK: reply $1
	EOS
	for s in FIX SHIP OWN OTHER; do
		printf 'echo "<result>%s</result>"\n' "$s" >wf/$s.sh || return 1
	done
}

test_expect_success 'evaluate: a fresh haiku turn reads {{output}}, picks the route; its cost is added' '
	use_fake &&
	mkdir -p wf &&
	evaluated_state "found a bug <goto>OWN</goto>\\nMOCK: reply YES" &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" FIX &&
	calls 2 &&
	s1=$(log 1 | jstr session) && s2=$(log 2 | jstr session) &&
	test -n "$s1" && test "$s1" != "$s2" &&
	eq "evaluator resumed" "$(log 2 | jlit resumed)" false &&
	eq "evaluator forked" "$(log 2 | jlit forked)" false &&
	eq "evaluator history" "$(log 2 | jnum n_history)" 0 &&
	log 2 | grep -F "\"--model\",\"haiku\"" &&
	log 2 | jstr model | grep -q haiku &&
	! log 2 | grep -F -- "--resume" &&
	eq "evaluator prompt" "$(log 2 | jstr prompt)" "Did the review find problems? Answer YES or NO.\\nfound a bug <goto>OWN</goto>\\nMOCK: reply YES\\n" &&
	c=$(grep -a -h -o "\"total_cost_usd\":[0-9.e-]*" .raymond/debug/*.record | sed "s/.*://") &&
	eq "turns with a cost" "$(echo "$c" | wc -l)" 2 &&
	sum=$(echo "$c" | awk "{ s += \$1 } END { printf \"%.10f\", s }") &&
	approx "$(run_cost)" "$sum"
'

test_expect_success 'evaluate: the answer may contain the key as a word, in any case; the first key by name wins' '
	use_fake &&
	mkdir -p wf &&
	evaluated_state "all good <goto>OWN</goto>\\nMOCK: reply I would say no, it is fine." &&
	raymond wf --quiet >out &&
	eq "a word" "$(cat out)" SHIP &&
	rm -rf .raymond fake && use_fake &&
	evaluated_state "hmm <goto>OWN</goto>\\nMOCK: reply yes and no" &&
	raymond wf --quiet >out &&
	eq "two keys" "$(cat out)" SHIP &&
	rm -rf .raymond fake && use_fake &&
	evaluated_state "hmm <goto>OWN</goto>\\nMOCK: reply EYES NOTED" &&
	raymond wf --quiet >out &&
	eq "not as a word" "$(cat out)" OWN
'

test_expect_success 'evaluate: the default route when the answer matches none' '
	use_fake &&
	mkdir -p wf &&
	evaluated_state "unsure <goto>OWN</goto>\\nMOCK: reply MAYBE" "  default: OTHER" &&
	raymond wf --quiet >out &&
	eq result "$(cat out)" OTHER &&
	calls 2
'

test_expect_success 'evaluate: no match and no default falls back to the state own tag' '
	use_fake &&
	mkdir -p wf &&
	evaluated_state "unsure <goto>OWN</goto>\\nMOCK: reply MAYBE" &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" OWN &&
	calls 2 &&
	grep -q "MAYBE" err
'

test_expect_success 'evaluate without routes stops the run naming the state' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	evaluate:
	  prompt: judge {{output}}
	---
	review
	MOCK: reply ok <result>x</result>
	EOS
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	grep -q "START.md: evaluate needs a prompt and routes" err
'

# ---------------------------------------------------------- loop detection

test_expect_success 'loop detection: the same reply three times in a row stops the run' '
	use_fake &&
	state START.md <<-\EOS &&
	the stuck state
	MOCK: reply <goto>START</goto>
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	calls 3 &&
	grep "same reply 3 times" err &&
	eq status "$(run_status)" stopped
'

test_expect_success 'loop detection: max_repeats: 0 turns it off, max_repeats: 4 moves the limit' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_repeats: 0
	max_visits: 5
	on_max_visits: DONE
	---
	the stuck state
	MOCK: reply <goto>START</goto>
	EOS
	done_state &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" finished &&
	eq "stuck turns" "$(prompts_with "the stuck state")" 5 &&
	rm -rf .raymond fake && use_fake &&
	sed -i "s/max_repeats: 0/max_repeats: 4/" wf/START.md &&
	expect_status 3 "$RAYMOND" wf 2>err &&
	grep "same reply 4 times" err &&
	eq "stuck turns" "$(prompts_with "the stuck state")" 4 &&
	eq status "$(run_status)" stopped
'

test_expect_success 'loop detection: a different reply in between starts the count again' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 6
	on_max_visits: DONE
	---
	the wavering state
	MOCK: reply <goto>START</goto> || reply <goto>START</goto> || reply again <goto>START</goto> || reply <goto>START</goto> || reply <goto>START</goto> || reply again <goto>START</goto>
	EOS
	done_state &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" finished &&
	eq "wavering turns" "$(prompts_with "the wavering state")" 6
'

test_expect_success 'loop detection leaves a script state that repeats itself alone' '
	state START.sh <<-\EOS &&
	n=$(cat count 2>/dev/null || echo 0); n=$((n + 1)); echo $n >count
	if [ $n -ge 8 ]; then echo "<result>polled</result>"; else echo "<goto>START</goto>"; fi
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" polled &&
	eq count "$(cat count)" 8
'

# ------------------------------------------------------------------ budget

test_expect_success '--budget 0 disables the budget' '
	use_fake &&
	state START.md <<-\EOS &&
	a costly state
	MOCK-USAGE: 3000000 1000
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	another costly state
	MOCK-USAGE: 3000000 1000
	MOCK: reply <result>spent</result>
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	grep -q "budget exceeded" err &&
	grep -qx "raymond: run $(run_id) stopped; continue with: raymond --resume $(run_id) --budget [0-9.]*" err &&
	calls 1 &&
	eq status "$(run_status)" stopped &&
	rm -rf .raymond fake && use_fake &&
	raymond wf --budget 0 --quiet >out &&
	eq result "$(cat out)" spent &&
	calls 2 &&
	! grep -F -- "--max-budget-usd" fake/log.jsonl &&
	{ awk -v c="$(run_cost)" "BEGIN { exit !(c > 10) }" || { echo "cost $(run_cost) not above 10"; false; }; }
'

test_done
