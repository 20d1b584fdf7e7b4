#!/bin/bash
# Hooks (docs/hooks.md): which events fire, when, in what order and with
# what fields; what each decision does; the order of hook files and the
# options that choose them; on_error; frontmatter declared by hooks; data
# kept across kill -9; hooks that wait while other agents go on.
# Markdown states run with the fake CLI; its log is fake/log.jsonl.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# jstr KEY / jlit KEY: the last "KEY" of each input line (a string without
# escaped quotes; true/false/null).
jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }
log() { sed -n "${1}p" fake/log.jsonl; }
# check MESSAGE CMD...: run CMD; print MESSAGE if it fails.
check() { msg=$1; shift; "$@" || { echo "$msg"; return 1; }; }
eq() { [ "$2" = "$3" ] || { printf '%s:\n  expected: %s\n  got:      %s\n' "$1" "$3" "$2"; return 1; }; }
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }

# A hook file (FILE, default evlog.lua) that appends one line per event to
# ./events.log: NAME AGENT STATE [from FROM] [STATUS].
event_log_hook() {
	cat >"${1:-evlog.lua}" <<-\EOS
	local function log(ev)
	  local line = ev.hook_event_name .. " " .. (ev.agent_id or "-") .. " " .. (ev.state or "-")
	  if ev.from then line = line .. " from " .. ev.from end
	  if ev.status then line = line .. " " .. ev.status end
	  local old = raymond.read_file("events.log") or ""
	  assert(raymond.write_atomic("events.log", old .. line .. "\n"))
	end
	local t = {}
	for _, n in ipairs({ "RunStart", "Resume", "PreState", "PostState", "Cost", "PreTransition",
	                     "PostTransition", "AgentFork", "AgentExit", "Error", "RunEnd" }) do
	  t[n] = log
	end
	return t
	EOS
}

# The event names of AGENT's lines in events.log, space-separated.
events_of() { awk -v a="$1" '$2 == a { printf "%s%s", sep, $1; sep = " " }' events.log; }

# ------------------------------------------------------------------ events

test_expect_success 'events fire once each, in order, for markdown, script and call/result states' '
	use_fake &&
	state START.md <<-\EOS &&
	hello
	MOCK: reply hi <goto>S</goto>
	EOS
	state S.sh <<-\EOS &&
	echo "<call return=\"R\">C</call>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>c</result>"
	EOS
	state R.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	event_log_hook &&
	raymond wf --hooks evlog.lua --quiet >out &&
	eq result "$(cat out)" ok &&
	cat >want <<-\EOS &&
	RunStart - -
	PreState main START.md
	Cost main START.md
	PostState main START.md
	PreTransition main START.md
	PostTransition main S.sh from START.md
	PreState main S.sh
	PostState main S.sh
	PreTransition main S.sh
	PostTransition main C.sh from S.sh
	PreState main C.sh
	PostState main C.sh
	PreTransition main C.sh
	PostTransition main R.sh from C.sh
	PreState main R.sh
	PostState main R.sh
	PreTransition main R.sh
	PostTransition main R.sh from R.sh
	AgentExit main R.sh
	RunEnd - - completed
	EOS
	diff want events.log
'

