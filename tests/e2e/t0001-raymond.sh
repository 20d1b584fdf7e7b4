#!/bin/bash
# raymond with the real Claude Code CLI against the mock Anthropic API.
#
# Each test's MOCK lines carry the test's own marker, because the mock's
# step counters last for the whole script.  Assertions read the mock's
# request log: which prompts a request carried shows what the model saw.
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1
export RAYMOND_RETRY_DELAY=0.1

# The requests (as JSON lines) whose latest prompt contains TEXT.
requests_for() {
	jsonl "$(mock_log)" "d.prompt && d.prompt.includes($(printf '%s' "$1" | node -p 'JSON.stringify(require("fs").readFileSync(0, "utf8"))')) && d"
}

# How many earlier prompts the request for TEXT carried in its history.
history_of() {
	requests_for "$1" | tail -1 | node -p 'JSON.parse(require("fs").readFileSync(0, "utf8")).prompts.length - 1'
}

# Whether the request for TEXT carried a prompt containing OTHER.
saw() {
	requests_for "$1" | tail -1 | node -e '
const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.exit(d.prompts.some(p => p.includes(process.argv[1])) ? 0 : 1)' "$2"
}

test_expect_success 'goto resumes the session: the next state sees the earlier turn' '
	state START.md <<-\EOS &&
	first state g1
	MOCK: reply <goto>NEXT</goto> g1
	EOS
	state NEXT.md <<-\EOS &&
	second state g1
	MOCK: reply <result>done g1</result>
	EOS
	raymond wf --quiet >out &&
	same "$(cat out)" "done g1" &&
	same "$(history_of "second state g1")" 1 &&
	saw "second state g1" "first state g1"
'

test_expect_success 'reset starts fresh: the next state sees nothing before it' '
	state START.md <<-\EOS &&
	first state r1
	MOCK: reply <reset>NEXT</reset>
	EOS
	state NEXT.md <<-\EOS &&
	second state r1
	MOCK: reply <result>done r1</result>
	EOS
	raymond wf --quiet >out &&
	same "$(cat out)" "done r1" &&
	same "$(history_of "second state r1")" 0
'

test_expect_success 'call branches: the child sees the caller, the caller resumes without the child' '
	state START.md <<-\EOS &&
	caller state c1
	MOCK: reply <call return="AFTER">CHILD</call>
	EOS
	state CHILD.md <<-\EOS &&
	child state c1
	MOCK: reply <result>child said hi c1</result>
	EOS
	state AFTER.md <<-\EOS &&
	after state c1 got {{result}}
	MOCK: reply <result>after c1</result>
	EOS
	raymond wf --quiet >out &&
	same "$(cat out)" "after c1" &&
	saw "child state c1" "caller state c1" &&
	saw "after state c1" "caller state c1" &&
	! saw "after state c1" "child state c1" &&
	requests_for "after state c1 got child said hi c1" | grep -q . &&
	same "$(history_of "after state c1")" 1
'

test_expect_success 'function starts fresh, and its result returns to the caller session' '
	state START.md <<-\EOS &&
	caller state f1
	MOCK: reply <function return="AFTER">EVAL</function>
	EOS
	state EVAL.md <<-\EOS &&
	eval state f1
	MOCK: reply <result>YES</result>
	EOS
	state AFTER.md <<-\EOS &&
	after state f1 verdict {{result}}
	MOCK: reply <result>after f1</result>
	EOS
	raymond wf --quiet >out &&
	same "$(cat out)" "after f1" &&
	same "$(history_of "eval state f1")" 0 &&
	saw "after state f1 verdict YES" "caller state f1"
'

