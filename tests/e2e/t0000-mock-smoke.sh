#!/bin/bash
# The mock API against the real Claude Code CLI, without raymond: every
# step kind of tests/README.md, step counting, usage and cost, session
# titles, --session-id/--resume and --fork-session; then the fake claude
# beside the real CLI on the same hook and tool cases, which must agree.
# The tests share one mock, so each uses MOCK lines of its own.
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1

# The mock's log lines whose prompt contains TEXT, as the JS expression EXPR.
logged() { jsonl "$MOCK_LOG" "d.prompt.includes(\"$1\") && ($2)"; }

# Exactly one result line and EXPR holds of it.
one_result() {
	n=$(jsonl out 'd.type == "result"' | wc -l) &&
	{ [ "$n" -eq 1 ] || { echo "expected one result line, got $n"; cat out; return 1; }; } &&
	result_check out "$1"
}

check_reply() {
	one_result 'r.subtype == "success" && !r.is_error && r.result === "hello from t1\nsecond line" && r.total_cost_usd > 0 && r.num_turns == 1' &&
	same "$(jsonl out 'd.type == "system" && d.subtype')" init &&
	same "$(logged 't1' 'd.step')" reply &&
	same "$(logged 't1' 'd.index')" 1 &&
	same "$(logged 't1' 'd.status')" 200 &&
	same "$(logged 't1' 'd.model')" claude-opus-4-8 &&
	same "$(logged 't1' 'd.session')" "$(jsonl out 'd.type == "result" && d.session_id')"
}

test_expect_success 'reply: the result is the text, with a cost' '
	claude_p -- "Say hello.
MOCK: reply hello from t1\nsecond line" >out 2>err &&
	check_reply
'

test_expect_success 'no MOCK line: the reply is ok' '
	claude_p -- "Just answer, t2." >out 2>err &&
	one_result "r.result === \"ok\" && !r.is_error" &&
	same "$(logged t2 d.step)" default
'

check_bash() {
	one_result 'r.result === "made it t3" && !r.is_error && r.num_turns == 2' &&
	same "$(jsonl out 'd.type == "assistant" && d.message.content[0].type == "tool_use" && d.message.content[0].name')" Bash &&
	same "$(jsonl out 'd.type == "user" && d.message.content[0].type == "tool_result" && String(d.message.content[0].is_error)')" false &&
	same "$(logged t3 'd.step' | tr '\n' ' ')" "bash tool-followup " &&
	same "$(logged t3 'd.step == "bash" && d.index')" 1
}

test_expect_success 'bash: the CLI runs the command, then gets the text' '
	claude_p -- "MOCK: bash echo made > made.txt => made it t3" >out 2>err &&
	same "$(cat made.txt)" made &&
	check_bash
'

check_529() {
	one_result 'r.is_error === true && r.api_error_status == 529 && r.total_cost_usd == 0 && r.result.startsWith("API Error: 529 Overloaded.")' &&
	same "$(jsonl out 'd.type == "assistant" && d.error')" server_error &&
	same "$(logged t4 'd.status')" 529
}

test_expect_success 'error 529: is_error, api_error_status 529, exit status 1' '
	expect_status 1 claude_p -- "MOCK: error 529 (t4)" >out 2>err &&
	check_529
'

test_expect_success 'error 429/500/401 with an API key' '
	expect_status 1 claude_p -- "MOCK: error 429 (t4b)" >out 2>err &&
	one_result "r.is_error && r.api_error_status == 429 && r.result.startsWith(\"API Error: Request rejected (429)\")" &&
	expect_status 1 claude_p -- "MOCK: error 500 (t4b)" >out 2>err &&
	one_result "r.is_error && r.api_error_status == 500 && r.result.startsWith(\"API Error: 500 \")" &&
	expect_status 1 claude_p -- "MOCK: error 401 (t4b)" >out 2>err &&
	one_result "r.is_error && r.api_error_status == 401 && r.result == \"Invalid API key · Fix external API key\""
'

check_404() {
	one_result 'r.is_error && r.api_error_status == 404 && r.result.startsWith("There\u0027s an issue with the selected model")' &&
	same "$(logged t4c 'String(d.stream)' | tr '\n' ' ')" "true false " &&
	same "$(logged t4c 'd.index' | tr '\n' ' ')" "1 1 " &&
	same "$(logged t4c 'd.retry && d.step')" error
}

