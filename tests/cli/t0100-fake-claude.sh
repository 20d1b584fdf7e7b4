#!/bin/bash
# The fake Claude Code CLI (tests/fake/fake_claude.c), run directly: replies,
# cost, MOCK step sequences, sessions, the Bash tool, API errors, usage
# limits, hangs and the invocation log.  JSON is read with grep and sed only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake-lib.sh"

# approx A B: the numbers agree to 1e-12.
approx() {
	awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(a != "" && d < 1e-12 && d > -1e-12) }' ||
		{ echo "expected about $2, got '$1'"; return 1; }
}
is_uuid() { echo "$1" | grep -Eqx '[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}'; }

U1=11111111-1111-4111-8111-111111111111
U2=22222222-2222-4222-8222-222222222222

# A prompt full of bytes that need escaping: quote, backslash, \n (the
# step's newline), tab, a control byte, UTF-8 and an invalid byte.
escape_prompt() { printf 'MOCK: reply q"b\\s\\nnext\tT\001E \303\251 \377!'; }
escape_result() { printf '%s' '"result":"q\"b\\s\nnext\tT\u0001E é �!"'; }

test_expect_success 'version, unknown options and argument errors are those of the real CLI' '
	"$FAKE" --version >out &&
	test "$(cat out)" = "2.1.197 (Claude Code)" &&
	expect_status 1 fake --bogus -- hi 2>err &&
	test "$(cat err)" = "error: unknown option '\''--bogus'\''" &&
	expect_status 1 fake -x 2>err &&
	test "$(cat err)" = "error: unknown option '\''-x'\''" &&
	expect_status 1 fake --model 2>err &&
	grep -F "argument missing" err &&
	expect_status 1 fake --output-format xml -- hi 2>err &&
	grep -F "Allowed choices are text, json, stream-json." err &&
	expect_status 1 "$FAKE" -p --output-format stream-json -- hi 2>err </dev/null &&
	grep -F "stream-json requires --verbose" err &&
	expect_status 1 fake --disallowed-tools Bash hi 2>err &&
	grep -F "Error: Input must be provided either through stdin or as a prompt argument" err &&
	expect_status 2 env -u FAKE_CLAUDE_DIR "$FAKE" -p -- hi 2>err </dev/null &&
	grep -F FAKE_CLAUDE_DIR err &&
	test ! -e fc
'

test_expect_success 'a prompt without a MOCK line gets the reply "ok"' '
	fake -- "just a prompt" >out &&
	test "$(wc -l <out)" = 3 &&
	jline system out | grep -F "\"subtype\":\"init\"" &&
	test "$(jline system out | jstr cwd)" = "$PWD" &&
	test "$(jline system out | jstr model)" = "claude-opus-4-8[1m]" &&
	jline system out | grep -F "\"tools\":[\"Bash\"]" &&
	jline assistant out | grep -F "\"content\":[{\"type\":\"text\",\"text\":\"ok\"}]" &&
	test "$(jline result out | jstr result)" = ok &&
	test "$(jline result out | jstr subtype)" = success &&
	test "$(jline result out | jlit is_error)" = false &&
	test "$(jline result out | jlit api_error_status)" = null &&
	test "$(jline result out | jnum num_turns)" = 1 &&
	test "$(jline result out | jnum total_cost_usd)" = 0.0075 &&
	jline result out | grep -F "\"usage\":{\"input_tokens\":1000," &&
	jline result out | grep -F "\"output_tokens\":100," &&
	sid=$(jline system out | jstr session_id) &&
	is_uuid "$sid" &&
	test "$(jline result out | jstr session_id)" = "$sid" &&
	test "$(lastlog | jstr session)" = "$sid" &&
	test "$(lastlog | jstr step)" = default &&
	test "$(lastlog | jlit mock)" = null &&
	test "$(lastlog | jlit index)" = null
'

test_expect_success 'reply TEXT: \n is a newline and every byte is escaped as JSON' '
	fake -- "$(escape_prompt)" >out &&
	jline result out | grep -F "$(escape_result)" &&
	lastlog | grep -F "\"prompt\":\"MOCK: reply q\\\"b\\\\s\\\\nnext\\tT\\u0001E é �!\"" &&
	fake -- "$(printf "first line\n  MOCK: reply two\\\\nlines  \nlast")" >out &&
	jline result out | grep -F "\"result\":\"two\nlines\"" &&
	fake -- "MOCK: reply" >out &&
	jline result out | grep -F "\"result\":\"\""
'

