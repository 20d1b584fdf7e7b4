#!/bin/bash
# The tool policy with the real Claude Code CLI against the mock API: the
# CLI runs the hook raymond gives it in --settings, raymond hook-bridge
# relays each tool call to the run's Lua hooks, and their decision comes
# back.  Each test's MOCK lines carry the test's own marker, because the
# mock's step counters last for the whole script.
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1
export RAYMOND_RETRY_DELAY=0.1

# tool_results_for TEXT: the tool_result texts the model was sent, in the
# requests one of whose prompts holds TEXT.
tool_results_for() {
	jsonl "$(mock_log)" "d.prompts && d.prompts.join(\"\\n\").includes($(printf '%s' "$1" | node -p 'JSON.stringify(require("fs").readFileSync(0, "utf8"))')) && d.tool_results && d.tool_results.map(r => r.text).join(\"\\n\")"
}

# A git repository whose remote is a bare one beside it: a push that ran
# would leave a branch there.
git_pair() {
	git init -q --bare remote.git &&
	git init -q work &&
	git -C work -c user.name=t -c user.email=t@t commit -q --allow-empty -m first &&
	git -C work remote add origin "$PWD/remote.git"
}

release_gate() {
	mkdir -p work/wf &&
	cat >work/wf/hooks.lua <<-\EOS
	return {
	  tools = { "Bash" },
	  PreToolUse = function(ev)
	    ev.agent.data.bash = (ev.agent.data.bash or 0) + 1
	    if ev.tool_input.command:find("git%s+push") and ev.state ~= "RELEASE.md" then
	      return { permissionDecision = "deny",
	               permissionDecisionReason = "pushing is only allowed in RELEASE" }
	    end
	  end,
	}
	EOS
}

test_expect_success 'a Bash git push the policy denies never runs; the model reads why and goes on' '
	git_pair && release_gate &&
	cat >work/wf/START.md <<-\EOS &&
	ship it p1
	MOCK: bash git push origin HEAD:refs/heads/main => <result>told no p1</result>
	EOS
	(cd work && raymond wf --dangerously-skip-permissions >../out 2>../err) &&
	same "$(cat out)" "told no p1" &&
	same "$(git -C remote.git for-each-ref | wc -l)" 0 &&
	tool_results_for "ship it p1" | grep -Fx "pushing is only allowed in RELEASE" &&
	grep -F "[main] START.md: Bash \"git push origin HEAD:refs/heads/main\" denied by wf/hooks.lua:3: pushing is only allowed in RELEASE" err
'

test_expect_success 'the same push in RELEASE.md is allowed and runs' '
	git_pair && release_gate &&
	cat >work/wf/RELEASE.md <<-\EOS &&
	release p2
	MOCK: bash git push origin HEAD:refs/heads/main => <result>pushed p2</result>
	EOS
	(cd work && raymond wf/RELEASE.md --dangerously-skip-permissions >../out 2>../err) &&
	same "$(cat out)" "pushed p2" &&
	same "$(git -C remote.git for-each-ref | wc -l)" 1
'

test_expect_success 'updatedInput rewrites the command and the rewritten one runs' '
	mkdir -p wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreToolUse = function(ev)
	    if ev.tool_name == "Bash" then
	      return { updatedInput = { command = (ev.tool_input.command:gsub("asked", "rewritten")) } }
	    end
	  end,
	}
	EOS
	cat >wf/START.md <<-\EOS &&
	rewrite p3
	MOCK: bash touch asked.txt => <result>done p3</result>
	EOS
	raymond wf --dangerously-skip-permissions >out 2>err &&
	same "$(cat out)" "done p3" &&
	test -e rewritten.txt && test ! -e asked.txt
'

