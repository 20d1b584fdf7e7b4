#!/bin/bash
# --budget is a cap on the whole run: turns in parallel share it through
# reservations, each turn gets its share as --max-budget-usd, turns that
# were killed count what their stream showed, raymond.evaluate is bounded
# the same way, and a cost no turn could have is an error.  The fake CLI
# enforces --max-budget-usd as the real one does (after each API call) and
# writes every call it answered to fake/spend, which is what the run really
# spent whatever raymond counted.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

jnum() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\)[,}].*/\1/p"; }
sum() { awk '{ s += $1 } END { printf "%.6f\n", s }'; }
log() { sed -n "${1}p" fake/log.jsonl; }
run_cost() { state_json | sed -n 's/.*"cost":\([0-9.e+-]*\),"created_at".*/\1/p'; }
run_status() { state_json | sed -n 's/.*"status":"\([a-z]*\)".*/\1/p'; }

eq() { [ "$2" = "$3" ] || { echo "$1: expected '$3', got '$2'"; return 1; }; }

# le A B: the number A is at most B.
le() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && a <= b + 1e-9) }' || { echo "expected $1 <= $2"; return 1; }; }
# near A B: the numbers agree to 1e-9.
near() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }' ||
	{ echo "expected about $2, got '$1'"; return 1; }; }

# A turn in flight shows $0.0075 (one call) in the saved state.
one_call_seen() { state_json 2>/dev/null | grep -Eq "\"seen\":0\.00(75|749999)"; }

test_expect_success '--budget 5 bounds 8 parallel workers that could each spend $3: within $5 plus one API call per turn' '
	use_fake &&
	state START.sh <<-\EOS &&
	for i in 1 2 3 4 5 6 7 8; do echo "<fork n=\"$i\">W</fork>"; done
	echo "<goto>DONE</goto>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>main</result>"
	EOS
	# 30 API calls of $0.10 each: $3 for a turn nothing caps.
	state W.md <<-\EOS &&
	Work on it.
	MOCK: calls 30 => <result>w</result>
	MOCK-USAGE: 20000 0
	EOS
	expect_status 3 "$RAYMOND" wf --budget 5 >out 2>err &&
	spent=$(sum <fake/spend) &&
	turns=$(wc -l <fake/log.jsonl) &&
	echo "turns $turns, spent \$$spent, counted \$$(run_cost)" &&
	# A turn that used its share goes on with a new one, so the workers
	# use the budget...
	le 4.5 "$spent" &&
	# ...and pass it by at most one $0.10 call for each of the 8 turns
	# that can be in flight when it runs out.
	le "$spent" 5.80 &&
	# What was spent is counted: a turn killed by the stop counts the calls
	# its stream showed, which misses at most the one it was killed in.
	le "$(run_cost)" "$spent" &&
	le "$spent" "$(echo "$(run_cost) + 8 * 0.10" | bc)" &&
	eq status "$(run_status)" stopped &&
	grep -Eq "budget (exhausted|exceeded): spent" err &&
	grep -qx "raymond: run $(run_id) stopped; continue with: raymond --resume $(run_id) --budget [0-9]*\.[0-9][0-9]" err
'

test_expect_success 'a turn is not launched when what is left cannot pay for one; the hint raises the budget and resumes' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>START</goto> || reply <goto>START</goto> || reply <result>fin</result>
	EOS
	expect_status 3 "$RAYMOND" wf --budget 0.02 >out 2>err &&
	# $0.0075 a turn: after two, $0.005 is left, less than a cent.
	eq turns "$(wc -l <fake/log.jsonl)" 2 &&
	log 1 | grep -qF "\"--max-budget-usd\",\"0.0200\"" &&
	log 2 | grep -qF "\"--max-budget-usd\",\"0.0125\"" &&
	grep -qF "budget exhausted: spent \$0.0150 and \$0.0000 reserved by 0 turn(s) in flight, of the \$0.02 budget; a turn needs at least \$0.01" err &&
	id=$(run_id) &&
	grep -qx "raymond: run $id stopped; continue with: raymond --resume $id --budget 0.04" err &&
	eq status "$(run_status)" stopped &&
	raymond --resume "$id" --budget 0.04 >out 2>err &&
	eq result "$(cat out)" fin &&
	log 3 | grep -qF "\"--max-budget-usd\",\"0.0250\""
'

