#!/bin/bash
# Cross-workflow tags end to end: <call-workflow>, <function-workflow>,
# <fork-workflow>, <reset-workflow> between workflow folders and archives,
# their state fields, their hooks, and the errors of bad input.
. "$(dirname "$0")/lib.sh"

# Archives are made with the project's own tool, not zip(1).
MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

# flow NAME FILE: a state FILE of workflow flows/NAME, read from stdin.
flow() { mkdir -p "flows/$1" && cat >"flows/$1/$2"; }

# flows/sub: echoes its input back through a goto, so it takes two steps.
sub_flow() {
	flow sub 1_START.sh <<-\EOS
	echo "sub start [$RAYMOND_INPUT] in $RAYMOND_STATE_DIR" >>"$LOG"
	echo "<goto input=\"$RAYMOND_INPUT\">ECHO</goto>"
	EOS
	flow sub ECHO.sh <<-\EOS
	echo "<result>sub says $RAYMOND_INPUT</result>"
	EOS
}

test_expect_success 'call-workflow runs the other folder and its result comes back to the return state' '
	export LOG=$PWD/log && sub_flow &&
	flow main 1_START.sh <<-\EOS &&
	echo "<call-workflow return=\"BACK\" input=\"hi from {{agent_id}}\">../sub</call-workflow>"
	EOS
	flow main BACK.sh <<-\EOS &&
	echo "<result>main got: $RAYMOND_INPUT</result>"
	EOS
	raymond flows/main >out 2>err &&
	test "$(cat out)" = "main got: sub says hi from main" &&
	grep -qx "sub start \[hi from main\] in $PWD/flows/sub" log &&
	grep -q "1_START.sh -> call-workflow ../sub (1_START.sh) (return to BACK.sh)" err &&
	grep -q "ECHO.sh -> result" err
'

test_expect_success 'the state file records the workflow and depth while the agent is inside' '
	export LOG=$PWD/log &&
	flow sub 1_START.sh <<-\EOS &&
	touch inside && for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>ok</result>"
	EOS
	flow main 1_START.sh <<-\EOS &&
	echo "<function-workflow return=\"BACK\">../sub</function-workflow>"
	EOS
	flow main BACK.sh <<-\EOS
	echo "<result>back: $RAYMOND_INPUT</result>"
	EOS
	"$RAYMOND" flows/main --quiet >out 2>err &
	pid=$! &&
	wait_for_file inside &&
	state_json >st &&
	grep -q "\"workflow\":\"$PWD/flows/sub\"" st &&
	grep -q "\"depth\":1" st &&
	grep -q "\"stack\":\[{\"cwd\":\"$PWD\",\"state\":\"BACK.sh\",\"task_folder\":\"$PWD/.raymond/tasks/[^\"]*/main\"}\]" st &&
	raymond status "$(run_id)" >status &&
	grep -qF "  main at 1_START.sh in $PWD/flows/sub (depth 1) (returns to BACK.sh)" status &&
	touch go && wait $pid &&
	test "$(cat out)" = "back: ok"
'

test_expect_success 'function-workflow with cd, reset-workflow clears the stack, paths from an archive' '
	export LOG=$PWD/log && mkdir -p work &&
	flow target 1_START.sh <<-\EOS &&
	echo "target in $PWD input [$RAYMOND_INPUT]" >>"$LOG"
	echo "<result>target done</result>"
	EOS
	flow inner 1_START.sh <<-\EOS &&
	echo "<reset-workflow input=\"via {{input}}\">../target</reset-workflow>"
	EOS
	flow main 1_START.sh <<-\EOS &&
	echo "<function-workflow return=\"NEVER\" cd=\"work\" input=\"x\">../inner</function-workflow>"
	EOS
	flow main NEVER.sh <<-\EOS &&
	echo "<result>outer_sentinel</result>"
	EOS
	raymond flows/main --quiet >out &&
	test "$(cat out)" = "target done" &&
	grep -qx "target in $PWD/work input \[via x\]" log &&
	rm log && mkdir zsrc &&
	printf "%s\n" "echo \"<call-workflow return=\\\"B\\\">../target</call-workflow>\"" >zsrc/1_START.sh &&
	printf "%s\n" "echo \"<result>zip got \$RAYMOND_INPUT</result>\"" >zsrc/B.sh &&
	"$MKZIP" flows/pack.zip 1_START.sh=zsrc/1_START.sh B.sh=zsrc/B.sh &&
	raymond flows/pack.zip --quiet >out &&
	test "$(cat out)" = "zip got target done"
'