test_expect_success 'error 404: the CLI falls back to no streaming, which gets the same step' '
	expect_status 1 claude_p -- "MOCK: error 404 || reply t4c" >out 2>err &&
	check_404 &&
	claude_p -- "MOCK: error 404 || reply t4c" >out 2>err &&
	same "$(result_of out)" t4c
'

check_plain() {
	node -e '
fetch(process.env.ANTHROPIC_BASE_URL + "/v1/messages", {
	method: "POST",
	headers: { "content-type": "application/json" },
	body: JSON.stringify({ model: "m", messages: [{ role: "user", content: "MOCK: bash ls => t4d" }] }),
}).then((r) => r.json()).then((m) => {
	const b = m.content[0];
	if (m.type !== "message" || m.stop_reason !== "tool_use" || b.type !== "tool_use" ||
	    b.name !== "Bash" || b.input.command !== "ls" || m.usage.output_tokens !== 100) {
		console.log(JSON.stringify(m));
		process.exit(1);
	}
});'
}

test_expect_success 'without streaming the reply is a plain JSON message' '
	check_plain
'

check_limit() {
	now=$(date +%s) &&
	one_result 'r.is_error && r.api_error_status == 429 && r.result.startsWith("You\u0027ve hit your session limit · resets ")' &&
	same "$(jsonl out 'd.type == "rate_limit_event" && d.rate_limit_info.status')" rejected &&
	same "$(jsonl out 'd.type == "rate_limit_event" && d.rate_limit_info.rateLimitType')" five_hour &&
	at=$(jsonl out 'd.type == "rate_limit_event" && d.rate_limit_info.resetsAt') &&
	{ [ "$at" -ge $((now + 3500)) ] && [ "$at" -le $((now + 3700)) ]; } &&
	same "$(logged t5 'd.step')" limit
}

test_expect_success 'limit in OAuth mode: "You have hit your session limit" and a rate_limit_event' '
	e2e_oauth &&
	expect_status 1 claude_p -- "MOCK: limit 3600 (t5)" >out 2>err &&
	check_limit &&
	expect_status 1 claude_p -- "MOCK: limit 3600 seven_day (t5b)" >out 2>err &&
	one_result "/weekly limit/.test(r.result)"
'

test_expect_success 'limit with an API key is a plain 429' '
	expect_status 1 claude_p -- "MOCK: limit 60 (t5c)" >out 2>err &&
	one_result "r.is_error && r.api_error_status == 429 && !/hit your/.test(r.result)" &&
	test -z "$(jsonl out "d.type == \"rate_limit_event\"")"
'

has_a_line() { [ "$(wc -l <"$1")" -ge 1 ]; }

check_hang() {
	one_result 'r.result === "" && !r.is_error' &&
	same "$(logged t6 'd.step' | tr '\n' ' ')" "hang empty-followup "
}

# Waits for the init line instead of guessing when the CLI is up: the
# reply cannot come before the request, which comes after init, so the
# empty result arrives at least 3 s after init however busy the machine.
test_expect_success 'hang 3: nothing after init for 3 s, then an empty result' '
	{ claude_p -- "MOCK: hang 3 (t6)" >out 2>err & } &&
	pid=$! &&
	wait_until 120 has_a_line out &&
	init=$EPOCHREALTIME &&
	early=$(wc -l <out) &&
	wait $pid &&
	elapsed=$(awk "BEGIN { print $EPOCHREALTIME - $init }") &&
	echo "lines at init: $early, then the result after: $elapsed s" &&
	test "$early" -eq 1 &&
	same "$(head -n 1 out | grep -c "\"subtype\":\"init\"")" 1 &&
	awk "BEGIN { exit !($elapsed >= 2.9) }" &&
	check_hang
'

test_expect_success 'long 100000: a reply of 100000 x in one line' '
	claude_p -- "MOCK: long 100000 (longstep)" >out 2>err &&
	one_result "r.result === \"x\".repeat(100000) && !r.is_error" &&
	same "$(logged longstep 'd.step')" long
'

check_steps() {
	same "$(logged t7 'd.index' | tr '\n' ' ')" "1 2 3 "
}