test_expect_success 'a fork: AgentFork per worker, every agent exits, RunStart first and RunEnd last' '
	state START.sh <<-\EOS &&
	echo "<fork item=\"a\">W</fork><fork item=\"b\">W</fork><goto>J</goto>"
	EOS
	state W.sh <<-\EOS &&
	sleep 0.0$((RANDOM % 5))
	echo "<goto>W2</goto>"
	EOS
	state W2.sh <<-\EOS &&
	echo "<result>$item</result>"
	EOS
	state J.sh <<-\EOS &&
	sleep 0.02
	echo "<result>joined</result>"
	EOS
	event_log_hook &&
	raymond wf --hooks evlog.lua --quiet >out &&
	eq result "$(cat out)" joined &&
	cat events.log &&
	eq first "$(head -1 events.log)" "RunStart - -" &&
	eq last "$(tail -1 events.log)" "RunEnd - - completed" &&
	eq RunStarts "$(grep -c ^RunStart events.log)" 1 &&
	eq RunEnds "$(grep -c ^RunEnd events.log)" 1 &&
	eq forks "$(grep ^AgentFork events.log)" "$(printf "AgentFork main_w1 W.sh\nAgentFork main_w2 W.sh")" &&
	eq exits "$(grep -c ^AgentExit events.log)" 3 &&
	eq main "$(events_of main)" "PreState PostState PreTransition PostTransition PreState PostState PreTransition PostTransition AgentExit" &&
	pre=$(grep -n "^PreTransition main START.sh" events.log | cut -d: -f1) &&
	fork1=$(grep -n "^AgentFork" events.log | head -1 | cut -d: -f1) &&
	check "AgentFork came before the PreTransition of the forking state" test "$fork1" -gt "$pre" &&
	for w in main_w1 main_w2; do
		eq $w "$(events_of $w)" "AgentFork PreState PostState PreTransition PostTransition PreState PostState PreTransition PostTransition AgentExit" || exit 1
	done &&
	! grep -q "^Cost" events.log &&
	! grep -q "^Error" events.log
'

test_expect_success 'Resume fires on --resume, RunStart does not; Error and RunEnd on the failure' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	if [ ! -e flag ]; then touch flag; exit 3; fi
	echo "<result>ok</result>"
	EOS
	event_log_hook &&
	expect_status 1 raymond wf --hooks evlog.lua --quiet 2>err &&
	cat >want <<-\EOS &&
	RunStart - -
	PreState main START.sh
	PostState main START.sh
	PreTransition main START.sh
	PostTransition main B.sh from START.sh
	PreState main B.sh
	Error main B.sh
	RunEnd - - failed
	EOS
	diff want events.log &&
	: >events.log &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" ok &&
	cat >want <<-\EOS &&
	Resume - -
	PreState main B.sh
	PostState main B.sh
	PreTransition main B.sh
	PostTransition main B.sh from B.sh
	AgentExit main B.sh
	RunEnd - - completed
	EOS
	diff want events.log
'