test_expect_success 'fork-workflow starts a worker in the other workflow with a counted id' '
	export LOG=$PWD/log &&
	flow sub 1_START.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID item=$item dir=$RAYMOND_STATE_DIR" >>"$LOG"
	echo "<result>w</result>"
	EOS
	flow main 1_START.sh <<-\EOS &&
	echo "<fork-workflow item=\"a\">../sub</fork-workflow><fork-workflow item=\"b\">../sub/</fork-workflow><goto>WAIT</goto>"
	EOS
	flow main WAIT.sh <<-\EOS &&
	for _ in $(seq 1 1200); do [ "$(wc -l <"$LOG")" -ge 2 ] && break; sleep 0.05; done
	echo "<result>main done</result>"
	EOS
	raymond flows/main --quiet >out &&
	test "$(cat out)" = "main done" &&
	grep -qx "main_sub1 item=a dir=$PWD/flows/sub" log &&
	grep -qx "main_sub2 item=b dir=$PWD/flows/sub" log
'

test_expect_success 'the called workflow has its own hooks; the caller'"'"'s do not apply inside it' '
	export LOG=$PWD/log && sub_flow &&
	flow sub hooks.lua <<-\EOS &&
	return { PreState = function(ev) raymond.log("sub hook sees " .. ev.state) end }
	EOS
	flow main hooks.lua <<-\EOS &&
	return { PreState = function(ev) raymond.log("main hook sees " .. ev.state) end }
	EOS
	flow main 1_START.sh <<-\EOS &&
	echo "<call-workflow return=\"BACK\" input=\"x\">../sub</call-workflow>"
	EOS
	flow main BACK.sh <<-\EOS &&
	echo "<result>$RAYMOND_INPUT</result>"
	EOS
	raymond flows/main >out 2>err &&
	grep -q "main hook sees 1_START.sh" err &&
	grep -q "sub hook sees 1_START.sh" err &&
	grep -q "sub hook sees ECHO.sh" err &&
	grep -q "main hook sees BACK.sh" err &&
	! grep -q "main hook sees ECHO.sh" err &&
	! grep -q "sub hook sees BACK.sh" err
'

test_expect_success 'markdown: the callee branches the caller'"'"'s session, its turns count in the run'"'"'s cost' '
	use_fake &&
	flow main 1_START.md <<-\EOS &&
	I am MAIN
	MOCK: reply <call-workflow return="BACK">../sub</call-workflow>
	EOS
	flow main BACK.md <<-\EOS &&
	I am BACK
	MOCK: reply <result>back</result>
	EOS
	flow sub 1_START.md <<-\EOS &&
	I am SUB
	MOCK: reply <result>sub done</result>
	EOS
	raymond flows/main >out 2>err &&
	test "$(cat out)" = back &&
	calls 3 &&
	s1=$(sed -n 1p fake/log.jsonl | sed -n "s/.*\"session\":\"\([^\"]*\)\".*/\1/p") &&
	sed -n 2p fake/log.jsonl | grep -qF "\"--resume\",\"$s1\",\"--fork-session\"" &&
	sed -n 2p fake/log.jsonl | grep -qF "\"prompt\":\"I am SUB" &&
	sed -n 3p fake/log.jsonl | grep -qF "\"--resume\",\"$s1\"" &&
	grep -qF "1_START.md -> result (\$0.0075, run total \$0.0150)" err &&
	grep -qF "BACK.md -> result (agent done) (\$0.0075, run total \$0.0225)" err
'

# bad_call TAG TEXT: main's START.sh prints TAG; the run fails at
# flows/main/1_START.sh (agent main) with TEXT, the state still at START.
bad_call() {
	mkdir -p flows/main flows/sub &&
	printf "printf \"%%s\\\\n\" %q\n" "$1" >flows/main/1_START.sh &&
	echo "echo \"<result>b</result>\"" >flows/main/BACK.sh &&
	echo "echo \"<result>s</result>\"" >flows/sub/1_START.sh &&
	expect_status 1 raymond flows/main --quiet --no-lint >out 2>err &&
	first=$(head -n 1 err) &&
	case $first in
	"raymond: error: flows/main/1_START.sh (agent main): "*"$2"*) ;;
	*) echo "unexpected: $first (wanted $2)"; return 1 ;;
	esac
	grep -q "^hint: .*raymond --resume" err &&
	state_json >st &&
	grep -q "\"state\":\"1_START.sh\"" st &&
	! grep -q "\"workflow\":\"$PWD/flows/sub\"" st &&
	! grep -q "\"stack\":\[{" st
}

test_expect_success 'bad input: a missing workflow, a misspelled attribute, cd on call-workflow' '
	bad_call "<call-workflow return=\"BACK\">../nope</call-workflow>" "workflow '"'"'$PWD/flows/nope'"'"' does not exist"
'
test_expect_success 'bad input: a misspelled attribute' '
	bad_call "<call-workflow retrun=\"BACK\">../sub</call-workflow>" "unknown attribute '"'"'retrun'"'"' on <call-workflow>"
