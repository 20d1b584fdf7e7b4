#!/bin/bash
# Markdown states with the fake Claude Code CLI: the command line, sessions,
# model and effort, templates, results, cost, budget, retries, usage limits,
# the debug record and a missing CLI.  Every check reads the fake's log
# ($FAKE_CLAUDE_DIR/log.jsonl, one JSON line per invocation) with grep/sed.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05 RAYMOND_LIMIT_MARGIN=0
unset CLAUDECODE

# jstr KEY / jnum KEY / jlit KEY: the value of the last "KEY" on each input
# line: a string without escaped quotes, a number, or true/false/null.
jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jnum() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\)[,}].*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }

# log N: the N-th invocation; logp LABEL: the invocations whose prompt
# starts with LABEL; argv N: the N-th invocation's argv as a JSON list.
log() { sed -n "${1}p" fake/log.jsonl; }
logp() { grep -F "\"prompt\":\"$1" fake/log.jsonl; }
argv() { log "$1" | sed -n 's/^{"argv":\(\[.*\]\),"cwd":.*/\1/p'; }

# run_fails ARGS...: raymond ARGS exits with status 1; its output goes to out
# and err.
run_fails() {
	expect_status 1 "$RAYMOND" "$@" >out 2>err ||
		{ echo "expected exit status 1: raymond $*"; sed "s/^/err: /" err; return 1; }
}

# has TEXT / lacks TEXT / has_line LINE: stdin holds TEXT (or not), or the
# whole line LINE; else say what it holds.
has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
has_line() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qFx -e "$1" || { echo "no line '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# eq WHAT GOT WANT
eq() { [ "$2" = "$3" ] || { echo "$1: expected '$3', got '$2'"; return 1; }; }

# approx GOT WANT: the numbers agree to 1e-9.
approx() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-9 && d > -1e-9) }' ||
		{ echo "expected about $2, got '$1'"; return 1; }
}

is_uuid() {
	echo "$1" | grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}' ||
		{ echo "not a uuid: '$1'"; return 1; }
}

# The status of the only run.
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }

DISALLOWED='"--disallowed-tools","EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"'

test_expect_success 'the command line: flags, "--" and the prompt on stdin, no CLAUDECODE' '
	use_fake &&
	export CLAUDECODE=1 &&
	mkdir wf && printf "MOCK: reply <result>ok</result>" >wf/START.md &&
	raymond wf >out &&
	eq stdout "$(cat out)" ok &&
	calls 1 &&
	s=$(log 1 | jstr session) && is_uuid "$s" &&
	eq argv "$(argv 1)" "[\"-p\",\"--output-format\",\"stream-json\",\"--verbose\",\"--permission-mode\",\"acceptEdits\",\"--session-id\",\"$s\",\"--max-budget-usd\",\"10.0000\",$DISALLOWED,\"--\"]" &&
	eq prompt "$(log 1 | jstr prompt)" "MOCK: reply <result>ok</result>" &&
	eq permission "$(log 1 | jstr permission)" acceptEdits &&
	eq stdin "$(log 1 | jlit stdin_is_devnull)" false &&
	eq CLAUDECODE "$(log 1 | jlit claudecode_env)" false &&
	eq cwd "$(log 1 | jstr cwd)" "$PWD"
'

test_expect_success '--dangerously-skip-permissions replaces the permission mode' '
	use_fake &&
	mkdir wf && printf "MOCK: reply <result>ok</result>" >wf/START.md &&
	IS_SANDBOX=1 raymond wf --dangerously-skip-permissions --budget 0 >out &&
	calls 1 &&
	s=$(log 1 | jstr session) &&
	eq argv "$(argv 1)" "[\"-p\",\"--output-format\",\"stream-json\",\"--verbose\",\"--dangerously-skip-permissions\",\"--session-id\",\"$s\",$DISALLOWED,\"--\"]" &&
	eq permission "$(log 1 | jstr permission)" skip
'