# Parallel, proved without a clock: each worker marks that it started,
# then waits (up to 90 s) until both have, and only then writes both_ITEM.
# Workers run one after the other would never see each other's mark.
test_expect_success 'fork workers start fresh and run in parallel' '
	state START.md <<-\EOS &&
	dispatch p1
	MOCK: reply <fork item="a">W</fork><fork item="b">W</fork><goto>DONE</goto>
	EOS
	state W.md <<-\EOS &&
	worker p1 {{item}}
	MOCK: bash touch started_{{item}}; for i in $(seq 900); do [ -e started_a ] && [ -e started_b ] && touch both_{{item}} && break; sleep 0.1; done => <result>worked</result>
	EOS
	state DONE.md <<-\EOS &&
	done p1
	MOCK: reply <result>all dispatched p1</result>
	EOS
	raymond wf --quiet --dangerously-skip-permissions >out &&
	same "$(cat out)" "all dispatched p1" &&
	same "$(history_of "worker p1 a")" 0 &&
	same "$(history_of "worker p1 b")" 0 &&
	test -e both_a && test -e both_b
'

test_expect_success 'a reply without an allowed tag is re-prompted with a reminder in the same session' '
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: goto, target: NEXT }
	  - { tag: result }
	---
	choose m1
	MOCK: reply I forgot the tag || reply <goto>NEXT</goto>
	EOS
	state NEXT.md <<-\EOS &&
	next m1
	MOCK: reply <result>reminded m1</result>
	EOS
	raymond wf >out 2>err &&
	same "$(cat out)" "reminded m1" &&
	requests_for "REMINDER" | grep -q "choose m1" &&
	saw "REMINDER" "choose m1" &&
	grep -q "reminding the model" err
'

test_expect_success 'the budget stops the run, naming spend and limit' '
	state START.md <<-\EOS &&
	spend b1
	MOCK-USAGE: 100000 1000
	MOCK: reply <goto>START</goto>
	EOS
	expect_status 3 "$RAYMOND" wf --budget 1 2>err &&
	grep -q "budget exceeded: spent \$1\.[0-9]* of the \$1\.00 budget" err &&
	grep -qx "raymond: run $(run_id) stopped; continue with: raymond --resume $(run_id) --budget 2.05" err &&
	grep -q "\"status\":\"stopped\"" "$(state_file)" &&
	test "$(requests_for "spend b1" | wc -l)" -ge 2
'

test_expect_success 'an overloaded API (529) is retried and the run goes on' '
	state START.md <<-\EOS &&
	busy o1
	MOCK: error 529 || reply <result>survived o1</result>
	EOS
	raymond wf >out 2>err &&
	same "$(cat out)" "survived o1" &&
	grep -q "retrying" err &&
	test "$(requests_for "busy o1" | wc -l)" = 2
'

test_expect_success 'a usage limit pauses the run until it resets' '
	e2e_oauth &&
	export RAYMOND_LIMIT_MARGIN=0 &&
	state START.md <<-\EOS &&
	limited u1
	MOCK: limit 3 || reply <result>after the limit u1</result>
	EOS
	start=$(date +%s) &&
	raymond wf >out 2>err &&
	elapsed=$(( $(date +%s) - start )) &&
	e2e_apikey &&
	same "$(cat out)" "after the limit u1" &&
	grep -q "usage limit reached; waiting" err &&
	echo "elapsed ${elapsed}s" &&
	test "$elapsed" -ge 2
'

# The limit is 20 s, not less: on a loaded machine the CLI itself may print
# nothing for several seconds as it starts, and a limit it cannot meet
# would stop every attempt.  The hang lasts 600 s: a turn waited out
# instead of stopped after 20 s could not finish under the 300 s ceiling.
test_expect_success 'a turn silent for the inactivity limit is stopped and retried' '
	state START.md <<-\EOS &&
	slow t1
	MOCK: hang 600 || reply <result>woke t1</result>
	EOS
	start=$(date +%s) &&
	raymond wf --timeout 20 >out 2>err || { cat err; false; } &&
	elapsed=$(( $(date +%s) - start )) &&
	same "$(cat out)" "woke t1" &&
	grep -q "no output" err &&
	echo "elapsed ${elapsed}s" &&
	test "$elapsed" -lt 300
'

test_expect_success 'the Bash tool runs in the agent directory: a file is created' '
	state START.md <<-\EOS &&
	make a file x1
	MOCK: bash touch made-by-claude.txt => <result>made x1</result>
	EOS
	raymond wf --quiet >out &&
	same "$(cat out)" "made x1" &&
	test -f made-by-claude.txt
'

test_done
