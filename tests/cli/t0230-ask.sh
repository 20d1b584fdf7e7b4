#!/bin/bash
# <ask>: --on-ask reject and pause, exit status 2 with the JSON, answers
# with resume --input and raymond answer, several asks at once, bad input.
. "$(dirname "$0")/lib.sh"

# START.sh asks; the answer goes to YES.sh, which returns it.
asking_workflow() {
	state START.sh <<-\EOS &&
	echo start >>"$RUNS_LOG"
	echo "<ask next=\"YES.sh\">Ship it?</ask>"
	EOS
	state YES.sh <<-\EOS
	echo "yes $RAYMOND_INPUT" >>"$RUNS_LOG"
	echo "<result>answer: $RAYMOND_INPUT</result>"
	EOS
}

# A key of the JSON raymond printed: its string value.
json_key() { sed -n "s/^ *\"$1\": \"\\(.*\\)\",\\{0,1\\}\$/\\1/p" "$2" | head -1; }

test_expect_success 'a workflow that can ask is refused under the default --on-ask reject, naming file and line' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	expect_status 1 raymond wf 2>err &&
	grep -q "raymond: error: workflow .wf. declares <ask> transitions in state(s): wf/START.sh:2; this run takes no questions" err &&
	grep -q "hint: use --on-ask=pause" err &&
	test ! -e runs &&
	test ! -e .raymond/state
'

test_expect_success 'an <ask> in a workflow a -workflow tag leads to is refused at launch too' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	mkdir top &&
	cat >top/START.sh <<-\EOS &&
	echo start-top >>"$RUNS_LOG"
	echo "<call-workflow return=\"DONE\">../wf</call-workflow>"
	EOS
	cat >top/DONE.sh <<-\EOS &&
	echo "<result>$RAYMOND_INPUT</result>"
	EOS
	expect_status 1 raymond top 2>err &&
	grep -q "raymond: error: workflow .top. declares <ask> transitions in state(s): wf/START.sh:2; this run takes no questions" err &&
	test ! -e runs &&
	test ! -e .raymond/state &&
	expect_status 2 raymond top --on-ask pause >json 2>err &&
	grep -q "\"status\": \"asking\"" json
'

test_expect_success '--on-ask pause: exit 2, the JSON on stdout, the run saved as asking with its ask' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	expect_status 2 raymond wf --on-ask pause --workflow-id r1 >json 2>err &&
	test "$(json_key status json)" = asking &&
	test "$(json_key run_id json)" = r1 &&
	test "$(json_key workflow json)" = wf &&
	test "$(json_key agent_id json)" = main &&
	test "$(json_key prompt json)" = "Ship it?" &&
	grep -q "^  \"pending_count\": 1,$" json &&
	grep -qF "\"resume\": \"raymond --resume r1 --input \\\"[your response]\\\"\"" json &&
	grep -Eq "\"ask_id\": \"ask_main_[0-9]+\"" json &&
	grep -q "\"status\":\"asking\"" .raymond/state/r1.json &&
	grep -q "\"on_ask\":\"pause\"" .raymond/state/r1.json &&
	raymond list >list &&
	grep -q "^r1 *asking" list &&
	raymond status r1 >status &&
	grep -q "Status:    asking" status &&
	grep -Eq "^    asking ask_main_[0-9]+: Ship it\?" status &&
	raymond list --recover >ids &&
	grep -qx r1 ids &&
	expect_status 2 raymond watch r1 >watch 2>&1 &&
	grep -q "r1 asking" watch
'

test_expect_success 'resume --input answers the ask: {{input}} at next, the session kept, nothing run twice' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	expect_status 2 raymond wf --on-ask pause --workflow-id r1 >json 2>/dev/null &&
	ask=$(json_key ask_id json) &&
	raymond --resume r1 --input "ship it" --quiet >out &&
	test "$(cat out)" = "answer: ship it" &&
	printf "start\nyes ship it\n" >expect &&
	cmp expect runs &&
	grep -q "\"resolved_inputs\":\\[{[^]]*\"ask_id\":\"$ask\"" .raymond/state/r1.json &&
	grep -q "\"response_text\":\"ship it\"" .raymond/state/r1.json
