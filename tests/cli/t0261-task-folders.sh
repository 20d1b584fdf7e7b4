#!/bin/bash
# Task folders: every agent has .raymond/tasks/<run>/<agent>, made before
# its first state, in $RAYMOND_TASK_FOLDER and {{task_folder}};
# <reset task="new"> gives a fresh <agent>_task<n>, <fork task="inherit">
# the parent's, a <result> the caller's back; bad values are errors that
# change nothing; prune removes them; a kill -9 loses none.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

# The task folder root of the only run, as a real path.
tasks() { echo "$(pwd -P)/.raymond/tasks/$(run_id)"; }

test_expect_success 'a script finds its folder made, in RAYMOND_TASK_FOLDER; a prompt in {{task_folder}}' '
	use_fake &&
	state START.sh <<-\EOS &&
	test -d "$RAYMOND_TASK_FOLDER" && echo "$RAYMOND_TASK_FOLDER" >"$OUT/start-folder"
	echo note >"$RAYMOND_TASK_FOLDER/note.txt"
	echo "<goto>ASK.md</goto>"
	EOS
	state ASK.md <<-\EOS &&
	Your notes are in {{task_folder}}.
	MOCK: reply <result>ok</result>
	EOS
	export OUT=$PWD &&
	raymond wf >out &&
	test "$(cat start-folder)" = "$(tasks)/main" &&
	test "$(cat "$(tasks)/main/note.txt")" = note &&
	grep -F "\"prompt\":\"Your notes are in $(tasks)/main.\\n" fake/log.jsonl
'

test_expect_success 'hooks see the agent'"'"'s task folder in ev.agent.task_folder' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return { PreState = function(ev) ev.run.data.seen = ev.agent.task_folder end }
	EOS
	raymond wf --quiet >out &&
	state_json | grep -F "\"data\":{\"seen\":\"$(tasks)/main\"}"
'

test_expect_success 'reset task=new gives a fresh folder; fork task=inherit shares the parent'"'"'s; a result gives the caller its own back' '
	state START.sh <<-\EOS &&
	echo "start $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	echo "<function return=\"BACK.sh\">SUB.sh</function>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "sub $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	echo "<reset task=\"new\">FRESH.sh</reset>"
	EOS
	state FRESH.sh <<-\EOS &&
	echo "fresh $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	test -d "$RAYMOND_TASK_FOLDER"
	echo "<result>r</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "back $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	echo "<fork next=\"END.sh\" task=\"inherit\">SHARE.sh</fork><fork>OWN.sh</fork>"
	EOS
	state SHARE.sh <<-\EOS &&
	echo "share $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	echo "<result>s</result>"
	EOS
	state OWN.sh <<-\EOS &&
	echo "own $RAYMOND_TASK_FOLDER" >>"$OUT/log"
	echo "<result>o</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	t=$(tasks) &&
	sort log >got &&
	printf "%s\n" "back $t/main" "fresh $t/main_task1" "own $t/main_own2" "share $t/main" \
		"start $t/main" "sub $t/main" >want &&
	diff want got &&
	test -d "$t/main_own2" && test ! -e "$t/main_share1"
'

test_expect_success 'bad task= values and task= where it does not belong fail naming the tag, state unchanged' '
	state START.sh <<-\EOS &&
	echo "<reset task=\"old\">START.sh</reset>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	grep -F "raymond: error: wf/START.sh (agent main): <reset task=\"old\">: task= on <reset> takes only \"new\"" err &&
	state_json | grep -q "\"state\":\"START.sh\"" &&
	! state_json | grep -q task_count &&
	rm -rf .raymond &&
	state START.sh <<-\EOS &&
	echo "<goto task=\"new\">START.sh</goto>"
	EOS
	expect_status 1 raymond wf --quiet 2>err &&
	grep -F "wf/START.sh:1: error: <goto> does not take task=; only <reset> and <reset-workflow> (task=\"new\"), <fork> and <fork-workflow> (task=\"inherit\") choose a task folder [unsupported-task-attribute]" err &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	grep -F "unknown attribute '"'"'task'"'"' on <goto>" err
'

test_expect_success 'a state file edited to give a task folder elsewhere is refused on resume, naming the agent' '
	state START.sh <<-\EOS &&
	test -e "$OUT/ok" || exit 1
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf --quiet 2>err &&
	mkdir elsewhere &&
	sed -i "s|\"task_folder\":\"[^\"]*\"|\"task_folder\":\"$(pwd -P)/elsewhere\"|" "$(state_file)" &&
	touch ok &&
	expect_status 1 raymond resume "$(run_id)" --quiet 2>err &&
	grep -F "raymond: error: wf/START.sh (agent main): the state file gives the task folder $(pwd -P)/elsewhere, which is not in $(tasks)" err &&
	sed -i "s|/elsewhere\"|/.raymond/tasks/$(run_id)/main/..\"|" "$(state_file)" &&
	expect_status 1 raymond resume "$(run_id)" --quiet 2>err &&
	grep -F "the state file gives the task folder $(tasks)/main/.., which is not in" err
'

test_expect_success 'raymond prune removes a run'"'"'s task folders with its other files' '
	state START.sh <<-\EOS &&
	echo kept >"$RAYMOND_TASK_FOLDER/f"
	echo "<result>ok</result>"
	EOS
	raymond wf --quiet >out &&
	t=$(tasks) &&
	test -f "$t/main/f" &&
	raymond prune --status completed >out &&
	test ! -e "$t"
'

test_expect_success 'kill -9 in a state: the resume finds the same folder, or makes it again when it is gone' '
	state START.sh <<-\EOS &&
	echo "$RAYMOND_TASK_FOLDER" >>"$OUT/folders"
	echo x >>"$RAYMOND_TASK_FOLDER/made"
	touch "$OUT/in-start"
	while [ ! -e "$OUT/go" ]; do sleep 0.05; done
	echo "<reset task=\"new\">NEXT.sh</reset>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "$RAYMOND_TASK_FOLDER" >>"$OUT/folders"
	touch "$OUT/in-next"
	while [ ! -e "$OUT/go2" ]; do sleep 0.05; done
	test -d "$RAYMOND_TASK_FOLDER"
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file in-start
	kill -9 "$pid"
	wait_for_exit "$pid"
	"$RAYMOND" resume "$(run_id)" --quiet >out 2>err &
	pid=$!
	touch go
	wait_for_file in-next
	t=$(tasks)
	test "$(cat "$t/main/made")" = "$(printf "x\nx")"
	kill -9 "$pid"
	wait_for_exit "$pid"
	rm -rf "$t/main_task1"
	touch go2
	raymond resume "$(run_id)" --quiet >out
	test "$(cat out)" = done
	printf "%s\n" "$t/main" "$t/main" "$t/main_task1" "$t/main_task1" >want
	diff want folders
'

test_expect_success 'task="new" on <reset-workflow>, task="inherit" on <fork-workflow>' '
	mkdir -p other &&
	cat >other/START.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID $RAYMOND_TASK_FOLDER" >>"$OUT/folders"
	echo "<result>ok</result>"
	EOS
	state START.sh <<-\EOS &&
	echo "<fork-workflow next=\"NEXT.sh\" task=\"inherit\">../other</fork-workflow>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<reset-workflow task=\"new\">../other</reset-workflow>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	grep -qx "main_other1 $(tasks)/main" folders &&
	grep -qx "main $(tasks)/main_task1" folders
'

test_done