test_expect_success 'the first state is fresh; goto resumes the session; reset starts a new one' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	I am B
	MOCK: reply <reset>C</reset>
	EOS
	state C.md <<-\EOS &&
	I am C
	MOCK: reply <result>ok</result>
	EOS
	raymond wf >out &&
	calls 3 &&
	s1=$(log 1 | jstr session) && is_uuid "$s1" &&
	argv 1 | has "\"--session-id\",\"$s1\"" &&
	argv 1 | lacks "--resume" &&
	eq "1 resumed" "$(log 1 | jlit resumed)" false &&
	eq "1 n_history" "$(log 1 | jnum n_history)" 0 &&
	log 2 | has "\"prompt\":\"I am B" &&
	argv 2 | has "\"--resume\",\"$s1\",\"--max-budget-usd\"" &&
	argv 2 | lacks "--session-id" &&
	eq "2 session" "$(log 2 | jstr session)" "$s1" &&
	eq "2 resumed" "$(log 2 | jlit resumed)" true &&
	eq "2 n_history" "$(log 2 | jnum n_history)" 1 &&
	log 3 | has "\"prompt\":\"I am C" &&
	s3=$(log 3 | jstr session) && is_uuid "$s3" &&
	test "$s3" != "$s1" &&
	argv 3 | has "\"--session-id\",\"$s3\"" &&
	argv 3 | lacks "--resume" &&
	eq "3 resumed" "$(log 3 | jlit resumed)" false &&
	eq "3 n_history" "$(log 3 | jnum n_history)" 0
'

test_expect_success 'call branches the session; the callee goes on in the branch; the return resumes the caller' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <call return="BACK">SUB</call>
	EOS
	state SUB.md <<-\EOS &&
	I am SUB
	MOCK: reply <goto>SUB2</goto>
	EOS
	state SUB2.md <<-\EOS &&
	I am SUB2
	MOCK: reply <result>sub done</result>
	EOS
	state BACK.md <<-\EOS &&
	I am BACK
	MOCK: reply <result>back</result>
	EOS
	raymond wf >out &&
	eq stdout "$(cat out)" back &&
	calls 4 &&
	s1=$(log 1 | jstr session) && is_uuid "$s1" &&
	log 2 | has "\"prompt\":\"I am SUB\\n" &&
	s2=$(log 2 | jstr session) && is_uuid "$s2" &&
	test "$s2" != "$s1" &&
	argv 2 | has "\"--resume\",\"$s1\",\"--fork-session\",\"--session-id\",\"$s2\"" &&
	eq "2 forked" "$(log 2 | jlit forked)" true &&
	eq "2 n_history" "$(log 2 | jnum n_history)" 1 &&
	log 3 | has "\"prompt\":\"I am SUB2" &&
	argv 3 | has "\"--resume\",\"$s2\",\"--max-budget-usd\"" &&
	eq "3 session" "$(log 3 | jstr session)" "$s2" &&
	eq "3 forked" "$(log 3 | jlit forked)" false &&
	eq "3 n_history" "$(log 3 | jnum n_history)" 2 &&
	log 4 | has "\"prompt\":\"I am BACK" &&
	argv 4 | has "\"--resume\",\"$s1\",\"--max-budget-usd\"" &&
	eq "4 session" "$(log 4 | jstr session)" "$s1" &&
	eq "4 forked" "$(log 4 | jlit forked)" false &&
	eq "4 n_history" "$(log 4 | jnum n_history)" 1
'

test_expect_success 'function starts fresh; the return resumes the caller' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <function return="BACK">EVAL</function>
	EOS
	state EVAL.md <<-\EOS &&
	I am EVAL
	MOCK: reply <result>yes</result>
	EOS
	state BACK.md <<-\EOS &&
	I am BACK
	MOCK: reply <result>back</result>
	EOS
	raymond wf >out &&
	calls 3 &&
	s1=$(log 1 | jstr session) &&
	log 2 | has "\"prompt\":\"I am EVAL" &&
	s2=$(log 2 | jstr session) && is_uuid "$s2" &&
	test "$s2" != "$s1" &&
	argv 2 | has "\"--session-id\",\"$s2\"" &&
	argv 2 | lacks "--resume" &&
	eq "2 n_history" "$(log 2 | jnum n_history)" 0 &&
	log 3 | has "\"prompt\":\"I am BACK" &&
	argv 3 | has "\"--resume\",\"$s1\"" &&
	eq "3 session" "$(log 3 | jstr session)" "$s1" &&
	eq "3 n_history" "$(log 3 | jnum n_history)" 1
'