test_expect_success 'the cost is priced by model from MOCK-USAGE tokens' '
	fake --model haiku -- hi >out &&
	test "$(jline system out | jstr model)" = claude-haiku-4-5-20251001 &&
	test "$(jline result out | jnum total_cost_usd)" = 0.0015 &&
	fake --model sonnet -- hi >out &&
	test "$(jline result out | jnum total_cost_usd)" = 0.0045000000000000005 &&
	fake --model opus -- hi >out &&
	test "$(jline result out | jnum total_cost_usd)" = 0.0075 &&
	fake --model claude-3-5-haiku-20241022 -- hi >out &&
	approx "$(jline result out | jnum total_cost_usd)" 0.0012 &&
	fake --model fable -- hi >out &&
	approx "$(jline result out | jnum total_cost_usd)" 0.015 &&
	fake --model some-unknown-model -- hi >out &&
	test "$(jline result out | jnum total_cost_usd)" = 0.0075 &&
	fake -- "$(printf "MOCK-USAGE: 2000 300\nMOCK: reply priced")" >out &&
	approx "$(jline result out | jnum total_cost_usd)" 0.0175 &&
	jline result out | grep -F "\"input_tokens\":2000," &&
	jline result out | grep -F "\"output_tokens\":300," &&
	fake --model sonnet -- "$(printf "MOCK-USAGE: 0 1000000\nMOCK: reply big")" >out &&
	test "$(jline result out | jnum total_cost_usd)" = 15
'

test_expect_success 'the k-th invocation with a MOCK line gets the k-th step, the last repeats' '
	p="MOCK: error 529 || reply second || reply third" &&
	expect_status 1 fake -- "$p" >out1 &&
	fake -- "$(printf "other text\n%s" "$p")" >out2 &&
	fake -- "MOCK: reply elsewhere" >other &&
	fake -- "$p" >out3 &&
	fake -- "$p" >out4 &&
	test "$(jline result out1 | jnum api_error_status)" = 529 &&
	test "$(jline result out2 | jstr result)" = second &&
	test "$(jline result other | jstr result)" = elsewhere &&
	test "$(jline result out3 | jstr result)" = third &&
	test "$(jline result out4 | jstr result)" = third &&
	l=$(sed -n 4p fc/log.jsonl) &&
	test "$(echo "$l" | jstr step)" = reply &&
	test "$(echo "$l" | jstr mock)" = "error 529 || reply second || reply third" &&
	test "$(echo "$l" | jnum index)" = 3 &&
	test "$(lastlog | jnum index)" = 4 &&
	FAKE_CLAUDE_DIR=$PWD/fc2 expect_status 1 fake -- "$p" >fresh &&
	test "$(jline result fresh | jnum api_error_status)" = 529
'

test_expect_success 'an unknown step replies with a text saying so, like the mock API' '
	fake -- "MOCK: dance wildly" >out 2>err &&
	test "$(jline result out | jstr result)" = "fake-claude: unknown step: dance wildly" &&
	grep -F "unknown step: dance wildly" err &&
	test "$(lastlog | jstr step)" = unknown
'

test_expect_success 'parallel invocations with one MOCK line get distinct steps' '
	p="MOCK: reply 1 || reply 2 || reply 3 || reply 4 || reply 5 || reply 6 || reply 7 || reply 8" &&
	for i in 1 2 3 4 5 6 7 8; do fake -- "$p" >out$i & done &&
	wait &&
	cat out? | jline result /dev/stdin | jstr result | sort >got &&
	seq 1 8 >want &&
	diff want got &&
	test "$(wc -l <fc/log.jsonl)" = 8
'

test_expect_success 'a fresh session takes --session-id; reusing it is an error' '
	fake --session-id $U1 -- "MOCK: reply one" >out &&
	test "$(jline system out | jstr session_id)" = $U1 &&
	test "$(jline assistant out | jstr session_id)" = $U1 &&
	test "$(jline result out | jstr session_id)" = $U1 &&
	test "$(lastlog | jstr session)" = $U1 &&
	test "$(lastlog | jlit resumed)" = false &&
	test "$(lastlog | jlit forked)" = false &&
	test "$(lastlog | jnum n_history)" = 0 &&
	expect_status 1 fake --session-id $U1 -- again >out 2>err &&
	test "$(cat err)" = "Error: Session ID $U1 is already in use." &&
	test ! -s out &&
	test "$(wc -l <fc/log.jsonl)" = 1 &&
	expect_status 1 fake --session-id not-a-uuid -- hi 2>err &&
	grep -F "Invalid session ID" err &&
	expect_status 1 fake --resume $U1 --session-id $U2 -- hi 2>err &&
	grep -F "fork-session" err