'

test_expect_success 'raymond resume ID without --input keeps waiting: exit 2 again, nothing run' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	expect_status 2 raymond wf --on-ask pause --workflow-id r1 >json1 2>/dev/null &&
	expect_status 2 raymond resume r1 >json2 2>/dev/null &&
	test "$(json_key ask_id json1)" = "$(json_key ask_id json2)" &&
	test "$(cat runs)" = start
'

test_expect_success 'an answer for an unknown ask id, or --input with nothing pending, changes nothing' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	expect_status 2 raymond wf --on-ask pause --workflow-id r1 >json 2>/dev/null &&
	ask=$(json_key ask_id json) &&
	cp .raymond/state/r1.json before &&
	expect_status 1 raymond answer r1 ask_main_1 yes 2>err &&
	grep -q "raymond: error: run r1 has no pending ask ask_main_1" err &&
	grep -q "hint: pending: $ask (agent main)" err &&
	cmp before .raymond/state/r1.json &&
	raymond answer r1 "$ask" "fine" --quiet >out &&
	test "$(cat out)" = "answer: fine" &&
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	stopped_run s1 &&
	cp .raymond/state/s1.json before &&
	expect_status 1 raymond --resume s1 --input late 2>err &&
	grep -q "raymond: error: run s1 has no pending ask for --input to answer" err &&
	cmp before .raymond/state/s1.json
'

test_expect_success 'several agents ask at once: each has its id, answering one leaves the others asking' '
	export RUNS_LOG=$PWD/runs &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"MAIN.sh\" q=\"first\">Q.sh</fork>"
	echo "<fork next=\"MAIN.sh\" q=\"second\">Q.sh</fork>"
	EOS
	state MAIN.sh <<-\EOS &&
	echo "<ask next=\"DONE.sh\">main question</ask>"
	EOS
	state Q.sh <<-\EOS &&
	echo "<ask next=\"DONE.sh\">question $q</ask>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID got $RAYMOND_INPUT" >>"$RUNS_LOG"
	echo "<result>$RAYMOND_AGENT_ID: $RAYMOND_INPUT</result>"
	EOS
	expect_status 2 raymond wf --on-ask pause --workflow-id m >json 2>/dev/null &&
	grep -q "^  \"pending_count\": 3,$" json &&
	sed -n "/\"pending\"/,\$p" json | grep -o "\"ask_id\": \"[^\"]*\"" | sort -u >ids &&
	test "$(wc -l <ids)" = 3 &&
	grep -Eq "ask_main_q1_[0-9]+" ids && grep -Eq "ask_main_q2_[0-9]+" ids && grep -Eq "ask_main_[0-9]+" ids &&
	second=$(grep -B2 "\"prompt\": \"question second\"" json | sed -n "s/.*\"ask_id\": \"\(.*\)\",/\1/p" | head -1) &&
	test -n "$second" &&
	expect_status 2 raymond answer m "$second" "two" >json2 2>/dev/null &&
	grep -q "^  \"pending_count\": 2,$" json2 &&
	! grep -q "$second" json2 &&
	test "$(cat runs)" = "main_q2 got two" &&
	oldest=$(json_key agent_id json2) &&
	expect_status 2 raymond --resume m --input "one" >json3 2>/dev/null &&
	grep -q "^  \"pending_count\": 1,$" json3 &&
	grep -qx "$oldest got one" runs &&
	raymond --resume m --input "three" --quiet >out &&
	test "$(wc -l <runs)" = 3 &&
	grep -q " got three$" runs &&
	test "$(cat out)" = "main: $(sed -n "s/^main got //p" runs)"
'

test_expect_success 'an ask the launch check cannot see fails under reject; --resume --on-ask pause goes on' '
	state START.sh <<-\EOS &&
	t=ask
	echo "<$t next=\"YES.sh\">computed?</$t>"
	EOS
	state YES.sh <<-\EOS &&
	echo "<result>$RAYMOND_INPUT</result>"
	EOS
	expect_status 1 raymond wf --workflow-id c 2>err &&
	grep -q "wf/START.sh (agent main): <ask> in a run that takes no questions (--on-ask reject, the default)" err &&
	grep -q "hint: continue with: raymond --resume c --on-ask pause" err &&
	grep -q "\"status\":\"failed\"" .raymond/state/c.json &&
	expect_status 2 raymond --resume c --on-ask pause >json 2>/dev/null &&
	raymond --resume c --input ok --quiet >out &&
	test "$(cat out)" = ok