test_expect_success 'a fork worker starts fresh; the parent resumes its own session at next' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <fork next="NEXT" item="x">WORKER</fork>
	EOS
	state WORKER.md <<-\EOS &&
	I am WORKER
	MOCK: reply <result>w</result>
	EOS
	state NEXT.md <<-\EOS &&
	I am NEXT
	MOCK: reply <result>parent</result>
	EOS
	raymond wf >out &&
	eq stdout "$(cat out)" parent &&
	calls 3 &&
	s1=$(logp "I am START" | jstr session) && is_uuid "$s1" &&
	w=$(logp "I am WORKER") &&
	sw=$(echo "$w" | jstr session) && is_uuid "$sw" &&
	test "$sw" != "$s1" &&
	echo "$w" | has "\"--session-id\",\"$sw\"" &&
	echo "$w" | lacks "\"--resume\"" &&
	eq "worker n_history" "$(echo "$w" | jnum n_history)" 0 &&
	p=$(logp "I am NEXT") &&
	echo "$p" | has "\"--resume\",\"$s1\"" &&
	eq "parent session" "$(echo "$p" | jstr session)" "$s1" &&
	eq "parent n_history" "$(echo "$p" | jnum n_history)" 1
'

test_expect_success 'a script state between two markdown states leaves the session as it is' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <goto>MID</goto>
	EOS
	state MID.sh <<-\EOS &&
	echo "<goto>END</goto>"
	EOS
	state END.md <<-\EOS &&
	I am END
	MOCK: reply <result>end</result>
	EOS
	raymond wf >out &&
	eq stdout "$(cat out)" end &&
	calls 2 &&
	s1=$(log 1 | jstr session) &&
	argv 2 | has "\"--resume\",\"$s1\"" &&
	eq "2 session" "$(log 2 | jstr session)" "$s1" &&
	eq "2 n_history" "$(log 2 | jnum n_history)" 1
'

test_expect_success 'frontmatter model and effort beat --model and --effort, which apply otherwise' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	model: opus
	effort: low
	---
	I am START
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	I am B
	MOCK: reply <goto>C</goto>
	EOS
	state C.md <<-\EOS &&
	---
	model: haiku
	---
	I am C
	MOCK: reply <result>ok</result>
	EOS
	raymond wf --model sonnet --effort max >out &&
	calls 3 &&
	argv 1 | has "\"--permission-mode\",\"acceptEdits\",\"--model\",\"opus\",\"--effort\",\"low\",\"--session-id\"" &&
	argv 1 | lacks "\"sonnet\"" &&
	argv 1 | lacks "\"max\"" &&
	log 1 | jstr model | has claude-opus- &&
	eq "1 effort" "$(log 1 | jstr effort)" low &&
	argv 2 | has "\"--permission-mode\",\"acceptEdits\",\"--model\",\"sonnet\",\"--effort\",\"max\",\"--resume\"" &&
	log 2 | jstr model | has claude-sonnet- &&
	eq "2 effort" "$(log 2 | jstr effort)" max &&
	argv 3 | has "\"--permission-mode\",\"acceptEdits\",\"--model\",\"haiku\",\"--effort\",\"max\",\"--resume\"" &&
	eq "3 model" "$(log 3 | jstr model)" claude-haiku-4-5-20251001
'

test_expect_success 'templates: input, workflow_id, agent_id, result; unknown placeholders stay; payloads are not rescanned' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START input=[{{input}}] wf=[{{workflow_id}}] agent=[{{agent_id}}] nope=[{{nope}}] item=[{{item}}]
	MOCK: reply <call return="BACK">SUB</call>
	EOS
	state SUB.md <<-\EOS &&
	I am SUB input=[{{input}}] result=[{{result}}]
	MOCK: reply <result>from {{sub}}</result>
	EOS
	state BACK.md <<-\EOS &&
	I am BACK result=[{{result}}] input=[{{input}}] agent=[{{agent_id}}]
	MOCK: reply <result>back</result>
	EOS
	raymond wf --workflow-id tmpl-1 --input "x{{agent_id}}y" >out &&
	calls 3 &&
	log 1 | has "\"prompt\":\"I am START input=[x{{agent_id}}y] wf=[tmpl-1] agent=[main] nope=[{{nope}}] item=[{{item}}]\\n" &&
	log 2 | has "\"prompt\":\"I am SUB input=[{{input}}] result=[{{result}}]\\n" &&
	log 3 | has "\"prompt\":\"I am BACK result=[from {{sub}}] input=[from {{sub}}] agent=[main]\\n"