test_expect_success 'event fields: ids, workflow, depth, cost, output, invocation, frontmatter, transition' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	model: haiku
	my_note: a note
	---
	say it
	MOCK: reply the reply <goto>S</goto>
	EOS
	state S.sh <<-\EOS &&
	echo "script out"
	echo "<call return=\"R\" input=\"in\">C</call>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>back</result>"
	EOS
	state R.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	local function put(k, v)
	  local old = raymond.read_file("fields.log") or ""
	  v = tostring(v):gsub("\n", "|")
	  raymond.write_atomic("fields.log", old .. k .. "=" .. v .. "\n")
	end
	local function common(ev)
	  put(ev.hook_event_name .. ".run_id", ev.run_id == ev.run.id and ev.run_id)
	  put(ev.hook_event_name .. ".workflow", ev.workflow)
	end
	return {
	  frontmatter = { my_note = "string" },
	  RunStart = common,
	  PreState = function(ev)
	    common(ev)
	    local p = "PreState." .. ev.state
	    put(p .. ".kind", ev.kind)
	    put(p .. ".depth", ev.agent.depth)
	    put(p .. ".agent", ev.agent_id .. "/" .. ev.agent.id .. "/" .. ev.agent.state .. "/" .. ev.agent.cwd)
	    put(p .. ".run_cost", ev.run.cost_usd)
	    put(p .. ".budget", ev.run.budget_usd)
	    if ev.kind == "markdown" then
	      put(p .. ".model", ev.invocation.model)
	      put(p .. ".prompt", ev.invocation.prompt)
	      put(p .. ".timeout", ev.invocation.timeout)
	      put(p .. ".my_note", ev.frontmatter.my_note)
	      put(p .. ".fm_model", ev.frontmatter.model)
	    end
	  end,
	  Cost = function(ev)
	    put("Cost.turn", ev.cost_usd)
	    put("Cost.total", ev.total_cost_usd)
	    put("Cost.agent", ev.agent.cost_usd)
	    put("Cost.run", ev.run.cost_usd)
	  end,
	  PostState = function(ev)
	    local p = "PostState." .. ev.state
	    put(p .. ".output", ev.output)
	    put(p .. ".cost", ev.cost_usd)
	    put(p .. ".exit", ev.exit_code)
	    put(p .. ".agent_cost", ev.agent.cost_usd)
	    put(p .. ".run_cost", ev.run.cost_usd)
	    put(p .. ".duration", type(ev.duration))
	    if ev.kind == "markdown" then put(p .. ".my_note", ev.frontmatter.my_note) end
	  end,
	  PreTransition = function(ev)
	    local t = ev.transition
	    put("PreTransition." .. ev.state, string.format("%s %s %s %s %s", t.tag, tostring(t.target),
	      tostring(t.ret), tostring(t.input), tostring(t.payload)))
	    put("PreTransition." .. ev.state .. ".depth", ev.agent.depth)
	  end,
	  PostTransition = function(ev)
	    put("PostTransition." .. ev.from, ev.transition.tag .. " -> " .. ev.state .. " depth " .. ev.agent.depth)
	  end,
	  AgentExit = function(ev) put("AgentExit.result", ev.result) end,
	  RunEnd = function(ev) put("RunEnd", ev.status .. " " .. tostring(ev.result)) end,
	}
	EOS
	raymond wf >out 2>err &&
	eq result "$(cat out)" ok &&
	! grep -q "my_note" err &&
	cat fields.log &&
	id=$(run_id) && wf=$(cd wf && pwd) &&
	cost=$(sed -n "s/.*\"cost\":\([0-9.e-]*\),.*/\1/p" "$(state_file)") &&
	test -n "$cost" &&
	f() { sed -n "s/^$1=//p" fields.log; } &&
	eq run_id "$(f RunStart.run_id)" "$id" &&
	eq workflow "$(f RunStart.workflow)" "$wf" &&
	eq PreState.run_id "$(f PreState.run_id | sort -u)" "$id" &&
	eq kind "$(f PreState.START.md.kind) $(f PreState.S.sh.kind)" "markdown script" &&
	eq agent "$(f PreState.START.md.agent)" "main/main/START.md/$PWD" &&
	eq depth "$(f PreState.S.sh.depth) $(f PreState.C.sh.depth) $(f PreState.R.sh.depth)" "0 1 0" &&
	eq "PreTransition depth in C" "$(f PreTransition.C.sh.depth)" 1 &&
	eq "PostTransition after call" "$(f PostTransition.S.sh)" "call -> C.sh depth 1" &&
	eq "PostTransition after result" "$(f PostTransition.C.sh)" "result -> R.sh depth 0" &&
	eq budget "$(f PreState.START.md.budget)" 10 &&
	eq model "$(f PreState.START.md.model)" haiku &&
	eq fm_model "$(f PreState.START.md.fm_model)" haiku &&
	eq my_note "$(f PreState.START.md.my_note)" "a note" &&
	eq "my_note in PostState" "$(f PostState.START.md.my_note)" "a note" &&
	eq prompt "$(f PreState.START.md.prompt)" "say it|MOCK: reply the reply <goto>S</goto>|" &&
	eq timeout "$(f PreState.START.md.timeout)" 600 &&
	eq "run cost before" "$(f PreState.START.md.run_cost)" 0 &&
	check "Cost event numbers disagree with the run cost $cost" \
		awk -v a="$(f Cost.turn)" -v b="$(f Cost.total)" -v c="$(f Cost.agent)" -v d="$(f Cost.run)" -v e="$cost" \
		"BEGIN { exit !(a > 0 && a == b && b == c && c == d && d == e) }" &&
	check "PostState/PreState costs disagree with the run cost $cost" \
		awk -v a="$(f PostState.START.md.cost)" -v b="$(f PostState.START.md.agent_cost)" \
		-v c="$(f PostState.START.md.run_cost)" -v d="$(f PreState.S.sh.run_cost)" -v e="$cost" \
		"BEGIN { exit !(a == e && b == e && c == e && d == e) }" &&
	eq "script cost" "$(f PostState.S.sh.cost)" 0 &&
	eq "markdown output" "$(f PostState.START.md.output)" "the reply <goto>S</goto>" &&
	eq "script output" "$(f PostState.S.sh.output)" "script out|<call return=\"R\" input=\"in\">C</call>|" &&
	eq "script exit" "$(f PostState.S.sh.exit)" 0 &&
	eq duration "$(f PostState.S.sh.duration)" number &&
	eq "goto fields" "$(f PreTransition.START.md)" "goto S.sh nil nil nil" &&
	eq "call fields" "$(f PreTransition.S.sh)" "call C.sh R.sh in nil" &&
	eq "result fields" "$(f PreTransition.C.sh)" "result nil nil nil back" &&
	eq AgentExit "$(f AgentExit.result)" ok &&
	eq RunEnd "$(f RunEnd)" "completed ok"