'

test_expect_success 'resume keeps the session and sees its history grow' '
	fake --session-id $U1 -- one >out &&
	fake --resume $U1 -- two >out &&
	test "$(jline system out | jstr session_id)" = $U1 &&
	test "$(jline result out | jstr session_id)" = $U1 &&
	test "$(lastlog | jlit resumed)" = true &&
	test "$(lastlog | jlit forked)" = false &&
	test "$(lastlog | jnum n_history)" = 1 &&
	fake --resume $U1 -- three >out &&
	test "$(lastlog | jnum n_history)" = 2 &&
	test "$(lastlog | jstr prompt)" = three &&
	fake -- "no session given" >out &&
	test "$(lastlog | jnum n_history)" = 0 &&
	test "$(jline result out | jstr session_id)" != $U1
'

test_expect_success 'a fork copies the history; the original never sees the fork'\''s turns' '
	fake --session-id $U1 -- one &&
	fake --resume $U1 -- two &&
	fake --resume $U1 --fork-session --session-id $U2 -- "fork turn" >out &&
	test "$(jline system out | jstr session_id)" = $U2 &&
	test "$(jline result out | jstr session_id)" = $U2 &&
	test "$(lastlog | jlit forked)" = true &&
	test "$(lastlog | jlit resumed)" = true &&
	test "$(lastlog | jnum n_history)" = 2 &&
	fake --resume $U2 -- "fork again" &&
	test "$(lastlog | jnum n_history)" = 3 &&
	fake --resume $U1 -- "back on the original" &&
	test "$(lastlog | jstr session)" = $U1 &&
	test "$(lastlog | jnum n_history)" = 2 &&
	fake --resume $U1 --fork-session -- "unnamed fork" >out &&
	sid=$(jline result out | jstr session_id) &&
	is_uuid "$sid" &&
	test "$sid" != $U1 && test "$sid" != $U2 &&
	test "$(lastlog | jnum n_history)" = 3 &&
	expect_status 1 fake --resume $U1 --fork-session --session-id $U2 -- x 2>err &&
	test "$(cat err)" = "Error: Session ID $U2 is already in use."
'

test_expect_success 'resuming an unknown session, or from another cwd, finds no conversation' '
	expect_status 1 fake --resume $U1 -- hi >out 2>err &&
	test "$(wc -l <out)" = 1 &&
	test "$(jline result out | jstr subtype)" = error_during_execution &&
	test "$(jline result out | jlit is_error)" = true &&
	jline result out | grep -F "\"errors\":[\"No conversation found with session ID: $U1\"]" &&
	is_uuid "$(jline result out | jstr session_id)" &&
	grep -Fx "No conversation found with session ID: $U1" err &&
	test ! -e fc/log.jsonl &&
	export FAKE_CLAUDE_DIR=$PWD/fc &&
	mkdir a b &&
	(cd a && fake --session-id $U1 -- "in a") &&
	(cd b && expect_status 1 fake --resume $U1 -- "in b") >out &&
	jline result out | grep -F "No conversation found with session ID: $U1" &&
	(cd a && fake --resume $U1 -- "in a again") >out &&
	test "$(jline result out | jstr session_id)" = $U1 &&
	expect_status 1 fake --resume nonsense -- hi 2>err &&
	grep -F "\"nonsense\" is not a UUID" err
'

test_expect_success 'a bash step runs the command in the cwd, then replies' '
	fake -- "MOCK: bash echo made >made.txt; echo out; echo warn >&2 => <result>done</result>" >out &&
	test "$(cat made.txt)" = made &&
	test "$(wc -l <out)" = 5 &&
	test "$(sed -n 1p out | jstr type)" = system &&
	sed -n 2p out | grep -F "\"type\":\"tool_use\"" &&
	sed -n 2p out | grep -F "\"name\":\"Bash\",\"input\":{\"command\":\"echo made >made.txt; echo out; echo warn >&2\"" &&
	tid=$(sed -n 2p out | sed -n "s/.*\"id\":\"\(toolu_[^\"]*\)\".*/\1/p") &&
	test -n "$tid" &&
	sed -n 3p out | grep -F "{\"type\":\"user\"" &&
	sed -n 3p out | grep -F "\"tool_use_id\":\"$tid\",\"type\":\"tool_result\",\"content\":\"out\nwarn\",\"is_error\":false" &&
	sed -n 3p out | grep -F "\"stdout\":\"out\",\"stderr\":\"warn\"" &&
	sed -n 4p out | grep -F "\"text\":\"<result>done</result>\"" &&
	test "$(jline result out | jstr result)" = "<result>done</result>" &&
	test "$(jline result out | jnum num_turns)" = 2 &&
	test "$(jline result out | jnum total_cost_usd)" = 0.015 &&
	jline result out | grep -F "\"usage\":{\"input_tokens\":2000," &&
	jline result out | grep -F "\"output_tokens\":200," &&
	fake -- "MOCK: bash exit 3 => after" >out &&
	jline user out | grep -F "\"content\":\"Exit code 3\",\"is_error\":true" &&
	test "$(jline result out | jstr result)" = after &&
	fake -- "MOCK: bash true" >out &&
	jline user out | grep -F "\"content\":\"(Bash completed with no output)\"" &&
	test "$(jline result out | jstr result)" = ""