'

test_expect_success 'templates: a fork worker sees its attributes and its own agent id' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <fork next="NEXT" item="apple" input="pie">WORKER</fork>
	EOS
	state WORKER.md <<-\EOS &&
	I am WORKER item=[{{item}}] input=[{{input}}] agent=[{{agent_id}}] wf=[{{workflow_id}}]
	MOCK: reply <result>w</result>
	EOS
	state NEXT.md <<-\EOS &&
	I am NEXT item=[{{item}}] agent=[{{agent_id}}]
	MOCK: reply <result>parent</result>
	EOS
	raymond wf --workflow-id tmpl-2 >out &&
	calls 3 &&
	logp "I am WORKER item=[apple] input=[pie] agent=[main_worker1] wf=[tmpl-2]\\n" &&
	logp "I am NEXT item=[{{item}}] agent=[main]\\n"
'

test_expect_success 'a markdown state'\''s result payload is trimmed; the final result goes to stdout' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply Done.\n<result>  \n  spaced  out \n\n </result>
	EOS
	raymond wf >out 2>err &&
	printf "spaced  out\n" >want &&
	cmp want out &&
	has "\"result\":\"spaced  out\"" <"$(state_file)" &&
	eq status "$(run_status)" completed
'

test_expect_success 'cost: each turn is counted into the state file and the transition lines' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	raymond wf >out 2>err &&
	calls 2 &&
	approx "$(sed -n "s/.*\"cost\":\([0-9.e+-]*\).*/\1/p" "$(state_file)")" 0.015 &&
	has "START.md -> goto B.md (\$0.0075, run total \$0.0075)" <err &&
	has "(\$0.0075, run total \$0.0150)" <err
'

test_expect_success '--budget: each turn gets the rest as --max-budget-usd; no turn starts that the rest cannot pay for' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply 1 <goto>START</goto> || reply 2 <goto>START</goto> || reply 3 <goto>START</goto> || reply <result>fin</result>
	EOS
	expect_status 3 "$RAYMOND" wf --budget 0.02 >out 2>err &&
	calls 2 &&
	test ! -s out &&
	# 0.0050 is left after two turns, less than the cent a turn needs.
	has "budget exhausted: spent \$0.0150 and \$0.0000 reserved by 0 turn(s) in flight, of the \$0.02 budget; a turn needs at least \$0.01" <err &&
	eq status "$(run_status)" stopped &&
	argv 1 | has "\"--max-budget-usd\",\"0.0200\"" &&
	argv 2 | has "\"--max-budget-usd\",\"0.0125\"" &&
	s=$(log 1 | jstr session) &&
	raymond --resume "$(run_id)" --budget 1 >out 2>err &&
	eq stdout "$(cat out)" fin &&
	calls 4 &&
	argv 3 | has "\"--resume\",\"$s\",\"--max-budget-usd\",\"0.9850\"" &&
	eq status "$(run_status)" completed
'

test_expect_success '--budget 0 means no limit and no --max-budget-usd' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>START</goto> || reply <goto>START</goto> || reply <result>fin</result>
	EOS
	raymond wf --budget 0 >out 2>err &&
	eq stdout "$(cat out)" fin &&
	calls 3 &&
	lacks "--max-budget-usd" <fake/log.jsonl &&
	eq max_budget_usd "$(log 3 | jlit max_budget_usd)" null
'

test_expect_success 'an overloaded API is retried in a fresh session with a new id, saying why' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: error 529 || reply <result>ok</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" ok &&
	calls 2 &&
	has "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment.; retrying in" <err &&
	lacks "already in use" <err &&
	eq "1 step" "$(log 1 | jstr step)" error &&
	s=$(log 1 | jstr session) &&
	argv 1 | has "\"--session-id\",\"$s\"" &&
	eq "2 step" "$(log 2 | jstr step)" reply &&
	eq "2 resumed" "$(log 2 | jlit resumed)" false &&
	s2=$(log 2 | jstr session) && is_uuid "$s2" &&
	[ "$s2" != "$s" ] &&
	argv 2 | has "\"--session-id\",\"$s2\"" &&
	argv 2 | lacks "--resume" &&
	eq status "$(run_status)" completed
'