test_expect_success 'the k-th request with a MOCK line gets the k-th step; the last repeats' '
	line="MOCK: reply first t7 || reply second t7" &&
	claude_p -- "$line" >out 2>err && same "$(result_of out)" "first t7" &&
	claude_p -- "$line" >out 2>err && same "$(result_of out)" "second t7" &&
	claude_p -- "$line" >out 2>err && same "$(result_of out)" "second t7" &&
	check_steps
'

test_expect_success 'error then reply: fail, then succeed' '
	line="MOCK: error 529 || reply recovered t7b" &&
	expect_status 1 claude_p -- "$line" >out 2>err &&
	claude_p -- "$line" >out 2>err &&
	same "$(result_of out)" "recovered t7b"
'

check_usage() {
	# opus: 2000 x $5/M + 300 x $25/M
	one_result 'r.usage.input_tokens == 2000 && r.usage.output_tokens == 300 && Math.abs(r.total_cost_usd - 0.0175) < 1e-9'
}

test_expect_success 'MOCK-USAGE sets the tokens and so the cost' '
	claude_p -- "MOCK: reply counted t8
MOCK-USAGE: 2000 300" >out 2>err &&
	check_usage
'

check_title() {
	same "$(logged t9 'String(d.title_request)' | sort | tr '\n' ' ')" "false true " &&
	same "$(logged t9 'd.title_request && d.step')" title &&
	same "$(logged t9 '!d.title_request && d.index')" 1
}

test_expect_success 'a session-title request gets a title and uses no step' '
	CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC= claude_p -- "MOCK: reply titled t9" >out 2>err &&
	same "$(result_of out)" "titled t9" &&
	check_title
'

check_resume() {
	n1=$(logged 'r1 t10' 'd.n_messages') &&
	n2=$(logged 'r2 t10' 'd.n_messages') &&
	echo "n_messages: $n1 then $n2" &&
	[ "$n2" -gt "$n1" ] &&
	same "$(logged 'r2 t10' 'd.prompts.some((p) => p.includes("r1 t10"))')" true &&
	same "$(logged 't10' 'd.session' | sort -u)" "$S" &&
	same "$(jsonl out 'd.type == "result" && d.session_id')" "$S"
}

test_expect_success '--session-id then --resume carries the history' '
	S=$(new_uuid) &&
	claude_p --session-id "$S" -- "MOCK: reply r1 t10" >out 2>err &&
	same "$(result_of out)" "r1 t10" &&
	test -f "$HOME/.claude/projects/$(pwd | sed "s/[^A-Za-z0-9]/-/g")/$S.jsonl" &&
	claude_p --resume "$S" -- "MOCK: reply r2 t10" >out 2>err &&
	same "$(result_of out)" "r2 t10" &&
	check_resume
'

check_fork() {
	F=$(jsonl fork 'd.type == "result" && d.session_id') &&
	[ -n "$F" ] && [ "$F" != "$A" ] &&
	same "$(logged 'fork t11' 'd.session')" "$F" &&
	same "$(logged 'fork t11' 'd.prompts.some((p) => p.includes("base t11"))')" true &&
	same "$(logged 'after t11' 'd.session')" "$A" &&
	same "$(logged 'after t11' 'd.prompts.some((p) => p.includes("base t11"))')" true &&
	same "$(logged 'after t11' 'String(d.prompts.some((p) => p.includes("fork t11")))')" false &&
	same "$(logged 'named t11' 'd.session')" "$B"
}

test_expect_success '--resume --fork-session branches into a new session' '
	A=$(new_uuid) && B=$(new_uuid) &&
	claude_p --session-id "$A" -- "MOCK: reply base t11" >out 2>err &&
	claude_p --resume "$A" --fork-session -- "MOCK: reply fork t11" >fork 2>err &&
	same "$(result_of fork)" "fork t11" &&
	claude_p --resume "$A" -- "MOCK: reply after t11" >out 2>err &&
	same "$(result_of out)" "after t11" &&
	claude_p --resume "$A" --fork-session --session-id "$B" -- "MOCK: reply named t11" >out 2>err &&
	same "$(jsonl out "d.type == \"result\" && d.session_id")" "$B" &&
	check_fork
'