test_expect_success 'Ctrl-C during a turn: the turn counts the API calls its stream showed' '
	use_fake
	state START.md <<-\EOS
	MOCK: bash touch started; sleep 60 => <result>x</result> || reply <result>done</result>
	EOS
	"$RAYMOND" wf --budget 1 >out 2>err &
	pid=$!
	wait_for_file started &&
	wait_until 60 one_call_seen &&
	kill -INT $pid &&
	expect_status 130 wait $pid &&
	near "$(run_cost)" 0.0075 &&
	! state_json | grep -q "\"seen\"" &&
	raymond --resume "$(run_id)" >out 2>err &&
	eq result "$(cat out)" done &&
	near "$(run_cost)" "$(sum <fake/spend)"
'

test_expect_success 'kill -9 during a turn: --resume counts that turn at the usage it showed and frees its reservation' '
	use_fake
	state START.md <<-\EOS
	MOCK: bash echo $$ >shpid; sleep 60 => <result>x</result> || reply <result>done</result>
	EOS
	"$RAYMOND" wf --budget 1 >out 2>err &
	pid=$!
	wait_until 60 test -s shpid &&
	wait_until 60 one_call_seen &&
	state_json | grep -Eq "\"open_turns\":\{\"[0-9a-f-]+\":\{\"agent\":\"main\",\"cap\":1,\"seen\":[0-9.]+,\"shared\":true,\"usd\":1\}\}" &&
	kill -9 $pid &&
	wait $pid || :
	# The lost turn is still running; end its process group (ours).
	kill -9 -- -$(ps -o pgid= "$(cat shpid)" | tr -d " ") 2>/dev/null || :
	raymond --resume "$(run_id)" >out 2>err &&
	eq result "$(cat out)" done &&
	grep -qF "1 Claude turn(s) ended with the last process; counted at the usage they showed: \$0.0075" err &&
	# The resumed turn was offered the whole rest: nothing stayed reserved.
	log 2 | grep -qF "\"--max-budget-usd\",\"0.9925\"" &&
	near "$(run_cost)" 0.015 &&
	state_json | grep -q "\"open_turns\":{}"
'

# evaluated_wf: START.md, evaluated by haiku, routes YES to SHIP.sh.
evaluated_wf() {
	mkdir -p wf &&
	cat >wf/START.md <<-\EOS &&
	---
	evaluate:
	  prompt: "Answer YES. {{output}}"
	  routes:
	    YES: SHIP
	---
	MOCK: reply fine <goto>SHIP</goto>\nMOCK: reply YES
	EOS
	printf "echo \"<result>shipped</result>\"\n" >wf/SHIP.sh
}

test_expect_success 'raymond.evaluate gets its share as --max-budget-usd and its cost counts' '
	use_fake &&
	cat >wf.START <<-\EOS &&
	---
	evaluate:
	  model: haiku
	  prompt: |
	    Answer YES or NO.
	    {{output}}
	  routes:
	    YES: SHIP
	---
	review
	MOCK: reply looks good <goto>SHIP</goto>\nMOCK: reply YES
	EOS
	mkdir -p wf && mv wf.START wf/START.md &&
	printf "echo \"<result>shipped</result>\"\n" >wf/SHIP.sh &&
	raymond wf --budget 0.02 >out 2>err &&
	eq result "$(cat out)" shipped &&
	eq turns "$(wc -l <fake/log.jsonl)" 2 &&
	log 2 | grep -qF "\"--model\",\"haiku\"" &&
	log 2 | grep -qF "\"--max-budget-usd\",\"0.0125\"" &&
	near "$(run_cost)" "$(sum <fake/spend)"
'

test_expect_success 'raymond.evaluate is refused when the budget cannot pay for it, and the run stops' '
	use_fake &&
	evaluated_wf &&
	expect_status 3 "$RAYMOND" wf --budget 0.0125 >out 2>err &&
	eq turns "$(wc -l <fake/log.jsonl)" 1 &&
	grep -qF "budget exhausted: spent \$0.0075" err &&
	eq status "$(run_status)" stopped
'

test_expect_success 'an impossible cost from the CLI fails the run naming the value and the agent; it resumes' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	for v in 1e308 NaN -Infinity -0.5 "\"0.5\""; do
		rm -rf .raymond &&
		printf "%s\n" "#!/bin/sh" \
			"echo '\''{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\"}'\''" \
			"echo '\''{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"result\":\"<result>bad</result>\",\"session_id\":\"s\",\"total_cost_usd\":$v}'\''" \
			>bad-claude && chmod +x bad-claude &&
		expect_status 1 "$RAYMOND" wf --claude ./bad-claude >out 2>err || exit 1
		grep -F "wf/START.md (agent main): the Claude Code CLI reported an impossible cost: total_cost_usd = " err || exit 1
		case $v in
		1e308) grep -qF "total_cost_usd = 1e+308 (a turn costs from 0 to 1000 dollars)" err ;;
		-0.5) grep -qF "total_cost_usd = -0.5 (" err ;;
		\"0.5\") grep -qF "total_cost_usd = \"0.5\" (" err ;;
		esac || exit 1
		eq status "$(run_status)" failed || exit 1
		test ! -s out || exit 1
	done &&
	raymond --resume "$(run_id)" --claude "$FAKE" >out 2>err &&
	eq result "$(cat out)" ok