'

# --------------------------------------------------------------- decisions

test_expect_success 'PreState transition skips the state: the script never runs' '
	state START.sh <<-\EOS &&
	echo "<goto>X</goto>"
	EOS
	state X.sh <<-\EOS &&
	touch side-effect
	echo "<result>from x</result>"
	EOS
	state E.sh <<-\EOS &&
	echo "<result>from e</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreState = function(ev)
	    if ev.state == "X.sh" then return { transition = { tag = "goto", target = "E" } } end
	  end,
	  PostState = function(ev)
	    if ev.state == "X.sh" then error("PostState of a skipped state") end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" "from e" &&
	test ! -e side-effect
'

test_expect_success 'PreState model and prompt decisions reach the CLI' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	model: haiku
	---
	original prompt
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	not this one
	MOCK: reply <result>from the file</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreState = function(ev)
	    if ev.state == "START.md" then return { model = "opus", effort = "low" } end
	    return { prompt = "replaced\nMOCK: reply <result>from the hook</result>" }
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" "from the hook" &&
	calls 2 &&
	log 1 | grep -F "\"--model\",\"opus\",\"--effort\",\"low\"" &&
	! log 1 | grep -F "haiku" &&
	log 1 | jstr model | grep -q opus &&
	eq prompt "$(log 2 | jstr prompt)" "replaced\\nMOCK: reply <result>from the hook</result>"
'

test_expect_success 'PostState transition replaces a script state own tag' '
	state START.sh <<-\EOS &&
	echo "<goto>A</goto>"
	EOS
	state A.sh <<-\EOS &&
	touch a-ran
	echo "<result>a</result>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostState = function(ev)
	    if ev.state == "START.sh" then return { transition = { tag = "goto", target = "B.sh" } } end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	test ! -e a-ran
'

test_expect_success 'PostState block fails a script state with the reason' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	touch b-ran
	echo "<result>b</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostState = function(ev)
	    return { decision = "block", reason = "output looks wrong" }
	  end,
	}
	EOS
	expect_status 1 raymond wf 2>err &&
	grep "blocked by .*hooks.lua:2: output looks wrong" err &&
	grep -q "START.sh" err &&
	eq status "$(run_status)" failed &&
	test ! -e b-ran
'

test_expect_success 'PostState block on a markdown state re-prompts the same session with the reason' '
	use_fake &&
	state START.md <<-\EOS &&
	answer
	MOCK: reply first <result>one</result> || reply second <result>two</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostState = function(ev)
	    if ev.output:find("first", 1, true) then
	      return { decision = "block", reason = "please think again XYZ" }
	    end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" two &&
	calls 2 &&
	s=$(log 1 | jstr session) &&
	eq "resumed 1" "$(log 1 | jlit resumed)" false &&
	eq "resumed 2" "$(log 2 | jlit resumed)" true &&
	eq "session 2" "$(log 2 | jstr session)" "$s" &&
	log 2 | grep -F "\"--resume\",\"$s\"" &&
	log 2 | jstr prompt | grep -F "please think again XYZ" &&
	log 2 | jstr prompt | grep -F "answer"