test_expect_success 'resume after a failed turn: the new prompt decides the reply' '
	S=$(new_uuid) &&
	claude_p --session-id "$S" -- "MOCK: reply start t12" >out 2>err &&
	expect_status 1 claude_p --resume "$S" -- "MOCK: error 529 (t12)" >out 2>err &&
	claude_p --resume "$S" -- "MOCK: reply next t12" >out 2>err &&
	same "$(result_of out)" "next t12"
'

# ---- the fake claude against the real CLI -------------------------------
# Each case runs one invocation twice: with the real CLI in ./real and with
# the fake (tests/fake/fake_claude.c) in ./fake, and requires the two to
# agree, so the fake the CLI tests use behaves as the real one does.
. "$E2E_DIR/../cli/fake-lib.sh"

# both ARGS... -- PROMPT: the invocation in ./real and in ./fake: out, err
# and the exit status (rc) in each folder.
both() {
	mkdir -p real fake &&
	(cd real && { claude_p "$@" >out 2>err; echo $? >rc; }) &&
	(cd fake && { FAKE_CLAUDE_DIR=$PWD/state "$FAKE" -p --output-format stream-json --verbose \
		--dangerously-skip-permissions "$@" </dev/null >out 2>err; echo $? >rc; })
}

# alike FILE EXPR: EXPR of each JSON line d of real/FILE and fake/FILE, with
# the folders' paths written CWD, is the same.
alike() {
	r=$(jsonl "real/$1" "$2" | sed "s|$PWD/real|CWD|g") &&
	f=$(jsonl "fake/$1" "$2" | sed "s|$PWD/fake|CWD|g") &&
	same "$f" "$r"
}

# What the model was told of the tool call, and how the turn ended.
TOOL_TEXT='d.type == "user" && d.message.content[0].type == "tool_result" && d.message.content[0].content'
TOOL_ERROR='d.type == "user" && d.message.content[0].type == "tool_result" && String(!!d.message.content[0].is_error)'
RESULT='d.type == "result" && [d.subtype, d.is_error, d.result, d.num_turns, d.stop_reason, d.terminal_reason, d.permission_denials.length, d.errors]'

# Both created (or both did not create) each file named.
both_have() { for f in "$@"; do test -e "real/$f" && test -e "fake/$f" || { echo "missing: $f"; return 1; }; done; }
neither_has() { for f in "$@"; do test ! -e "real/$f" && test ! -e "fake/$f" || { echo "present: $f"; return 1; }; done; }

# Hook scripts (written here: the test bodies are quoted).
parity_hooks() {
	cat >deny.sh <<-\EOS
	cat >in.json
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"not here (p1)"}}'
	EOS
	cat >rewrite.sh <<-\EOS
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch other"}}}'
	EOS
	cat >halt.sh <<-\EOS
	printf '%s' '{"continue":false,"stopReason":"enough"}'
	EOS
	cat >context.sh <<-\EOS
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","additionalContext":"mind the tests (p9)"}}'
	EOS
}

check_deny() {
	neither_has made &&
	alike out "$TOOL_TEXT" && alike out "$TOOL_ERROR" && alike out "$RESULT" &&
	same "$(jsonl fake/out "$TOOL_TEXT")" "not here (p1)" &&
	for d in real fake; do
		same "$(jsonl $d/in.json "[d.hook_event_name, d.tool_name, d.tool_input.command, d.permission_mode, d.cwd == \"$PWD/$d\"]")" \
			"[\"PreToolUse\",\"Bash\",\"touch made\",\"bypassPermissions\",true]" || return 1
		same "$(jsonl $d/in.json d.session_id)" "$(jsonl $d/out "d.type == \"system\" && d.session_id")" || return 1
		same "$(jsonl $d/in.json d.tool_use_id)" "$(jsonl $d/out "d.type == \"assistant\" && d.message.content[0].id")" || return 1
	done &&
	same "$(logged p1 "d.step == \"tool-followup\" && d.tool_results[0].text")" "not here (p1)"
}

test_expect_success 'fake = real: a PreToolUse deny keeps the tool from running and tells the model why' '
	parity_hooks &&
	both --settings "$(hooks_json PreToolUse Bash "sh $PWD/deny.sh")" -- "MOCK: bash touch made => after p1" &&
	check_deny
'