'
test_expect_success 'bad input: cd on call-workflow' '
	bad_call "<call-workflow return=\"BACK\" cd=\"..\">../sub</call-workflow>" "<call-workflow> does not take cd="
'
test_expect_success 'bad input: a workflow outside the run'"'"'s folders' '
	mkdir -p elsewhere && cd elsewhere && mkdir -p "$TEST_ROOT/outside-$$" &&
	echo "echo \"<result>o</result>\"" >"$TEST_ROOT/outside-$$/1_START.sh" &&
	bad_call "<reset-workflow>$TEST_ROOT/outside-$$</reset-workflow>" "outside the folders a workflow may be taken from"
'
test_expect_success 'bad input: the fifth nested call names the agent and its depth' '
	mkdir -p flows/loop &&
	echo "echo \"<call-workflow return=\\\"1_START\\\">.</call-workflow>\"" >flows/loop/1_START.sh &&
	expect_status 1 raymond flows/loop --quiet >out 2>err &&
	grep -q "raymond: error: flows/loop/1_START.sh (agent main): <call-workflow>.</call-workflow>: agent main is already 4 cross-workflow calls deep" err &&
	state_json >st &&
	grep -q "\"depth\":4" st
'

test_expect_success 'resume refuses an archive that changed under an agent inside it' '
	mkdir -p zsrc flows/main &&
	printf "%s\n" "touch inside; for _ in \$(seq 1 1200); do [ -e go ] && break; sleep 0.05; done" "echo \"<result>z</result>\"" >zsrc/1_START.sh &&
	"$MKZIP" flows/z.zip 1_START.sh=zsrc/1_START.sh &&
	echo "echo \"<call-workflow return=\\\"B\\\">../z.zip</call-workflow>\"" >flows/main/1_START.sh &&
	echo "echo \"<result>b</result>\"" >flows/main/B.sh
	"$RAYMOND" flows/main --quiet >out 2>err &
	pid=$! &&
	wait_for_file inside &&
	kill -9 $pid && { wait $pid || true; } &&
	echo "echo changed" >zsrc/2.sh && "$MKZIP" flows/z.zip 1_START.sh=zsrc/1_START.sh 2.sh=zsrc/2.sh &&
	expect_status 1 raymond --resume "$(run_id)" --quiet >out 2>err &&
	grep -q "agent main: the archive $PWD/flows/z.zip changed since the run started" err || { cat err; false; }
'

test_expect_success 'a YAML workflow is a target too: its entry, or a state its path names' '
	mkdir -p flows &&
	cat >flows/checks.yaml <<-\EOY &&
	states:
	  START:
	    sh: |
	      echo "<result>entry of checks [$RAYMOND_INPUT]</result>"
	  LINT:
	    sh: |
	      echo "<result>lint of checks</result>"
	EOY
	flow main 1_START.sh <<-\EOS &&
	echo "<call-workflow return=\"MID\" input=\"x\">../checks.yaml</call-workflow>"
	EOS
	flow main MID.sh <<-\EOS &&
	echo "$RAYMOND_INPUT" >got
	echo "<function-workflow return=\"BACK\">../checks.yaml/LINT</function-workflow>"
	EOS
	flow main BACK.sh <<-\EOS &&
	echo "<result>back: $RAYMOND_INPUT</result>"
	EOS
	raymond flows/main --quiet >out &&
	test "$(cat out)" = "back: lint of checks" &&
	test "$(cat got)" = "entry of checks [x]"
'

test_expect_success 'an archive names one of its states as FILE.zip/STATE: on the command line and in a tag' '
	mkdir -p zsrc flows &&
	printf "%s\n" "echo \"<result>zip entry</result>\"" >zsrc/1_START.sh &&
	printf "%s\n" "echo \"<result>zip other [\$RAYMOND_INPUT]</result>\"" >zsrc/OTHER.sh &&
	"$MKZIP" flows/pack.zip 1_START.sh=zsrc/1_START.sh OTHER.sh=zsrc/OTHER.sh &&
	raymond flows/pack.zip/OTHER --input x --quiet >out &&
	test "$(cat out)" = "zip other [x]" &&
	flow main 1_START.sh <<-\EOS &&
	echo "<call-workflow return=\"BACK\" input=\"y\">../pack.zip/OTHER.sh</call-workflow>"
	EOS
	flow main BACK.sh <<-\EOS &&
	echo "<result>back: $RAYMOND_INPUT</result>"
	EOS
	raymond flows/main --quiet >out &&
	test "$(cat out)" = "back: zip other [y]" &&
	expect_status 1 raymond flows/pack.zip/NOPE 2>err &&
	grep -q "state .NOPE. not found in $PWD/flows/pack.zip" err
'

test_done