'

test_expect_success 'PreTransition block on a markdown state re-prompts; three blocks stop the run' '
	use_fake &&
	state START.md <<-\EOS &&
	answer
	MOCK: reply <result>bad</result> || reply <result>good</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.transition.payload == "bad" then
	      return { decision = "block", reason = "not bad please QRS" }
	    end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" good &&
	calls 2 &&
	eq "resumed 2" "$(log 2 | jlit resumed)" true &&
	eq "session 2" "$(log 2 | jstr session)" "$(log 1 | jstr session)" &&
	log 2 | jstr prompt | grep -F "not bad please QRS" &&
	rm -rf .raymond fake && use_fake &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function() return { decision = "block", reason = "never" } end }
	EOS
	expect_status 1 raymond wf 2>err &&
	calls 3 &&
	grep -q "never" err &&
	eq status "$(run_status)" failed
'

test_expect_success 'additionalContext is appended to the next markdown prompt only' '
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<goto>M</goto>"
	EOS
	state M.md <<-\EOS &&
	the M prompt
	MOCK: reply <goto>N</goto>
	EOS
	state N.md <<-\EOS &&
	the N prompt
	MOCK: reply <result>done</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.state == "START.sh" then return { additionalContext = "EXTRA CONTEXT 42" } end
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" done &&
	calls 2 &&
	log 1 | jstr prompt | grep -F "the M prompt" &&
	log 1 | jstr prompt | grep -F "EXTRA CONTEXT 42" &&
	! log 2 | grep -F "EXTRA CONTEXT 42" &&
	! grep -q "\"context\"" "$(state_file)"
'

test_expect_success 'continue=false from RunStart stops before anything runs; --resume starts it' '
	state START.sh <<-\EOS &&
	touch ran
	echo "<result>ok</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  RunStart = function() return { continue = false, stopReason = "not today" } end,
	}
	EOS
	expect_status 3 "$RAYMOND" wf 2>err &&
	grep "stopped by .*hooks.lua:2: not today" err &&
	grep -qx "raymond: run $(run_id) stopped; continue with: raymond --resume $(run_id)" err &&
	test ! -e ran &&
	eq status "$(run_status)" stopped &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" ok &&
	test -e ran
'

# ------------------------------------------------------ order and options