test_expect_success 'three failures stop the run: "Claude Code failed 3 times"' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: error 529
	EOS
	run_fails wf &&
	calls 3 &&
	has "Claude Code failed 3 times" <err &&
	has "529 Overloaded" <err &&
	eq status "$(run_status)" failed
'

test_expect_success 'an authentication error stops the run at once with a hint about logging in' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: error 401 || reply <result>ok</result>
	EOS
	run_fails wf &&
	calls 1 &&
	has "Invalid API key" <err &&
	has "hint: log in with" <err &&
	lacks "retrying" <err
'

test_expect_success 'a turn silent for longer than --timeout is killed and retried' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: hang 300 || reply <result>ok</result>
	EOS
	t0=$(now_ms) &&
	timeout 120 "$RAYMOND" wf --timeout 1 >out 2>err &&
	t=$(($(now_ms) - t0)) &&
	eq stdout "$(cat out)" ok &&
	calls 2 &&
	eq "1 step" "$(log 1 | jstr step)" hang &&
	has "no output for the inactivity limit" <err &&
	has "retrying" <err &&
	{ { [ "$t" -ge 1000 ] && [ "$t" -lt 60000 ]; } || { echo "took $t ms"; false; }; }
'

test_expect_success 'a usage limit waits until the reset, then goes on' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: limit 2 || reply <result>ok</result>
	EOS
	t0=$(now_ms) &&
	timeout 120 "$RAYMOND" wf >out 2>err &&
	t=$(($(now_ms) - t0)) &&
	eq stdout "$(cat out)" ok &&
	calls 2 &&
	eq "1 step" "$(log 1 | jstr step)" limit &&
	has "usage limit reached; waiting" <err &&
	{ { [ "$t" -ge 1000 ] && [ "$t" -lt 60000 ]; } || { echo "took $t ms"; false; }; }
'

test_expect_success 'with --no-wait a usage limit stops the run (exit 3), naming the reset and raymond --resume' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: limit 3600 || reply <result>ok</result>
	EOS
	# A run that waited for the reset instead would take an hour.
	expect_status 3 timeout 120 "$RAYMOND" wf --no-wait >out 2>err &&
	calls 1 &&
	test ! -s out &&
	eq status "$(run_status)" stopped &&
	has "usage limit reached" <err &&
	{ grep -q "resets at [0-9-]* [0-9:]* UTC" err || { cat err; false; }; } &&
	has "raymond --resume $(run_id)" <err &&
	has "\"error\":\"usage limit reached" <"$(state_file)"
'

test_expect_success 'the debug record keeps prompt, argv, stream, stderr and meta of a turn; --no-debug none' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	raymond wf --workflow-id dbg >out 2>err &&
	b=.raymond/debug/dbg.record &&
	for x in start prompt stdout end; do
		grep -a -q "^@ 1 $x " "$b" || { echo "missing piece $x"; cat "$b"; return 1; }
	done &&
	record_piece "$b" 1 prompt >prompt &&
	cmp wf/START.md prompt &&
	s=$(log 1 | jstr session) &&
	record_piece "$b" 1 start | has "\"--session-id\",\"$s\"" &&
	record_piece "$b" 1 start | has "\"name\":\"main_START.md\"" &&
	record_piece "$b" 1 stdout | has "\"type\":\"result\"" &&
	record_piece "$b" 1 end >meta &&
	has "\"session\":\"$s\"" <meta &&
	approx "$(jnum cost_usd <meta)" 0.0075 &&
	grep -a -q "^@ 1 transition " "$b" &&
	state ERR.sh <<-\EOS &&
	echo "to stderr" >&2
	echo "<result>e</result>"
	EOS
	raymond wf/ERR.sh --workflow-id dbg2 >out 2>err &&
	eq "stderr piece" "$(record_piece .raymond/debug/dbg2.record 1 stderr)" "to stderr" &&
	raymond wf --workflow-id nodbg --no-debug >out 2>err &&
	eq stdout "$(cat out)" ok &&
	test ! -e .raymond/debug/nodbg.record
'

test_expect_success 'a missing CLI stops the run at once with a hint to install it or give --claude' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	run_fails wf --claude /nonexistent/claude &&
	test ! -e fake/log.jsonl &&
	has "/nonexistent/claude" <err &&
	has "npm install" <err &&
	has "--claude" <err &&
	eq status "$(run_status)" failed
'

test_done
