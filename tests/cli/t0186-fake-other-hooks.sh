#!/bin/bash
# The fake Claude Code CLI runs the other command hooks of --settings as
# the CLI 2.1.197 does: PostToolUse with the tool's response,
# PostToolUseFailure with its error, UserPromptSubmit with the prompt (exit
# 2 blocks it before any API call), Stop with the last message (a block
# makes the model answer again), and what they add to the model's context.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/fake-lib.sh"

hook() { cat >"$1.sh"; }

# Hooks that print a decision (written here: the test bodies are quoted).
post_block_hook() {
	hook post <<-\EOS
	cat >in.json
	printf '%s' '{"decision":"block","reason":"post says no","hookSpecificOutput":{"hookEventName":"PostToolUse","additionalContext":"more to know"}}'
	EOS
}
stop_block_hook() {
	hook stop <<-\EOS
	cat >>in.json; echo >>in.json
	printf '%s' '{"decision":"block","reason":"not yet"}'
	EOS
}
stop_once_hook() {
	hook stop <<-\EOS
	cat >>in.json; echo >>in.json
	if [ -e once ]; then exit 0; fi
	touch once
	printf '%s' '{"decision":"block","reason":"one more time"}'
	EOS
}

test_expect_success 'PostToolUse gets the tool response; a block and additionalContext reach the context' '
	post_block_hook &&
	fake --settings "$(hooks_json PostToolUse Bash "sh post.sh")" -- "MOCK: bash echo hi; echo ho >&2 => after" >out &&
	tid=$(jline assistant out | sed -n "s/.*\"id\":\"\(toolu_[^\"]*\)\".*/\1/p" | head -1) &&
	grep -F "\"hook_event_name\":\"PostToolUse\",\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"echo hi; echo ho >&2\"" in.json &&
	grep -F "\"tool_response\":{\"stdout\":\"hi\",\"stderr\":\"ho\",\"interrupted\":false,\"isImage\":false},\"tool_use_id\":\"$tid\"}" in.json &&
	jline user out | grep -F "\"content\":\"hi\nho\",\"is_error\":false" &&
	test "$(jline result out | jstr result)" = after &&
	events context | grep -F "\"text\":\"PostToolUse:Bash hook blocking error from command: \\\"sh post.sh\\\": post says no\"" &&
	events context | grep -F "\"text\":\"PostToolUse:Bash hook additional context: more to know\""
'

test_expect_success 'a failed tool runs PostToolUseFailure with the error, not PostToolUse' '
	s="{\"hooks\":{\"PostToolUse\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch post-ran\"}]}],\"PostToolUseFailure\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"cat >in.json\"}]}]}}" &&
	fake --settings "$s" -- "MOCK: bash exit 3 => after" >out &&
	test ! -e post-ran &&
	grep -F "\"hook_event_name\":\"PostToolUseFailure\",\"tool_name\":\"Bash\"" in.json &&
	grep -F "\"error\":\"Exit code 3\",\"is_interrupt\":false}" in.json &&
	! grep -F tool_response in.json
'

test_expect_success 'UserPromptSubmit gets the prompt; its additionalContext reaches the context' '
	hook ups <<-\EOS &&
	cat >in.json
	echo "{\"hookSpecificOutput\":{\"hookEventName\":\"UserPromptSubmit\",\"additionalContext\":\"today is Tuesday\"}}"
	EOS
	fake --permission-mode plan --settings "$(hooks_json UserPromptSubmit - "sh ups.sh")" -- "MOCK: reply fine" >out &&
	grep -F "\"permission_mode\":\"plan\",\"hook_event_name\":\"UserPromptSubmit\",\"prompt\":\"MOCK: reply fine\"}" in.json &&
	test "$(jline result out | jstr result)" = fine &&
	events context | grep -F "\"text\":\"UserPromptSubmit hook additional context: today is Tuesday\""
'

test_expect_success 'UserPromptSubmit exit 2 blocks the prompt: no API call, the message is the result' '
	fake --settings "$(hooks_json UserPromptSubmit - "echo no prompts >&2; exit 2")" -- "MOCK: reply never" >out &&
	want="UserPromptSubmit operation blocked by hook:\n[echo no prompts >&2; exit 2]: no prompts\n\n\nOriginal prompt: MOCK: reply never" &&
	jline system out | grep -F "\"subtype\":\"informational\",\"content\":\"$want\"" &&
	! jline assistant out &&
	test "$(jline result out | jstr result)" = "$want" &&
	test "$(jline result out | jnum num_turns)" = 0 &&
	test "$(jline result out | jnum total_cost_usd)" = 0 &&
	test ! -s fc/spend
'

test_expect_success 'a hook that exits without reading a large event leaves the turn going' '
	big=$(head -c 100000 /dev/zero | tr "\\0" x) &&
	fake --settings "$(hooks_json UserPromptSubmit - "exit 0")" -- "$big
MOCK: reply still here" >out &&
	test "$(jline result out | jstr result)" = "still here"
'

test_expect_success 'Stop gets the last message; a block feeds the reason back and the model answers again' '
	stop_once_hook &&
	fake --settings "$(hooks_json Stop - "sh stop.sh")" -- "MOCK: reply all done" >out &&
	test "$(grep -c "\"hook_event_name\":\"Stop\"" in.json)" = 2 &&
	sed -n 1p in.json | grep -F "\"stop_hook_active\":false,\"last_assistant_message\":\"all done\"}" &&
	sed -n 2p in.json | grep -F "\"stop_hook_active\":true,\"last_assistant_message\":\"all done\"}" &&
	jline user out | grep -F "\"text\":\"Stop hook feedback:\none more time\"}]}" &&
	jline user out | grep -F "\"isSynthetic\":true" &&
	test "$(jline assistant out | wc -l)" = 2 &&
	test "$(jline result out | jnum num_turns)" = 2 &&
	test "$(jline result out | jstr result)" = "all done"
'

test_expect_success 'a Stop hook that always blocks gets nine rounds, as the real CLI gave it' '
	stop_block_hook &&
	fake --settings "$(hooks_json Stop - "sh stop.sh")" -- "MOCK: reply all done" >out &&
	test "$(grep -c "\"hook_event_name\":\"Stop\"" in.json)" = 10 &&
	test "$(jline user out | wc -l)" = 9 &&
	test "$(jline result out | jnum num_turns)" = 10
'

test_expect_success 'hooks of other events, and tools the matcher does not name, do not run' '
	s="{\"hooks\":{\"PreToolUse\":[{\"matcher\":\"Write\",\"hooks\":[{\"type\":\"command\",\"command\":\"touch pre-ran\"}]}],\"Notification\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"touch other-ran\"}]}]}}" &&
	fake --settings "$s" -- "MOCK: bash true => after" >out &&
	test ! -e pre-ran && test ! -e other-ran &&
	test ! -e fc/events.jsonl || ! events hook
'

test_done