'

test_expect_success 'a PreTurn handler that spins while raymond.evaluate waits for it is stopped by the hook limits' '
	use_fake &&
	evaluated_wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTurn = function(ev)
	    if ev.turn.purpose == "evaluate" then while true do end end
	  end,
	}
	EOS
	RAYMOND_HOOK_INSTRUCTIONS=1000000 expect_status 1 timeout 60 "$RAYMOND" wf >out 2>err &&
	grep -q "hook exceeded its instruction budget" err &&
	eq turns "$(wc -l <fake/log.jsonl)" 1 &&
	eq status "$(run_status)" failed
'

test_expect_success 'a hook call cut by its time limit as raymond.evaluate ends: the turn is counted, nothing stays reserved, the run goes on' '
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT.md <<-\EOS &&
	MOCK: reply <result>next</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  on_error = "warn",
	  PreTransition = function(ev)
	    if ev.state ~= "START.sh" then return end
	    raymond.evaluate{ prompt = "Go on?\nMOCK: reply " .. string.rep("i", 50000) }
	  end,
	}
	EOS
	# The CLI keeps its stream going past the hook call'\''s 3 seconds the
	# first time, then answers: reading the long answer, raymond finds the
	# limit passed before the turn is closed.
	printf "%s\n" "#!/bin/sh" "if [ -e slow ]; then rm slow; end=\$((\$(date +%s) + 5))" \
		"while [ \$(date +%s) -lt \$end ]; do echo '\''{\"type\":\"system\",\"subtype\":\"status\"}'\''; sleep 0.2; done; fi" \
		"exec \"$FAKE\" \"\$@\"" >slow-claude && chmod +x slow-claude && touch slow &&
	RAYMOND_HOOK_SECONDS=3 timeout 60 "$RAYMOND" wf --budget 0.02 --claude ./slow-claude >out 2>err &&
	eq result "$(cat out)" next &&
	grep -q "failed in PreTransition: .*hook exceeded its time limit" err &&
	grep -qF "1 Claude turn(s) of raymond.evaluate in a PreTransition hook were cut before they were closed; counted at the usage they showed: \$0.0075" err &&
	eq turns "$(wc -l <fake/log.jsonl)" 2 &&
	near "$(run_cost)" "$(sum <fake/spend)" &&
	near "$(run_cost)" 0.015 &&
	state_json | grep -q "\"open_turns\":{}"
'

test_expect_success 'raymond.evaluate from a Cost handler is refused, naming the handler' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  Cost = function(ev) raymond.evaluate{ prompt = "again?" } end,
	}
	EOS
	expect_status 1 "$RAYMOND" wf >out 2>err &&
	grep -qF "hooks.lua:2: raymond.evaluate cannot be called from a Cost handler: its turn would need a PreTurn of its own" err &&
	eq turns "$(wc -l <fake/log.jsonl)" 1
'

test_expect_success 'a PreTurn share that is not a positive amount is an error naming it' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTurn = function() return { maxBudgetUsd = 0 } end }
	EOS
	expect_status 1 "$RAYMOND" wf --no-default-hooks >out 2>err &&
	grep -qF "wf/START.md (agent main): a hook gave this turn maxBudgetUsd = 0; it must be more than 0 and at most 1000000 dollars" err &&
	test ! -e fake/log.jsonl
'

test_expect_success 'a cap a PreState hook sets is the state'\''s own: reaching it fails the state, nothing is continued' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { PreState = function() return { maxBudgetUsd = 0.005 } end }
	EOS
	expect_status 1 "$RAYMOND" wf --budget 1 >out 2>err &&
	grep -qF "the invocation reached its --max-budget-usd before it finished" err &&
	eq turns "$(wc -l <fake/log.jsonl)" 1 &&
	log 1 | grep -qF "\"--max-budget-usd\",\"0.0050\"" &&
	near "$(run_cost)" 0.0075
'

test_done
