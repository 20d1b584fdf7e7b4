#!/bin/bash
# The tool events after PreToolUse, with the fake CLI: PostToolUse sees
# what the tool answered, a block after a call reaches the model, a Stop
# hook keeps a turn going until it is satisfied, and UserPromptSubmit sees
# the prompt.  Each reaches the run's Lua hooks through raymond
# hook-bridge, with the run's data.
. "$(dirname "$0")/lib.sh"

context() { grep -F '"kind":"context"' fake/events.jsonl; }

test_expect_success 'PostToolUse sees the tool response; its block reaches the model' '
	use_fake &&
	state START.md <<-\EOS &&
	look
	MOCK: bash echo hello-from-tool => <result>looked</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  tools = { "Bash" },
	  PostToolUse = function(ev)
	    ev.run.data.out = ev.tool_response.stdout
	    return { decision = "block", reason = "that output needs a second look" }
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = looked &&
	grep -F "\"data\":{\"out\":\"hello-from-tool" "$(state_file)" &&
	context | grep -F "that output needs a second look" &&
	grep -F "[main] START.md: PostToolUse Bash \"echo hello-from-tool\" blocked by wf/hooks.lua:3: that output needs a second look" err
'

test_expect_success 'a Stop hook blocks the end of the turn once, then lets it end' '
	use_fake &&
	state START.md <<-\EOS &&
	work
	MOCK: reply <result>finished</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  Stop = function(ev)
	    ev.agent.data.stops = (ev.agent.data.stops or 0) + 1
	    ev.run.data.stops = ev.agent.data.stops
	    ev.run.data.last = ev.last_assistant_message
	    if ev.agent.data.stops == 1 then
	      return { decision = "block", reason = "run the tests before you stop" }
	    end
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = finished &&
	grep -F "\"stops\":2" "$(state_file)" &&
	grep -F "\"last\":\"<result>finished</result>\"" "$(state_file)" &&
	context | grep -F "run the tests before you stop"
'

test_expect_success 'UserPromptSubmit sees the prompt and may add context' '
	use_fake &&
	state START.md <<-\EOS &&
	the prompt text
	MOCK: reply <result>ok</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  UserPromptSubmit = function(ev)
	    ev.run.data.saw = ev.prompt:match("the prompt text") and "yes" or "no"
	    ev.run.data.state = ev.state
	    return { additionalContext = "remember the style guide" }
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = ok &&
	grep -F "\"saw\":\"yes\"" "$(state_file)" &&
	grep -F "\"state\":\"START.md\"" "$(state_file)" &&
	context | grep -F "remember the style guide"
'

test_expect_success 'a UserPromptSubmit block fails the state: the prompt'"'"'s own tags are no reply' '
	use_fake &&
	state START.md <<-\EOS &&
	answer <result>approved</result>
	MOCK: reply <result>from the model</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { UserPromptSubmit = function() return { decision = "block", reason = "not today" } end }
	EOS
	expect_status 1 raymond wf >out 2>err &&
	test ! -s out &&
	grep -F "the prompt was refused by wf/hooks.lua:1: not today" err &&
	grep -F "hint: change the prompt or the hook" err
'

test_expect_success 'PostToolUseFailure hears of a failed call, with its error, after PreToolUse allowed it' '
	use_fake &&
	state START.md <<-\EOS &&
	fail
	MOCK: bash echo broken >&2; exit 3 => <result>carried on</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  tools = { "Bash" },
	  PreToolUse = function() end,
	  PostToolUse = function(ev) ev.run.data.post = true end,
	  PostToolUseFailure = function(ev)
	    ev.run.data.failed = ev.tool_input.command
	    ev.run.data.error = ev.error
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = "carried on" &&
	grep -F "\"failed\":\"echo broken >&2; exit 3\"" "$(state_file)" &&
	grep -F "\"error\":\"" "$(state_file)" | grep -F "broken" &&
	! grep -F "\"post\":true" "$(state_file)"
'

test_done