'

test_expect_success 'with Bash disallowed the tool call fails and nothing runs' '
	fake --disallowed-tools EnterPlanMode,Bash,AskUserQuestion -- "MOCK: bash touch nope => fine" >out &&
	jline system out | grep -F "\"tools\":[]" &&
	jline user out | grep -F "No such tool available: Bash" &&
	jline user out | grep -F "\"is_error\":true" &&
	test ! -e nope &&
	test "$(jline result out | jstr result)" = fine &&
	fake --disallowed-tools EnterPlanMode -- "MOCK: bash touch yes => fine" >out &&
	test -e yes
'

test_expect_success 'error STATUS prints the API error like the real CLI and exits 1' '
	tail=" This is a server-side issue, usually temporary — try again in a moment." &&
	for s in 529 500 429 401; do
		expect_status 1 fake -- "MOCK: error $s" >out$s || return 1
		test "$(wc -l <out$s)" = 3 || return 1
		jline assistant out$s | grep -F "\"model\":\"<synthetic>\"" || return 1
		test "$(jline result out$s | jstr subtype)" = success || return 1
		test "$(jline result out$s | jlit is_error)" = true || return 1
		test "$(jline result out$s | jnum api_error_status)" = $s || return 1
		test "$(jline result out$s | jnum total_cost_usd)" = 0 || return 1
	done &&
	test "$(jline result out529 | jstr result)" = "API Error: 529 Overloaded.$tail" &&
	test "$(jline result out500 | jstr result)" = "API Error: 500 Internal server error.$tail" &&
	test "$(jline result out429 | jstr result)" = "API Error: Request rejected (429) · Rate limited" &&
	test "$(jline result out401 | jstr result)" = "Invalid API key · Fix external API key" &&
	test "$(jline assistant out529 | jstr error)" = server_error &&
	test "$(jline assistant out429 | jstr error)" = rate_limit &&
	test "$(jline assistant out401 | jstr error)" = authentication_failed &&
	expect_status 1 fake -- "MOCK: error soon" >out &&
	test "$(jline result out | jnum api_error_status)" = 500
'

test_expect_success 'limit SECONDS prints a rate_limit_event and the session-limit text' '
	before=$(date +%s) &&
	expect_status 1 fake -- "MOCK: limit 7200" >out &&
	after=$(date +%s) &&
	test "$(wc -l <out)" = 4 &&
	test "$(sed -n 2p out | jstr type)" = rate_limit_event &&
	ev=$(jline rate_limit_event out) &&
	test "$(echo "$ev" | jstr status)" = rejected &&
	test "$(echo "$ev" | jstr rateLimitType)" = five_hour &&
	at=$(echo "$ev" | jnum resetsAt) &&
	test "$at" -ge $((before + 7200)) && test "$at" -le $((after + 7200)) &&
	if [ "$(date -u -d @$at +%M)" = 00 ]; then when=$(date -u -d @$at +%-I%P)
	else when=$(date -u -d @$at +%-I:%M%P); fi &&
	test "$(jline result out | jstr result)" = "You'\''ve hit your session limit · resets $when (UTC)" &&
	test "$(jline result out | jlit is_error)" = true &&
	test "$(jline result out | jnum api_error_status)" = 429 &&
	test "$(lastlog | jstr step)" = limit &&
	expect_status 1 fake -- "MOCK: limit 60 seven_day" >out &&
	test "$(jline rate_limit_event out | jstr rateLimitType)" = seven_day &&
	jline result out | jstr result | grep "^You'\''ve hit your weekly limit · resets " &&
	expect_status 1 fake -- "MOCK: limit 60 seven_day_opus" >out &&
	jline result out | jstr result | grep "^You'\''ve hit your Opus limit · resets "