# Five hook files that each append their name to ./marks in PreTransition
# and send START.sh to their own state.
five_hooks() {
	state START.sh <<-\EOS &&
	echo "<goto>DEFAULT</goto>"
	EOS
	for s in DEFAULT H A B X Y; do
		printf 'echo "<result>%s</result>"\n' "$s" >wf/$s.sh || return 1
	done
	mkdir -p wf/hooks &&
	for f in wf/hooks.lua:H wf/hooks/20_b.lua:B wf/hooks/10_a.lua:A x.lua:X y.lua:Y; do
		name=${f%%:*} target=${f#*:} &&
		cat >"$name" <<-EOS || return 1
		return {
		  PreTransition = function(ev)
		    local old = raymond.read_file("marks") or ""
		    raymond.write_atomic("marks", old .. "$target ")
		    if ev.state == "START.sh" and not os.getenv("SKIP_$target") then
		      return { transition = { tag = "goto", target = "$target" } }
		    end
		  end,
		}
		EOS
	done
}

test_expect_success 'hook files run in order; the first decision wins and every handler runs' '
	five_hooks &&
	raymond wf --hooks x.lua --hooks y.lua --quiet >out &&
	eq result "$(cat out)" H &&
	eq marks "$(cat marks)" "H A B X Y H A B X Y " &&
	rm -rf .raymond marks &&
	SKIP_H=1 SKIP_A=1 SKIP_B=1 raymond wf --hooks x.lua --hooks y.lua --quiet >out &&
	eq "result without H, A, B" "$(cat out)" X &&
	rm -rf .raymond marks &&
	SKIP_H=1 SKIP_A=1 SKIP_B=1 raymond wf --hooks y.lua --hooks x.lua --quiet >out &&
	eq "result with --hooks swapped" "$(cat out)" Y &&
	eq marks "$(cat marks)" "H A B Y X H A B Y X " &&
	rm -rf .raymond marks &&
	SKIP_H=1 raymond wf --hooks x.lua --hooks y.lua --quiet >out &&
	eq "result without H" "$(cat out)" A
'

test_expect_success '--status lists the hook files in order; --no-default-hooks drops the defaults' '
	five_hooks &&
	raymond wf --hooks x.lua --hooks y.lua --quiet >/dev/null &&
	raymond --status "$(run_id)" >status &&
	cat status &&
	sed -n "/^Hooks:/,/^Agents:/p" status | sed "s/^Hooks://; /^Agents:/d; s/^ *//" >got &&
	printf "%s\n" hooks/budget.lua hooks/evaluate.lua hooks/guard.lua hooks/loops.lua hooks/visits.lua \
		"$PWD/wf/hooks.lua" "$PWD/wf/hooks/10_a.lua" "$PWD/wf/hooks/20_b.lua" \
		"$PWD/x.lua" "$PWD/y.lua" >want &&
	diff want got &&
	rm -rf .raymond &&
	raymond wf --hooks x.lua --no-default-hooks --quiet >/dev/null &&
	raymond --status "$(run_id)" >status &&
	sed -n "/^Hooks:/,/^Agents:/p" status | sed "s/^Hooks://; /^Agents:/d; s/^ *//" >got &&
	printf "%s\n" "$PWD/wf/hooks.lua" "$PWD/wf/hooks/10_a.lua" "$PWD/wf/hooks/20_b.lua" "$PWD/x.lua" >want &&
	diff want got
'

test_expect_success '--no-default-hooks: a budget that would stop the run no longer does' '
	use_fake &&
	state START.md <<-\EOS &&
	expensive
	MOCK-USAGE: 100000 10000
	MOCK: reply <goto>B</goto>
	EOS
	state B.md <<-\EOS &&
	more
	MOCK: reply <result>done</result>
	EOS
	expect_status 3 "$RAYMOND" wf --budget 0.01 2>err &&
	grep -q "budget exceeded" err &&
	eq status "$(run_status)" stopped &&
	calls 1 &&
	rm -rf .raymond fake && use_fake &&
	raymond wf --budget 0.01 --no-default-hooks --quiet >out &&
	eq result "$(cat out)" done &&
	calls 2 &&
	! grep -F -- "--max-budget-usd" fake/log.jsonl
'

test_expect_success '--hooks with a relative path from another directory; the options persist for --resume' '
	mkdir -p proj/wf proj/hk run &&
	cat >proj/wf/START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	cat >proj/wf/B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	cat >proj/hk/mine.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    ev.run.data.seen = (ev.run.data.seen or 0) + 1
	    if ev.state == "START.sh" and ev.run.data.seen == 1 then
	      return { continue = false, stopReason = "pause here" }
	    end
	  end,
	}
	EOS
	cd run &&
	expect_status 3 "$RAYMOND" ../proj/wf --hooks ../proj/hk/mine.lua --no-default-hooks 2>err &&
	grep -q "pause here" err &&
	eq status "$(run_status)" stopped &&
	id=$(run_id) &&
	raymond --status "$id" >status &&
	h=$(sed -n "s/^Hooks: *//p" status) &&
	{ case $h in /*/mine.lua) test -f "$h" ;; *) false ;; esac ||
		{ echo "--status does not list the --hooks file as an absolute path:"; cat status; false; }; } &&
	! grep -q "hooks/budget.lua" status &&
	raymond --resume "$id" --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"seen\":3" "$(state_file)" &&
	raymond --status "$id" >status &&
	! grep -q "hooks/budget.lua" status
'

test_expect_success '--hooks given again on --resume replaces the kept ones' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	for n in first second; do
		cat >$n.lua <<-EOS || exit 1
		return {
		  PreTransition = function(ev)
		    local old = raymond.read_file("marks") or ""
		    raymond.write_atomic("marks", old .. "$n ")
		    if "$n" == "first" then return { continue = false } end
		  end,
		}
		EOS
	done &&
	expect_status 3 "$RAYMOND" wf --hooks first.lua 2>err &&
	eq status "$(run_status)" stopped &&
	raymond --resume "$(run_id)" --hooks second.lua --quiet >out &&
	eq result "$(cat out)" b &&
	eq marks "$(cat marks)" "first second second " &&
	raymond --status "$(run_id)" >status &&
	grep -q "second.lua" status &&
	! grep -q "first.lua" status
'

# ------------------------------------------------------------- on_error

test_expect_success 'on_error = "warn": a raising handler is a warning; without it the run fails naming file:line' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	mkdir -p wf/hooks &&
	cat >wf/hooks/lenient.lua <<-\EOS &&
	return {
	  on_error = "warn",
	  PreTransition = function(ev)
	    error("lenient broke")
	  end,
	  PostTransition = function(ev)
	    return { decision = "maybe" }
	  end,
	}
	EOS
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" b &&
	grep "lenient.lua:4: lenient broke" err &&
	grep "lenient.lua" err | grep -q "must be \"block\"" &&
	eq status "$(run_status)" completed &&
	rm -rf .raymond &&
	sed -i "/on_error/d" wf/hooks/lenient.lua &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	grep "lenient.lua:3: lenient broke" err &&
	eq status "$(run_status)" failed
'

# ---------------------------------------------------------- frontmatter

test_expect_success 'frontmatter declared by a hook file is not reported; an undeclared field is' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	my_field: hello
	other_field: 3
	---
	prompt
	MOCK: reply <result>ok</result>
	EOS
	cat >decl.lua <<-\EOS &&
	return { frontmatter = { my_field = "string" } }
	EOS
	raymond wf --hooks decl.lua --quiet >out 2>err &&
	eq result "$(cat out)" ok &&
	grep "unknown frontmatter field .other_field." err &&
	! grep "my_field" err &&
	rm -rf .raymond &&
	raymond wf --quiet >out 2>err &&
	grep "unknown frontmatter field .my_field." err
'

# ------------------------------------------------------ data across crashes

counter_trial() {
	seed=$1
	rm -rf .raymond
	RANDOM=$seed
	delay=$(printf '0.%03d' $((RANDOM % 500 + 30)))
	"$RAYMOND" wf/START.sh --quiet --no-debug >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	if [ -z "$(run_id 2>/dev/null)" ]; then
		# Killed before the first save (a busy or sanitized build starts
		# slowly): no transition happened, so there is nothing to count.
		echo "trial $seed: killed after ${delay}s, before the first save"
		return 0
	fi
	at=$(grep -o '"input":"[0-9]*"' "$(state_file)" | grep -o '[0-9]*' || echo 1)
	n=$(grep -o '"n":[0-9]*' "$(state_file)" | grep -o '[0-9]*$' || echo 0)
	if grep -q '"status":"completed"' "$(state_file)"; then
		echo "trial $seed: the kill came after the end"
	elif [ "$n" -ne $((at - 1)) ]; then
		echo "trial $seed: killed at step $at, but data.n is $n"
		return 1
	else
		raymond --resume "$(run_id)" --quiet --no-debug >out || return 1
		test "$(cat out)" = "finished" || { echo "trial $seed: result '$(cat out)'"; return 1; }
	fi
	n=$(grep -o '"n":[0-9]*' "$(state_file)" | grep -o '[0-9]*$')
	[ "$n" = 50 ] || { echo "trial $seed: after the resume data.n is $n, not 50"; return 1; }
	echo "trial $seed: killed after ${delay}s at step $at (n=$((at - 1))); resumed to n=50"
}

test_expect_success 'a PostTransition counter reaches exactly N after kill -9 and --resume' '
	state START.sh <<-\EOS &&
	n=${RAYMOND_INPUT:-1}
	sleep 0.01
	if [ "$n" -ge 50 ]; then echo "<result>finished</result>"
	else echo "<goto input=\"$((n + 1))\">START</goto>"; fi
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostTransition = function(ev) ev.run.data.n = (ev.run.data.n or 0) + 1 end,
	}
	EOS
	raymond wf --quiet --no-debug >out &&
	eq result "$(cat out)" finished &&
	grep -q "\"n\":50" "$(state_file)" &&
	for t in 1 2 3 4 5; do counter_trial $((t * 7919)) || exit 1; done
'

# ----------------------------------------------------- waiting in parallel

test_expect_success 'a hook waiting on raymond.exec does not hold up another agent' '
	state START.sh <<-\EOS &&
	echo "<fork>W</fork><fork>W</fork><goto>J</goto>"
	EOS
	# main_w2 takes its steps 2 to 4 while the hook of main_w1 waits.
	state W.sh <<-\EOS &&
	n=${RAYMOND_INPUT:-1}
	if [ "$RAYMOND_AGENT_ID" = main_w2 ] && [ "$n" -ge 2 ]; then
		for _ in $(seq 1200); do grep -q "^hook start" "$HLOG" 2>/dev/null && break; sleep 0.05; done
	fi
	echo "$RAYMOND_AGENT_ID step $n $(date +%s%N)" >>"$LOG"
	if [ "$n" -ge 4 ] || [ "$RAYMOND_AGENT_ID" = main_w1 ]; then echo "<result>w</result>"
	else echo "<goto input=\"$((n + 1))\">W</goto>"; fi
	EOS
	state J.sh <<-\EOS &&
	echo "<result>joined</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	local function note(s)
	  local old = raymond.read_file(os.getenv("HLOG")) or ""
	  raymond.write_atomic(os.getenv("HLOG"), old .. s .. " " .. string.format("%.0f", raymond.now() * 1e9) .. "\n")
	end
	return {
	  PreTransition = function(ev)
	    if ev.agent_id == "main_w1" and not ev.agent.data.slept then
	      ev.agent.data.slept = true
	      note("hook start")
	      -- wait (at most 60 s) until main_w2 has ended
	      local r = raymond.exec({ "sh", "-c", "for i in $(seq 1200); do " ..
	        "grep -q \"^main_w2 exit\" \"$HLOG\" && exit 0; sleep 0.05; done; exit 1" })
	      note("hook end " .. tostring(r and r.code))
	    end
	  end,
	  AgentExit = function(ev) note(ev.agent_id .. " exit") end,
	}
	EOS
	export LOG=$PWD/par.log HLOG=$PWD/hook.log &&
	raymond wf --quiet >out &&
	cat par.log hook.log &&
	eq result "$(cat out)" joined &&
	grep -q "^hook end 0 " hook.log &&
	hs=$(sed -n "s/^hook start //p" hook.log) &&
	he=$(sed -n "s/^hook end 0 //p" hook.log) &&
	w2=$(awk -v s="$hs" -v e="$he" "\$1 == \"main_w2\" && \$2 == \"step\" && \$4 > s && \$4 < e" par.log | wc -l) &&
	check "only $w2 steps of main_w2 ran while the hook waited" test "$w2" -ge 3 &&
	check "main_w2 did not end while main_w1 waited" \
		awk -v e="$he" "\$1 == \"main_w2\" && \$2 == \"exit\" && \$3 < e { f = 1 } END { exit !f }" hook.log
'

test_done
