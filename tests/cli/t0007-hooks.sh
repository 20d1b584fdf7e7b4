#!/bin/bash
# Hooks: hooks.lua in the workflow folder sees transitions and decides.
. "$(dirname "$0")/lib.sh"

two_step() {
	state START.sh <<-\EOS
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS
	echo b >>ran
	echo "<result>from b</result>"
	EOS
	state OTHER.sh <<-\EOS
	echo other >>ran
	echo "<result>from other</result>"
	EOS
}

test_expect_success 'a PreTransition hook overrides the transition' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.transition.tag == "goto" and ev.transition.target == "B.sh" then
	      return { transition = { tag = "goto", target = "OTHER" } }
	    end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "from other" &&
	test "$(cat ran)" = other
'

test_expect_success 'an overriding transition is checked like a tag' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function() return { transition = { tag = "goto", target = "../x" } } end }
	EOS
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "invalid transition.*path separator" err &&
	grep -q "hooks.lua:1" err
'

test_expect_success 'hooks see every event once, in order, and run.data persists' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	local function log(ev)
	  ev.run.data.events = (ev.run.data.events or "") .. ev.hook_event_name .. ","
	end
	return { RunStart = log, PreTransition = log, PostTransition = log, AgentExit = log, RunEnd = log }
	EOS
	raymond wf --quiet >/dev/null &&
	grep -q "\"events\":\"RunStart,PreTransition,PostTransition,PreTransition,PostTransition,AgentExit,RunEnd,\"" "$(state_file)"
'

test_expect_success 'a hook can stop the run; agent.data counts survive --resume' '
	state START.sh <<-\EOS &&
	echo "<goto>START</goto>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    local d = ev.agent.data
	    d.n = (d.n or 0) + 1
	    if d.n % 3 == 0 then return { continue = false, stopReason = "third visit" } end
	  end,
	}
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	grep -q "stopped by .*hooks.lua:2: third visit" err &&
	grep -q "\"status\":\"stopped\"" "$(state_file)" &&
	grep -q "\"n\":3" "$(state_file)" &&
	expect_status 3 "$RAYMOND" --resume "$(run_id)" 2>err &&
	grep -q "\"n\":6" "$(state_file)"
'

test_expect_success 'a hook that raises stops the run naming file and line; fixed, the run resumes' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    error("cannot decide")
	  end,
	}
	EOS
	expect_status 1 raymond wf 2>err &&
	grep -q "hooks.lua:3: cannot decide" err &&
	grep -q "\"status\":\"failed\"" "$(state_file)" &&
	echo "return {}" >wf/hooks.lua &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "from b"
'

test_expect_success 'a decision field of the wrong type is an error naming the hook' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function() return { continue = "no" } end }
	EOS
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "hooks.lua:1: PreTransition decision field .continue. should be a boolean, got string" err
'

test_expect_success 'an unknown decision field warns and is ignored' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function() return { colour = "red" } end }
	EOS
	raymond wf --quiet >out 2>err &&
	grep -q "unknown field .colour." err &&
	test "$(cat out)" = "from b"
'

test_expect_success 'a block decision fails a script state with the reason' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function() return { decision = "block", reason = "not on fridays" } end }
	EOS
	expect_status 1 raymond wf 2>err &&
	grep -q "blocked by .*hooks.lua:1: not on fridays" err
'

test_expect_success 'hooks cannot reach io, os.execute or file loading' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	assert(io == nil and os.execute == nil and dofile == nil and loadfile == nil and require == nil)
	assert(not pcall(load, string.dump(function() end)) or load(string.dump(function() end)) == nil)
	return {}
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "from b"
'

test_expect_success 'a hook file that does not load is reported before anything runs' '
	two_step &&
	echo "return {" >wf/hooks.lua &&
	expect_status 1 raymond wf 2>err &&
	grep -q "hook file .*hooks.lua does not load" err &&
	test ! -e ran
'
test_done
