#!/bin/bash
# Replay of a recording made with the real Claude Code CLI against the
# mock API (tests/cli/cassettes/review.cassette, recorded by
# tests/e2e/t0006-record.sh from the workflow tests/cli/cassettes/review):
# offline, without the CLI, it takes the recorded path to the recorded
# result, a tool call it holds goes to the tool hooks as the CLI's would,
# and an edited prompt is reported.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE
. "$(dirname "$0")/replay-lib.sh"
CASSETTE="$TOP/tests/cli/cassettes/review.cassette"

test_expect_success 'the real CLI'"'"'s recording replays offline: the same path, result and cost' '
	cp -r "$TOP/tests/cli/cassettes/review" wf &&
	replay "$CASSETTE" "$PWD/wf" &&
	eq status "$(cat status)" 0 &&
	eq result "$(cat rout)" "approved after one fix" &&
	lacks diverge <S/.raymond/test/trace.jsonl &&
	eq compare "$(helper compare "$CASSETTE" "$PWD/wf")" same &&
	rc=$(tail -1 "$CASSETTE" | sed -n "s/.*\"cost\":\([0-9.]*\).*/\1/p") &&
	tc=$(sed -n "s/.*\"cost\":\([0-9.]*\).*/\1/p" S/.raymond/state/test.json) &&
	awk -v a="$rc" -v b="$tc" "BEGIN { d = a - b; exit !(a > 0 && d < 1e-9 && d > -1e-9) }" ||
		{ echo "cost: recorded $rc, replayed $tc"; false; }
'

test_expect_success 'a recorded tool call goes to the tool hooks; one they now deny is reported' '
	cp -r "$TOP/tests/cli/cassettes/review" wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  tools = { "Bash" },
	  PreToolUse = function(ev)
	    ev.run.data.asked = ev.tool_input.command
	    return { permissionDecision = "deny", permissionDecisionReason = "no shell today" }
	  end,
	}
	EOS
	replay "$CASSETTE" "$PWD/wf" &&
	eq status "$(cat status)" 0 &&
	eq result "$(cat rout)" "approved after one fix" &&
	grep -F "\"ev\":\"diverge\"" S/.raymond/test/trace.jsonl >div &&
	has "\"what\":\"tool call denied\"" <div &&
	has "\"tool\":\"Bash\"" <div &&
	has "no shell today" <div &&
	has "\"asked\":\"echo looked at the parser\"" <S/.raymond/state/test.json
'

test_expect_success 'an edited prompt is reported at each visit, and the run still replays' '
	cp -r "$TOP/tests/cli/cassettes/review" wf &&
	sed -i "s/^Review the work\.$/Review the work carefully./" wf/REVIEW.md &&
	replay "$CASSETTE" "$PWD/wf" &&
	eq status "$(cat status)" 0 &&
	eq result "$(cat rout)" "approved after one fix" &&
	grep -F "\"what\":\"prompt changed\"" S/.raymond/test/trace.jsonl >div &&
	eq "diverge lines" "$(wc -l <div)" 2 &&
	has "\"visit\":1" <div && has "\"visit\":2" <div &&
	has "\"now\":\"Review the work carefully.\"" <div
'

test_done