test_expect_success 'fake = real: allow with updatedInput runs the rewritten command' '
	parity_hooks &&
	both --settings "$(hooks_json PreToolUse Bash "sh $PWD/rewrite.sh")" -- "MOCK: bash touch asked => after p2" &&
	neither_has asked && both_have other &&
	alike out "$TOOL_TEXT" && alike out "$TOOL_ERROR" && alike out "$RESULT"
'

test_expect_success 'fake = real: exit 2 blocks the tool; the model sees the hook error and its stderr' '
	both --settings "$(hooks_json PreToolUse Bash "echo refused >&2; echo ignored; exit 2")" -- "MOCK: bash touch made => after p3" &&
	neither_has made &&
	alike out "$TOOL_TEXT" && alike out "$TOOL_ERROR" && alike out "$RESULT" &&
	same "$(jsonl fake/out "$TOOL_TEXT")" "PreToolUse:Bash hook error: [echo refused >&2; echo ignored; exit 2]: refused"
'

test_expect_success 'fake = real: a hook that is not found (exit 127), or prints no JSON, lets the tool run' '
	both --settings "$(hooks_json PreToolUse Bash "no-such-hook-command-p4")" -- "MOCK: bash touch made => after p4" &&
	both_have made &&
	alike out "$TOOL_TEXT" && alike out "$RESULT" &&
	rm -rf real fake &&
	both --settings "$(hooks_json PreToolUse Bash "echo not json")" -- "MOCK: bash touch made => after p4b" &&
	both_have made
'

test_expect_success 'fake = real: a hook past its timeout is killed and the tool runs' '
	both --settings "$(hooks_json PreToolUse Bash "sleep 30" 2)" -- "MOCK: bash touch made => after p5" &&
	both_have made &&
	alike out "$RESULT"
'

test_expect_success 'fake = real: PostToolUse gets the tool response' '
	both --settings "$(hooks_json PostToolUse Bash "cat >in.json")" -- "MOCK: bash echo hi p6 => after p6" &&
	alike in.json "[d.hook_event_name, d.tool_name, d.tool_input.command, d.tool_response.stdout, d.tool_response.stderr, d.tool_response.interrupted]" &&
	same "$(jsonl fake/in.json d.tool_response.stdout)" "hi p6"
'

test_expect_success 'fake = real: continue:false lets the tool run, then ends the turn with an empty result' '
	parity_hooks &&
	both --settings "$(hooks_json PreToolUse Bash "sh $PWD/halt.sh")" -- "MOCK: bash touch made => after p7" &&
	both_have made &&
	alike out "$RESULT" &&
	same "$(jsonl fake/out "d.type == \"result\" && d.terminal_reason")" hook_stopped
'

test_expect_success 'fake = real: UserPromptSubmit exit 2 blocks the prompt before any API call' '
	both --settings "$(hooks_json UserPromptSubmit - "echo no prompts >&2; exit 2")" -- "MOCK: reply never p8" &&
	alike out "$RESULT" &&
	alike out "d.type == \"system\" && d.subtype == \"informational\" && d.content" &&
	test -z "$(logged p8 d.step)"
'

test_expect_success 'fake = real: additionalContext reaches the model as a system reminder' '
	parity_hooks &&
	both --settings "$(hooks_json PreToolUse Bash "sh $PWD/context.sh")" -- "MOCK: bash true => after p9" &&
	same "$(logged p9 "d.step == \"tool-followup\" && d.context.join(\"\")")" \
		"<system-reminder>
$(jsonl fake/state/events.jsonl "d.kind == \"context\" && d.text")
</system-reminder>"
'

# side CMD...: run CMD in ./real with the real CLI (as claude_p) and in
# ./fake with the fake, CWD in its arguments standing for each folder.
side() {
	mkdir -p real fake &&
	(cd real && claude_p "${@//CWD/$PWD}" >out 2>err) &&
	(cd fake && FAKE_CLAUDE_DIR=$PWD/state "$FAKE" -p --output-format stream-json --verbose \
		--dangerously-skip-permissions "${@//CWD/$PWD}" </dev/null >out 2>err)
}

test_expect_success 'fake = real: the tool step writes and reads files with the same results' '
	side -- "MOCK: tool Write {\"file_path\":\"CWD/w.txt\",\"content\":\"one\ntwo\n\"} => wrote p10" &&
	cmp real/w.txt fake/w.txt &&
	alike out "$TOOL_TEXT" && alike out "$RESULT" &&
	echo hello >real/r.txt && echo hello >fake/r.txt &&
	side -- "MOCK: tool Read {\"file_path\":\"CWD/r.txt\"} => read p10b" &&
	alike out "$TOOL_TEXT" && alike out "$TOOL_ERROR" &&
	same "$(jsonl fake/out "$TOOL_TEXT")" "$(printf "1\thello\n2\t")"
