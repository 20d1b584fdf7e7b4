#!/bin/bash
# Hooks with the real Claude Code CLI against the mock Anthropic API:
# raymond.evaluate from a workflow's hooks.lua, and the frontmatter
# `evaluate:` default hook.  Each test's MOCK lines carry the test's own
# marker, because the mock's step counters last for the whole script.
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1
export RAYMOND_RETRY_DELAY=0.1

# The requests (JSON lines) whose latest prompt contains TEXT.
requests_for() {
	jsonl "$(mock_log)" "d.prompt && d.prompt.includes($(printf '%s' "$1" | node -p 'JSON.stringify(require("fs").readFileSync(0, "utf8"))')) && d"
}

# FIELD of the last request whose latest prompt contains TEXT (a JS
# expression of d): field_of TEXT 'd.prompts.length'
field_of() {
	requests_for "$1" | tail -1 | node -e '
const d = JSON.parse(require("fs").readFileSync(0, "utf8"));
const v = new Function("d", "return (" + process.argv[1] + ");")(d);
process.stdout.write(String(v) + "\n");' "$2"
}

test_expect_success 'raymond.evaluate in a PreTransition hook: a fresh haiku turn routes the run' '
	state START.md <<-\EOS &&
	write the change h1
	MOCK: reply wrote it h1 <goto>REVIEW</goto>
	EOS
	state REVIEW.sh <<-\EOS &&
	echo "<result>reviewed by hand</result>"
	EOS
	state SHIP.sh <<-\EOS &&
	echo "<result>shipped h1</result>"
	EOS
	state FIX.sh <<-\EOS &&
	echo "<result>fixing h1</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.state ~= "START.md" then return nil end
	    local answer, cost = raymond.evaluate({
	      prompt = "Is the change good? Answer APPROVED or REJECTED. gate h1\nMOCK: reply APPROVED",
	      model = "haiku",
	    })
	    ev.run.data.answer = answer
	    ev.run.data.eval_cost = cost
	    if answer and answer:find("APPROVED", 1, true) then
	      return { transition = { tag = "goto", target = "SHIP" } }
	    end
	    return { transition = { tag = "goto", target = "FIX" } }
	  end,
	}
	EOS
	raymond wf --quiet >out 2>err &&
	same "$(cat out)" "shipped h1" &&
	requests_for "gate h1" | grep -q . &&
	same "$(field_of "gate h1" "d.prompts.length")" 1 &&
	field_of "gate h1" "d.model" | grep -qi haiku &&
	field_of "gate h1" "d.session" >s_eval &&
	field_of "write the change h1" "d.session" >s_state &&
	! cmp -s s_eval s_state &&
	! field_of "write the change h1" "d.model" | grep -qi haiku &&
	# The evaluation is offered no tools at all; the state turn is.
	same "$(field_of "gate h1" "d.tools.length")" 0 &&
	field_of "write the change h1" "d.tools.length" | grep -qv "^0$" &&
	same "$(jsonl "$(state_file)" "d.data.answer")" APPROVED &&
	jsonl "$(state_file)" "d.data.eval_cost > 0 && d.cost > d.data.eval_cost && \"ok\"" | grep -qx ok
'

test_expect_success 'a failing evaluation gives nil and a message to the hook' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.state ~= "START.sh" then return nil end
	    local answer, msg = raymond.evaluate({ prompt = "judge h2\nMOCK: error 401", model = "haiku" })
	    ev.run.data.r = tostring(answer) .. "|" .. type(msg)
	  end,
	}
	EOS
	raymond wf --quiet >out 2>err &&
	same "$(cat out)" b &&
	same "$(jsonl "$(state_file)" "d.data.r")" "nil|string"
'

test_expect_success 'frontmatter evaluate: the evaluator reads the reply and picks the route' '
	mkdir -p wf &&
	cat >wf/START.md <<-\EOS &&
	---
	evaluate:
	  model: haiku
	  prompt: |
	    Did this review find problems? Answer YES or NO. judge e2
	    {{output}}
	  routes:
	    YES: FIX
	    NO: SHIP
	---
	review the change e2
	MOCK: reply looked at it e2 <goto>OWN</goto>\nMOCK: reply NO e2
	EOS
	for s in FIX SHIP OWN; do printf "echo \"<result>%s</result>\"\n" "$s" >wf/$s.sh || exit 1; done &&
	raymond wf --quiet >out 2>err &&
	same "$(cat out)" SHIP &&
	same "$(field_of "judge e2" "d.prompts.length")" 1 &&
	field_of "judge e2" "d.model" | grep -qi haiku &&
	field_of "judge e2" "d.prompt" | grep -q "looked at it e2" &&
	same "$(field_of "review the change e2" "d.prompts.length")" 1
'

test_done
