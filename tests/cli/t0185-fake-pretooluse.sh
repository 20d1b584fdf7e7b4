#!/bin/bash
# The fake Claude Code CLI runs the PreToolUse command hooks of --settings
# as the CLI 2.1.197 does: the event on stdin, a deny, a rewritten input,
# exit 2, the cases that fail open (the tool runs), the timeout, continue:
# false, and Claude Code's matchers.  tests/e2e/t0000 runs the same cases
# against the real CLI.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake-lib.sh"

# hook NAME: write the hook script NAME.sh from stdin.
hook() { cat >"$1.sh"; }

# The tool_result line's content, and whether it is an error.
result_text() { jline user out | sed -n 's/.*"type":"tool_result","content":"\(.*\)","is_error".*/\1/p'; }
result_error() { jline user out | sed -n 's/.*"type":"tool_result",.*"is_error":\(true\|false\)}.*/\1/p'; }

# Hooks that print a decision (written here: the test bodies are quoted).
deny_hook() {
	hook deny <<-\EOS
	cat >in.json
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"no touching here"}}'
	EOS
}
allow_hook() {
	hook allow <<-\EOS
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'
	EOS
}
rewrite_hook() {
	hook rewrite <<-\EOS
	printf '%s' '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow","updatedInput":{"command":"touch other"}}}'
	EOS
}
halt_hook() {
	hook halt <<-\EOS
	printf '%s' '{"continue":false,"stopReason":"enough"}'
	EOS
}

test_expect_success 'a deny: the tool does not run, the model gets the reason as an error, the turn goes on' '
	deny_hook &&
	fake --settings "$(hooks_json PreToolUse Bash "sh deny.sh")" -- "MOCK: bash touch made => after" >out &&
	test ! -e made &&
	test "$(result_text)" = "no touching here" &&
	test "$(result_error)" = true &&
	jline user out | grep -F "\"tool_use_result\":\"Error: no touching here\"" &&
	test "$(jline result out | jstr result)" = after &&
	test "$(jline result out | jnum num_turns)" = 2 &&
	tid=$(jline assistant out | sed -n "s/.*\"id\":\"\(toolu_[^\"]*\)\".*/\1/p") &&
	jline result out | grep -F "\"permission_denials\":[{\"tool_name\":\"Bash\",\"tool_use_id\":\"$tid\",\"tool_input\":{\"command\":\"touch made\"" &&
	events hook | grep -F "\"event\":\"PreToolUse\",\"tool\":\"Bash\",\"command\":\"sh deny.sh\",\"exit\":0,\"timed_out\":false" &&
	events tool_result | grep -F "\"text\":\"no touching here\",\"is_error\":true"
'

test_expect_success 'the hook gets the event JSON on stdin, runs in the cwd with the environment' '
	hook look <<-\EOS &&
	cat >in.json
	pwd >where
	echo "$HOOK_TEST_VAR" >env
	EOS
	HOOK_TEST_VAR=passed-on fake --permission-mode acceptEdits \
		--settings "$(hooks_json PreToolUse Bash "sh look.sh")" -- "MOCK: bash touch made => after" >out &&
	test -e made &&
	test "$(cat where)" = "$PWD" &&
	test "$(cat env)" = passed-on &&
	sid=$(jline system out | jstr session_id) &&
	tid=$(jline assistant out | sed -n "s/.*\"id\":\"\(toolu_[^\"]*\)\".*/\1/p") &&
	slug=$(pwd | sed "s/[^A-Za-z0-9]/-/g") &&
	grep -F "{\"session_id\":\"$sid\",\"transcript_path\":\"$HOME/.claude/projects/$slug/$sid.jsonl\",\"cwd\":\"$PWD\"," in.json &&
	grep -F "\"permission_mode\":\"acceptEdits\",\"hook_event_name\":\"PreToolUse\"" in.json &&
	grep -F "\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"touch made\",\"description\":\"Run the command\"},\"tool_use_id\":\"$tid\"}" in.json
'

test_expect_success 'allow with updatedInput: the rewritten command runs instead' '
	rewrite_hook &&
	fake --settings "$(hooks_json PreToolUse Bash "sh rewrite.sh")" -- "MOCK: bash touch asked => after" >out &&
	test ! -e asked &&
	test -e other &&
	test "$(result_error)" = false &&
	events tool_result | grep -F "\"input\":{\"command\":\"touch other\"}" &&
	jline result out | grep -F "\"permission_denials\":[]"
'