'

test_expect_success 'fake = real: a disallowed tool fails; the request no longer offers it' '
	both --disallowedTools Write -- "MOCK: tool Write {\"file_path\":\"/tmp/never-p11\",\"content\":\"x\"} => after p11" &&
	test ! -e /tmp/never-p11 &&
	alike out "$TOOL_TEXT" && alike out "$TOOL_ERROR" && alike out "$RESULT" &&
	same "$(logged p11 "d.step == \"tool\" && String(d.tools.includes(\"Write\"))")" false &&
	same "$(logged p11 "d.step == \"tool\" && String(d.tools.includes(\"Bash\"))")" true
'

test_expect_success 'fake = real: --max-turns 1 ends a turn that needs a second API call' '
	both --max-turns 1 -- "MOCK: bash touch made => never p12" &&
	both_have made &&
	same "$(cat real/rc) $(cat fake/rc)" "1 1" &&
	alike out "$RESULT"
'

test_expect_success 'fake = real: --mcp-config with a missing file' '
	both --mcp-config missing-p13.json -- "MOCK: reply never p13" &&
	same "$(cat real/rc) $(cat fake/rc)" "1 1" &&
	same "$(sed "s|$PWD/fake|CWD|g" fake/err)" "$(sed "s|$PWD/real|CWD|g" real/err)"
'

# every_event: a --settings document whose hooks, for the five events,
# append their input and the variable PARITY_VAR to hooks.in and env.out.
every_event() {
	local e sep= c="cat >>hooks.in; echo >>hooks.in; echo \$PARITY_VAR >>env.out"
	printf '{"hooks":{'
	for e in UserPromptSubmit PreToolUse PostToolUse PostToolUseFailure Stop; do
		printf '%s"%s":[{"hooks":[{"type":"command","command":"%s"}]}]' "$sep" "$e" "$c"
		sep=,
	done
	printf '}}'
}

# The fields of each hook input, less those only the real CLI sends
# (prompt_id, effort, duration_ms, background_tasks, session_crons), and
# their values but for the ids.
HOOK_KEYS='Object.keys(d).filter((k) => !["prompt_id", "effort", "duration_ms", "background_tasks", "session_crons"].includes(k)).join(",")'
HOOK_VALUES='[d.cwd, d.permission_mode, d.hook_event_name, d.tool_name, d.tool_input && d.tool_input.command, d.tool_response && d.tool_response.stdout, d.error, d.is_interrupt, d.prompt, d.stop_hook_active, d.last_assistant_message]'

test_expect_success 'fake = real: each event'\''s hook input has the same fields, in order, and the environment' '
	export PARITY_VAR=reached-p15 &&
	both --settings "$(every_event)" -- "MOCK: bash echo hi p15 => after p15" &&
	alike hooks.in "$HOOK_KEYS" && alike hooks.in "$HOOK_VALUES" &&
	same "$(jsonl fake/hooks.in d.hook_event_name | tr "\n" " ")" "UserPromptSubmit PreToolUse PostToolUse Stop " &&
	same "$(sort -u real/env.out) $(sort -u fake/env.out)" "reached-p15 reached-p15" &&
	rm -rf real fake &&
	both --settings "$(every_event)" -- "MOCK: bash exit 3 => after p15b" &&
	alike hooks.in "$HOOK_KEYS" && alike hooks.in "$HOOK_VALUES" &&
	same "$(jsonl fake/hooks.in d.hook_event_name | tr "\n" " ")" "UserPromptSubmit PreToolUse PostToolUseFailure Stop "
'

test_expect_success '--append-system-prompt reaches the end of the system prompt' '
	claude_p --append-system-prompt "Marker p14: follow the house rules." -- "MOCK: reply p14" >out 2>err &&
	same "$(logged p14 "String(d.system_tail.includes(\"Marker p14: follow the house rules.\"))")" true &&
	same "$(logged p14 "String(d.system_tail.length <= 2000)")" true
'

test_done