test_expect_success 'the bridge cannot reach raymond: the call is denied, the reason names it' '
	mkdir -p wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreToolUse = function() end }
	EOS
	cat >wf/START.md <<-\EOS &&
	first p4
	MOCK: bash rm .raymond/state/*.bridge => <goto>NEXT</goto>
	EOS
	cat >wf/NEXT.md <<-\EOS &&
	second p4
	MOCK: bash touch ran.txt => <result>after p4</result>
	EOS
	raymond wf --dangerously-skip-permissions >out 2>err &&
	same "$(cat out)" "after p4" &&
	test ! -e ran.txt &&
	tool_results_for "second p4" | grep -F "raymond hook-bridge: " | grep -F ".bridge" |
		grep -F "the tool call is denied"
'

test_expect_success 'a user settings file with disableAllHooks does not switch the policy off' '
	mkdir -p wf "$HOME/.claude" &&
	echo "{\"disableAllHooks\": true}" >"$HOME/.claude/settings.json" &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreToolUse = function() return { permissionDecision = "deny", permissionDecisionReason = "no p5" } end }
	EOS
	cat >wf/START.md <<-\EOS &&
	try p5
	MOCK: bash touch ran.txt => <result>after p5</result>
	EOS
	{ raymond wf --dangerously-skip-permissions >out 2>err && echo 0 >rc || echo $? >rc; } &&
	rm -f "$HOME/.claude/settings.json" &&
	same "$(cat rc)" 0 &&
	test ! -e ran.txt &&
	tool_results_for "try p5" | grep -Fx "no p5"
'

test_expect_success 'agent.data counts the calls across kill -9 and --resume' '
	mkdir -p wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  tools = { "Bash" },
	  PreToolUse = function(ev)
	    ev.agent.data.calls = (ev.agent.data.calls or 0) + 1
	    -- The agent is gone once it ends: the run keeps what it counted.
	    ev.run.data.calls = ev.agent.data.calls
	  end,
	}
	EOS
	cat >wf/START.md <<-\EOS
	count p6
	MOCK: bash touch started && sleep 600 => <result>never p6</result> || bash touch second => <result>counted p6</result>
	EOS
	"$RAYMOND" wf --dangerously-skip-permissions --quiet >out 2>err &
	pid=$!
	wait_for_file started 120 &&
	kill -9 $pid &&
	wait_for_exit $pid &&
	state_json | grep -F "\"calls\":1" &&
	raymond --resume "$(run_id)" --quiet >out 2>err &&
	same "$(cat out)" "counted p6" &&
	test -e second &&
	grep -F "\"data\":{\"calls\":2}" "$(state_file)"
'

test_expect_success 'disallowed_tools reaches the CLI: the tool is gone from the request' '
	mkdir -p wf &&
	cat >wf/START.md <<-\EOS &&
	---
	disallowed_tools: [WebFetch]
	---
	look p7
	MOCK: reply <result>looked p7</result>
	EOS
	raymond wf --dangerously-skip-permissions >out 2>err &&
	same "$(cat out)" "looked p7" &&
	jsonl "$(mock_log)" "d.prompt && d.prompt.includes(\"look p7\") && d.tools.join(\",\")" >tools &&
	grep -q Bash tools &&
	! grep -q WebFetch tools
'

test_expect_success 'deny_commands in frontmatter, no Lua: the push is denied, other commands run' '
	git_pair &&
	mkdir -p work/wf &&
	cat >work/wf/START.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	ship it p9
	MOCK: bash git push origin HEAD:refs/heads/main => <goto>NEXT</goto>
	EOS
	cat >work/wf/NEXT.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	note it p9
	MOCK: bash touch noted.txt => <result>noted p9</result>
	EOS
	(cd work && raymond wf --dangerously-skip-permissions >../out 2>../err) &&
	same "$(cat out)" "noted p9" &&
	same "$(git -C remote.git for-each-ref | wc -l)" 0 &&
	test -e work/noted.txt &&
	tool_results_for "ship it p9" | grep -F "deny_commands rule \"git push*\" of START.md forbids: git push origin HEAD:refs/heads/main"
'

test_expect_success 'raymond.evaluate in a PreToolUse hook, under the default budget: a judge with no tools' '
	mkdir -p wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  tools = { "Bash" },
	  PreToolUse = function(ev)
	    local answer, err = raymond.evaluate{ model = "haiku", prompt = "Is this command safe? "
	      .. ev.tool_input.command .. " gate p8\nMOCK: bash touch pwned.txt => YES" }
	    ev.run.data.answer = answer or err
	    if answer ~= "YES" then return { permissionDecision = "deny", permissionDecisionReason = tostring(err) } end
	  end,
	}
	EOS
	cat >wf/START.md <<-\EOS &&
	judge p8
	MOCK: bash touch judged.txt => <result>judged p8</result>
	EOS
	RAYMOND_HOOK_SECONDS=120 raymond wf --dangerously-skip-permissions >out 2>err &&
	same "$(cat out)" "judged p8" &&
	test -e judged.txt &&
	test ! -e pwned.txt &&
	same "$(jsonl "$(state_file)" "d.data.answer")" YES &&
	jsonl "$(mock_log)" "d.prompt && d.prompt.includes(\"gate p8\") && String(d.tools.length)" >eval_tools &&
	same "$(sort -u eval_tools)" 0
'

test_done