test_expect_success 'exit 2: the tool does not run; the model sees the hook error with its stderr' '
	fake --settings "$(hooks_json PreToolUse Bash "echo refused >&2; echo ignored; exit 2")" \
		-- "MOCK: bash touch made => after" >out &&
	test ! -e made &&
	test "$(result_text)" = "PreToolUse:Bash hook error: [echo refused >&2; echo ignored; exit 2]: refused\n" &&
	test "$(result_error)" = true &&
	test "$(jline result out | jstr result)" = after &&
	events hook | grep -F "\"exit\":2"
'

test_expect_success 'fail open: exit 127, exit 1, other statuses, text that is not JSON, a killed shell' '
	n=0 &&
	for cmd in "no-such-command-here" "exit 1" "exit 3" "echo not json" "echo {broken" "kill -9 \$\$"; do
		n=$((n + 1))
		fake --settings "$(hooks_json PreToolUse Bash "$cmd")" -- "MOCK: bash touch made$n => after" >out || return 1
		test -e made$n || { echo "the tool did not run after: $cmd"; return 1; }
		test "$(result_error)" = false || return 1
	done &&
	events hook | jnum exit | tr "\n" " " >statuses &&
	test "$(cat statuses)" = "127 1 3 0 0 137 "
'

test_expect_success 'a hook past its timeout is killed with its children, and the tool runs' '
	hook slow <<-\EOS &&
	echo $$ >slowpid
	exec sleep 300
	EOS
	t0=$(now_ms) &&
	fake --settings "$(hooks_json PreToolUse Bash "sh slow.sh" 1)" -- "MOCK: bash touch made => after" >out &&
	elapsed=$(($(now_ms) - t0)) &&
	echo "took $elapsed ms" &&
	test "$elapsed" -ge 1000 && test "$elapsed" -lt 60000 &&
	test -e made &&
	wait_for_exit "$(cat slowpid)" &&
	events hook | grep -F "\"exit\":null,\"timed_out\":true"
'

test_expect_success 'a fake stopped by SIGTERM during a hook takes the hook with it' '
	hook slow <<-\EOS &&
	echo $$ >slowpid
	exec sleep 300
	EOS
	{ FAKE_CLAUDE_DIR=$PWD/fc "$FAKE" -p --output-format stream-json --verbose \
		--settings "$(hooks_json PreToolUse Bash "sh slow.sh" 600)" -- "MOCK: bash touch made => after" </dev/null >out & } &&
	pid=$! &&
	wait_for_file slowpid &&
	wait_until 60 test -s slowpid &&
	kill -TERM $pid &&
	expect_status 143 wait $pid &&
	wait_for_exit "$(cat slowpid)" &&
	test ! -e made
'

test_expect_success 'continue:false: the tool still runs, then the turn ends with an empty result' '
	halt_hook &&
	fake --settings "$(hooks_json PreToolUse Bash "sh halt.sh")" -- "MOCK: bash touch made => after" >out &&
	test -e made &&
	test "$(jline assistant out | wc -l)" = 1 &&
	test "$(jline result out | jstr result)" = "" &&
	test "$(jline result out | jlit is_error)" = false &&
	test "$(jline result out | jstr stop_reason)" = tool_use &&
	test "$(jline result out | jstr terminal_reason)" = hook_stopped
'

test_expect_success 'matchers: none, "" and "*" match all; names and | match exactly; others are regexps' '
	m() { printf "{\"matcher\":\"%s\",\"hooks\":[{\"type\":\"command\",\"command\":\"touch m-%s\"}]}" "$1" "$2"; } &&
	s="{\"hooks\":{\"PreToolUse\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch m-none\"}]}" &&
	s="$s,$(m "" empty),$(m "*" star),$(m Bash name),$(m "Write|Bash" alt),$(m Bas prefix)" &&
	s="$s,$(m "Ba.*" regex),$(m "^Write$" other-regex),$(m Edit other)]}}" &&
	fake --settings "$s" -- "MOCK: bash true => after" >out &&
	ls m-* | tr "\n" " " >ran &&
	test "$(cat ran)" = "m-alt m-empty m-name m-none m-regex m-star "
'

test_expect_success 'of two hooks, a deny wins over an allow' '
	deny_hook &&
	s="{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"sh allow.sh\"},{\"type\":\"command\",\"command\":\"sh deny.sh\"}]}]}}" &&
	allow_hook &&
	fake --settings "$s" -- "MOCK: bash touch made => after" >out &&
	test ! -e made &&
	test "$(result_text)" = "no touching here"
'

test_expect_success 'each Bash call of a calls step passes the hooks' '
	fake --settings "$(hooks_json PreToolUse Bash "echo called >>count")" -- "MOCK: calls 4 => done" >out &&
	test "$(wc -l <count)" = 3 &&
	test "$(jline result out | jstr result)" = done
'

test_done
