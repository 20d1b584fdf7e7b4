#!/bin/bash
# <print> output, what goes to stdout and stderr, and the environment a
# script state sees.
. "$(dirname "$0")/lib.sh"

test_expect_success 'print text goes to stdout, one line each, before the result' '
	state START.sh <<-\EOS &&
	echo "<print>first</print>"
	printf "<print>second\n</print>\n"
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<print>third</print><result>the result</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	printf "%s\n" first second third "the result" >want &&
	diff want out &&
	test ! -s err
'

test_expect_success 'a multi-line print is shown as written' '
	state START.sh <<-\EOS &&
	printf "<print>line a\nline b</print>\n"
	echo "<result>r</result>"
	EOS
	raymond wf --quiet >out &&
	printf "%s\n" "line a" "line b" r >want &&
	diff want out
'

test_expect_success 'print text split across reads is shown whole' '
	state START.sh <<-\EOS &&
	printf "<pri"; sleep 0.3; printf "nt>hel"; sleep 0.3; printf "lo</print>\n"
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >out &&
	printf "%s\n" hello done >want &&
	diff want out
'

test_expect_success 'print text appears before the state ends' '
	state START.sh <<-\EOS &&
	echo "<print>early bird</print>"
	# wait (at most 60 s) for the test to see the text
	i=0
	while [ ! -e "$OUT/seen-it" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
	if [ -e "$OUT/seen-it" ]; then echo "<result>in time</result>"; else echo "<result>too late</result>"; fi
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out 2>err &
	pid=$! &&
	if wait_for_line out "early bird" 50; then touch seen-it; fi &&
	wait $pid &&
	cat out &&
	printf "%s\n" "early bird" "in time" >want &&
	diff want out
'

test_expect_success 'prints from workers reach stdout, their results do not' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"END\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<print>from worker</print>"
	echo "<result>worker result</result>"
	EOS
	state END.sh <<-\EOS &&
	sleep 0.3
	echo "<result>main result</result>"
	EOS
	raymond wf --quiet >out &&
	printf "%s\n" "from worker" "main result" >want &&
	diff want out
'

test_expect_success 'a result is raw: tag-like text in it is neither run nor printed' '
	state START.sh <<-\EOS &&
	echo "<result>a <print>p</print> and <goto>B</goto></result>"
	EOS
	state B.sh <<-\EOS &&
	touch "$OUT/b-ran"
	echo "<result>b</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = "a <print>p</print> and <goto>B</goto>" &&
	test ! -e b-ran
'

test_expect_success 'the final result keeps its lines and an empty result prints nothing' '
	state START.sh <<-\EOS &&
	printf "<result>one\n  two\n\nfour</result>\n"
	EOS
	raymond wf --quiet >out &&
	printf "one\n  two\n\nfour\n" >want &&
	cmp want out &&
	state START.sh <<-\EOS &&
	echo "<result></result>"
	EOS
	raymond wf --quiet >out2 &&
	test ! -s out2
'

test_expect_success 'progress goes to stderr and --quiet silences it' '
	state START.sh <<-\EOS &&
	echo "not a tag, just chatter"
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = ok &&
	test -s err &&
	grep -q "$(run_id)" err &&
	rm -rf .raymond &&
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = ok &&
	test ! -s err
'

test_expect_success 'a script sees the run id, agent id, state dir and state file' '
	state START.sh <<-\EOS &&
	{
		echo "wf=$RAYMOND_WORKFLOW_ID"
		echo "agent=$RAYMOND_AGENT_ID"
		echo "dir=$RAYMOND_STATE_DIR"
		echo "file=$RAYMOND_STATE_FILE"
		echo "input=${RAYMOND_INPUT-unset} result=${RAYMOND_RESULT-unset}"
	} >"$OUT/env"
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "B file=$RAYMOND_STATE_FILE" >>"$OUT/env"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	dir=$(cd wf && pwd -P) &&
	printf "%s\n" "wf=$(run_id)" agent=main "dir=$dir" "file=$dir/START.sh" \
		"input=unset result=unset" "B file=$dir/B.sh" >want &&
	diff want env
'

test_expect_success 'the state dir is absolute when the workflow is given by a relative path' '
	mkdir -p deep/er &&
	state START.sh <<-\EOS &&
	echo "$RAYMOND_STATE_DIR" >"$OUT/dir"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	(cd deep/er && raymond ../../wf --quiet >/dev/null) &&
	test "$(cat dir)" = "$(cd wf && pwd -P)"
'

test_expect_success '--workflow-id names the run, its state file and RAYMOND_WORKFLOW_ID' '
	state START.sh <<-\EOS &&
	echo "$RAYMOND_WORKFLOW_ID" >"$OUT/id"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet --workflow-id my-run_1 >/dev/null &&
	test "$(cat id)" = my-run_1 &&
	test -f .raymond/state/my-run_1.json &&
	expect_status 1 raymond wf --quiet --workflow-id my-run_1 >out 2>err &&
	grep -q "^raymond: error: run my-run_1 already exists" err
'

test_expect_success 'workers see their own RAYMOND_AGENT_ID and the same run id' '
	state START.sh <<-\EOS &&
	echo "main $RAYMOND_AGENT_ID $RAYMOND_WORKFLOW_ID" >>"$OUT/ids"
	echo "<fork next=\"END\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "worker $RAYMOND_AGENT_ID $RAYMOND_WORKFLOW_ID" >"$OUT/wid"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>e</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	id=$(run_id) &&
	test "$(cat ids)" = "main main $id" &&
	test "$(cat wid)" = "worker main_w1 $id"
'

test_expect_success 'the caller environment passes through to scripts' '
	state START.sh <<-\EOS &&
	echo "<result>${MY_SETTING-unset}</result>"
	EOS
	MY_SETTING="from the caller" &&
	export MY_SETTING &&
	raymond wf --quiet >out &&
	test "$(cat out)" = "from the caller"
'

test_expect_success 'an --input with quotes, newlines and $ arrives unchanged' '
	state START.sh <<-\EOS &&
	printf "%s" "$RAYMOND_INPUT" >"$OUT/input"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	payload=$(printf "say \"hi\" \$HOME\nline2 <goto>X</goto>") &&
	raymond wf --quiet --input "$payload" >/dev/null &&
	test "$(cat input)" = "$payload"
'
test_expect_success 'scripts read stdin from /dev/null and do not see CLAUDECODE' '
	state START.sh <<-\EOS &&
	if read -r line; then got="read: $line"; else got=eof; fi
	echo "<result>$got ${CLAUDECODE-unset}</result>"
	EOS
	export CLAUDECODE=1 &&
	echo "from the terminal" | raymond wf --quiet --timeout 60 >out &&
	test "$(cat out)" = "eof unset"
'
test_done