'

test_expect_success 'hang SECONDS prints only the init line, sleeps, then replies empty' '
	t0=$(now_ms) &&
	fake -- "MOCK: hang 1" >out &&
	test $(($(now_ms) - t0)) -ge 1000 &&
	test "$(jline result out | jstr result)" = "" &&
	test "$(jline result out | jlit is_error)" = false &&
	{ FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p --output-format stream-json --verbose -- "MOCK: hang 300" </dev/null >out2 & } &&
	pid=$! &&
	wait_until 60 test -s out2 &&
	jline system out2 &&
	kill -TERM $pid &&
	expect_status 143 wait $pid &&
	test "$(wc -l <out2)" = 1
'

test_expect_success 'the log records argv, session, model, effort, permission, budget, stdin, env' '
	CLAUDECODE=1 fake --permission-mode acceptEdits --model haiku --effort low \
		--max-budget-usd 2.5 --session-id $U1 -- "MOCK: reply logged" >out &&
	l=$(lastlog) &&
	echo "$l" | grep -F "\"argv\":[\"-p\",\"--output-format\",\"stream-json\",\"--verbose\",\"--permission-mode\",\"acceptEdits\",\"--model\",\"haiku\",\"--effort\",\"low\",\"--max-budget-usd\",\"2.5\",\"--session-id\",\"$U1\",\"--\",\"MOCK: reply logged\"]" &&
	test "$(echo "$l" | jstr cwd)" = "$PWD" &&
	test "$(echo "$l" | jstr session)" = $U1 &&
	test "$(echo "$l" | jstr prompt)" = "MOCK: reply logged" &&
	test "$(echo "$l" | jstr model)" = claude-haiku-4-5-20251001 &&
	test "$(echo "$l" | jlit effort)" = null &&
	test "$(echo "$l" | jstr permission)" = acceptEdits &&
	test "$(echo "$l" | jnum max_budget_usd)" = 2.5 &&
	test "$(echo "$l" | jlit stdin_is_devnull)" = true &&
	test "$(echo "$l" | jlit claudecode_env)" = true &&
	test "$(echo "$l" | jstr step)" = reply &&
	test "$(echo "$l" | jstr mock)" = "reply logged" &&
	test "$(echo "$l" | jnum index)" = 1 &&
	test "$(echo "$l" | jnum input_tokens)" = 1000 &&
	test "$(echo "$l" | jnum output_tokens)" = 100 &&
	test "$(jline system out | jstr permissionMode)" = acceptEdits &&
	echo | env -u CLAUDECODE IS_SANDBOX=1 FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p --output-format stream-json \
		--verbose --dangerously-skip-permissions --effort max -- hi >out &&
	l=$(lastlog) &&
	test "$(echo "$l" | jstr permission)" = skip &&
	test "$(echo "$l" | jstr effort)" = max &&
	test "$(echo "$l" | jlit max_budget_usd)" = null &&
	test "$(echo "$l" | jlit stdin_is_devnull)" = false &&
	test "$(echo "$l" | jlit claudecode_env)" = false &&
	test "$(jline system out | jstr permissionMode)" = bypassPermissions &&
	fake --effort bogus -- hi >out 2>err &&
	grep -F "Unknown --effort value '\''bogus'\''" err &&
	test "$(lastlog | jstr effort)" = high &&
	test "$(lastlog | jlit permission)" = null
'

test_expect_success 'FAKE_CLAUDE_DELAY_MS delays the reply' '
	t0=$(now_ms) &&
	FAKE_CLAUDE_DELAY_MS=400 fake -- hi >out &&
	test $(($(now_ms) - t0)) -ge 400 &&
	test "$(jline result out | jnum duration_ms)" -ge 400
'

test_expect_success 'json and text output formats print only the result' '
	FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p --output-format json -- "MOCK: reply as json" </dev/null >out &&
	test "$(wc -l <out)" = 1 &&
	test "$(jline result out | jstr result)" = "as json" &&
	FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p -- "$(printf "MOCK: reply two\\\\nlines")" </dev/null >out &&
	printf "two\nlines\n" >want &&
	diff want out &&
	expect_status 1 env FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p -- "MOCK: error 529" </dev/null >out &&
	grep "^API Error: 529 Overloaded" out &&
	echo "MOCK: reply from stdin" | FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p >out &&
	test "$(cat out)" = "from stdin"
'
test_done