'

test_expect_success 'bad <ask> attributes fail the state naming file, agent and attribute' '
	state START.sh <<-\EOS &&
	t=ask
	echo "<$t nxt=\"YES.sh\">q</$t>"
	EOS
	expect_status 1 raymond wf --on-ask pause 2>err &&
	grep -q "wf/START.sh (agent main): unknown attribute .nxt. on <ask>; allowed: next, timeout, timeout_next" err &&
	state START.sh <<-\EOS &&
	t=ask
	echo "<$t next=\"YES.sh\" timeout=\"2 days\">q</$t>"
	EOS
	state YES.sh <<-\EOS &&
	echo "<result>y</result>"
	EOS
	rm -rf .raymond &&
	expect_status 1 raymond wf --on-ask pause 2>err &&
	grep -q "wf/START.sh (agent main): <ask timeout=\"2 days\">: .2 days. is not a duration" err &&
	state START.sh <<-\EOS &&
	t=ask
	echo "<$t next=\"YES.sh\" timeout_next=\"YES.sh\">q</$t>"
	EOS
	expect_status 1 raymond wf --on-ask pause 2>err &&
	grep -q "<ask>: timeout_next needs timeout=" err
'

test_expect_success 'on_ask: pause in the project config file takes questions; --on-ask reject on the command line wins' '
	export RUNS_LOG=$PWD/runs &&
	asking_workflow &&
	mkdir -p .raymond &&
	printf "raymond:\n  on_ask: pause\n" >.raymond/config.yaml &&
	expect_status 2 raymond wf --workflow-id c1 >json 2>/dev/null &&
	grep -q "\"on_ask\":\"pause\"" .raymond/state/c1.json &&
	expect_status 1 raymond wf --on-ask reject --workflow-id c2 2>err &&
	grep -q "declares <ask> transitions" err &&
	printf "raymond:\n  on_ask: maybe\n" >.raymond/config.yaml &&
	expect_status 1 raymond wf 2>err &&
	grep -q "config.yaml:2: on_ask must be reject, pause or prompt, not .maybe." err
'

test_expect_success 'a PreTransition hook may turn a transition into an <ask>, checked like a tag' '
	state START.sh <<-\EOS &&
	echo "<goto>YES.sh</goto>"
	EOS
	state YES.sh <<-\EOS &&
	echo "<result>${RAYMOND_INPUT:-no input}</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function(ev)
	  if ev.state == "START.sh" then return { transition = { tag = "ask", payload = "from a hook?", next = "YES" } } end
	end }
	EOS
	expect_status 2 raymond wf --on-ask pause --workflow-id h >json 2>/dev/null &&
	test "$(json_key prompt json)" = "from a hook?" &&
	raymond --resume h --input "hooked" --quiet >out &&
	test "$(cat out)" = hooked &&
	sed -i "s/next = \"YES\"/next = \"NOPE\"/" wf/hooks.lua &&
	expect_status 1 raymond wf --on-ask pause 2>err &&
	grep -q "returned an invalid transition: <ask next=\"NOPE\">: state .NOPE. not found" err
'

test_expect_success 'lint: missing-ask-next and invalid-ask-timeout; --on-ask takes reject, pause or prompt only' '
	state START.sh <<-\EOS &&
	echo "<ask timeout=\"5x\">q</ask>"
	EOS
	expect_status 1 raymond lint wf >out &&
	grep -q "wf/START.sh:1: error: <ask> without next=\"STATE\": the answer has nowhere to go \[missing-ask-next\]" out &&
	grep -q "wf/START.sh:1: error: <ask timeout=\"5x\">: .5x. is not a duration.*\[invalid-ask-timeout\]" out &&
	expect_status 1 raymond wf --on-ask maybe 2>err &&
	grep -q "on-ask must be reject, pause or prompt, not .maybe." err
'

test_done
