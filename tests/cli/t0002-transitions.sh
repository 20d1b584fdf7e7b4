#!/bin/bash
# Transitions of script states: payloads, working directories, the call
# stack, and forks (fan-out, worker ids, variables, concurrency).
. "$(dirname "$0")/lib.sh"

test_expect_success 'goto input= reaches the next state and is cleared after it' '
	state START.sh <<-\EOS &&
	echo "<goto input=\"from start\">B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "input=${RAYMOND_INPUT-unset} result=${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<goto>C</goto>"
	EOS
	state C.sh <<-\EOS &&
	echo "input=${RAYMOND_INPUT-unset} result=${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	printf "%s\n" "input=from start result=from start" "input=unset result=unset" >want &&
	diff want seen
'

test_expect_success '--input reaches only the first state' '
	state START.sh <<-\EOS &&
	echo "first=${RAYMOND_INPUT-unset}/${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "second=${RAYMOND_INPUT-unset}/${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet --input "given text" >out &&
	printf "%s\n" "first=given text/given text" "second=unset/unset" >want &&
	diff want seen
'

test_expect_success 'scripts run in the directory raymond was started from' '
	mkdir elsewhere &&
	state START.sh <<-\EOS &&
	pwd -P >"$OUT/cwd"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	test "$(cat cwd)" = "$(pwd -P)"
'

test_expect_success 'reset cd= moves the agent (relative to its cwd) and input= reaches the next state' '
	mkdir -p d1/d2 &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"d1\">B</reset>"
	EOS
	state B.sh <<-\EOS &&
	echo "B $(pwd -P)" >>"$OUT/seen"
	echo "<reset cd=\"d2\" input=\"for C\">C</reset>"
	EOS
	state C.sh <<-\EOS &&
	echo "C $(pwd -P) ${RAYMOND_INPUT-unset}" >>"$OUT/seen"
	echo "<goto>D</goto>"
	EOS
	state D.sh <<-\EOS &&
	echo "D $(pwd -P) ${RAYMOND_INPUT-unset}" >>"$OUT/seen"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	top=$(pwd -P) &&
	printf "%s\n" "B $top/d1" "C $top/d1/d2 for C" "D $top/d1/d2 unset" >want &&
	diff want seen
'

test_expect_success 'reset cd= accepts an absolute directory' '
	mkdir abs &&
	export ABSDIR=$(cd abs && pwd -P) &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"$ABSDIR\">B</reset>"
	EOS
	state B.sh <<-\EOS &&
	pwd -P >"$OUT/cwd"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	test "$(cat cwd)" = "$ABSDIR"
'

test_expect_success 'call: input= reaches the callee, its result reaches the return state' '
	state START.sh <<-\EOS &&
	echo "<call return=\"BACK\" input=\"question\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "sub got ${RAYMOND_INPUT-unset}" >>"$OUT/seen"
	echo "<result>answer to $RAYMOND_INPUT</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "back got ${RAYMOND_INPUT-unset}|${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<goto>AFTER</goto>"
	EOS
	state AFTER.sh <<-\EOS &&
	echo "after got ${RAYMOND_RESULT-unset}" >>"$OUT/seen"
	echo "<result>final</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = final &&
	printf "%s\n" "sub got question" "back got answer to question|answer to question" \
		"after got unset" >want &&
	diff want seen
'

test_expect_success 'function: the callee result reaches the return state' '
	state START.sh <<-\EOS &&
	echo "<function return=\"BACK\" input=\"x\">SUB</function>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "<goto>SUB2</goto>"
	EOS
	state SUB2.sh <<-\EOS &&
	echo "<result>computed</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "<result>back:$RAYMOND_RESULT</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "back:computed"
'

test_expect_success 'nested calls return to the right frames, innermost first' '
	state START.sh <<-\EOS &&
	echo "<call return=\"R1\">S1</call>"
	EOS
	state S1.sh <<-\EOS &&
	echo "<function return=\"R2\">S2</function>"
	EOS
	state S2.sh <<-\EOS &&
	echo "<result>inner</result>"
	EOS
	state R2.sh <<-\EOS &&
	echo "<result>$RAYMOND_RESULT+middle</result>"
	EOS
	state R1.sh <<-\EOS &&
	echo "<result>$RAYMOND_RESULT+outer</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "inner+middle+outer"
'

test_expect_success 'result inside a call carries a multi-line payload intact' '
	state START.sh <<-\EOS &&
	echo "<call return=\"BACK\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	printf "<result>line one\n  line \"two\" \$HOME\n</result>\n"
	EOS
	state BACK.sh <<-\EOS &&
	printf "%s" "$RAYMOND_RESULT" >"$OUT/payload"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	printf "line one\n  line \"two\" \$HOME\n" >want &&
	cmp want payload
'

test_expect_success 'five forks and a goto: every worker runs with its id, variables, input and cwd' '
	mkdir wdir &&
	state START.sh <<-\EOS &&
	for i in 1 2 3 4; do
		echo "<fork item=\"it$i\" color=\"c$i\">WORKER</fork>"
	done
	echo "<fork item=\"it5\" color=\"c5\" input=\"in5\" cd=\"wdir\">WORKER</fork>"
	echo "<goto input=\"for main\">MAIN2</goto>"
	EOS
	state WORKER.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID item=${item-unset} color=${color-unset} input=${RAYMOND_INPUT-unset} cwd=$(pwd -P)" \
		>"$OUT/w.$RAYMOND_AGENT_ID"
	echo "<result>w</result>"
	EOS
	state MAIN2.sh <<-\EOS &&
	echo "main2 input=${RAYMOND_INPUT-unset} item=${item-unset}" >"$OUT/main2"
	echo "<result>main done</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = "main done" &&
	top=$(pwd -P) &&
	ls w.* >ids &&
	printf "w.main_worker%s\n" 1 2 3 4 5 >want_ids &&
	diff want_ids ids &&
	for i in 1 2 3 4; do
		test "$(cat w.main_worker$i)" = "main_worker$i item=it$i color=c$i input=unset cwd=$top" || exit 1
	done &&
	test "$(cat w.main_worker5)" = "main_worker5 item=it5 color=c5 input=in5 cwd=$top/wdir" &&
	test "$(cat main2)" = "main2 input=for main item=unset"
'

test_expect_success 'fork next= without a goto continues the parent at next' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"CONT\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/worker-ran"
	echo "<result>w</result>"
	EOS
	state CONT.sh <<-\EOS &&
	echo "<result>continued</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = continued &&
	test -f worker-ran
'

test_expect_success 'worker ids use the first six lowercase letters of the target stem' '
	state START.sh <<-\EOS &&
	echo "<fork>LongWorkerName</fork>"
	echo "<fork>Ab</fork>"
	echo "<goto>END</goto>"
	EOS
	state LongWorkerName.sh <<-\EOS &&
	touch "$OUT/id.$RAYMOND_AGENT_ID"
	echo "<result>x</result>"
	EOS
	state Ab.sh <<-\EOS &&
	touch "$OUT/id.$RAYMOND_AGENT_ID"
	echo "<result>x</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	test -f id.main_longwo1 &&
	test -f id.main_ab2 &&
	test "$(ls id.* | wc -l)" = 2
'

test_expect_success 'fork variables stay with the worker for its whole life' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"END\" job=\"t-42\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<call return=\"W3\">W2</call>"
	EOS
	state W2.sh <<-\EOS &&
	echo "w2 ${job-unset}" >>"$OUT/seen"
	echo "<result>r</result>"
	EOS
	state W3.sh <<-\EOS &&
	echo "w3 ${job-unset}" >>"$OUT/seen"
	echo "<reset>W4</reset>"
	EOS
	state W4.sh <<-\EOS &&
	echo "w4 ${job-unset}" >>"$OUT/seen"
	echo "<result>done</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	printf "%s\n" "w2 t-42" "w3 t-42" "w4 t-42" >want &&
	diff want seen
'

test_expect_success 'a worker without cd= inherits the parent cwd after a reset cd=' '
	mkdir sub &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"sub\">FORKER</reset>"
	EOS
	state FORKER.sh <<-\EOS &&
	echo "<fork next=\"END\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	pwd -P >"$OUT/wcwd"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	test "$(cat wcwd)" = "$(cd sub && pwd -P)"
'

test_expect_success 'nested forks: a worker can fork workers of its own' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"END\">OUTER</fork>"
	EOS
	state OUTER.sh <<-\EOS &&
	touch "$OUT/id.$RAYMOND_AGENT_ID"
	echo "<fork next=\"OUTER_END\" level=\"2\">SUB</fork>"
	echo "<fork level=\"2\">SUB</fork>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "$level" >"$OUT/id.$RAYMOND_AGENT_ID"
	echo "<result>s</result>"
	EOS
	state OUTER_END.sh <<-\EOS &&
	echo "<result>o</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test "$(cat out)" = end &&
	ls id.* >ids &&
	printf "%s\n" id.main_outer1 id.main_outer1_sub1 id.main_outer1_sub2 >want &&
	diff want ids &&
	test "$(cat id.main_outer1_sub1)" = 2
'

test_expect_success 'fork counters are never reused across fork steps of one parent' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"WAIT1\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/id.$RAYMOND_AGENT_ID"
	echo "<result>w</result>"
	EOS
	state WAIT1.sh <<-\EOS &&
	# let the first worker end (leave the run) before forking again
	for _ in $(seq 1200); do
		"$RAYMOND" --status "$RAYMOND_WORKFLOW_ID" --json | grep -q "\"id\":\"main_w1\"" || break
		sleep 0.05
	done
	echo "<fork next=\"SECOND\">W</fork>"
	echo "<fork>OTHER</fork>"
	EOS
	state OTHER.sh <<-\EOS &&
	touch "$OUT/id.$RAYMOND_AGENT_ID"
	echo "<result>o</result>"
	EOS
	state SECOND.sh <<-\EOS &&
	echo "<fork next=\"END\">W</fork>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	ls id.* >ids &&
	printf "%s\n" id.main_other3 id.main_w1 id.main_w2 id.main_w4 >want &&
	diff want ids
'

test_expect_success 'the run ends when its last agent ends and prints only main result' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"END\">SLOW</fork>"
	EOS
	state SLOW.sh <<-\EOS &&
	for _ in $(seq 1200); do [ -e "$OUT/main-ended" ] && break; sleep 0.05; done
	touch "$OUT/slow-done"
	echo "<result>worker result</result>"
	EOS
	state END.sh <<-\EOS &&
	touch "$OUT/main-ended"
	echo "<result>main result</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >out &&
	test -f slow-done &&
	test "$(cat out)" = "main result" &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

test_expect_success 'workers run concurrently: each sees the other running' '
	state START.sh <<-\EOS &&
	echo "<fork>W</fork>"
	echo "<fork>W</fork>"
	echo "<goto>END</goto>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/running.$RAYMOND_AGENT_ID"
	for _ in $(seq 1200); do [ "$(ls "$OUT" | grep -c "^running\.")" = 2 ] && break; sleep 0.05; done
	ls "$OUT" | grep "^running\." >"$OUT/seen.$RAYMOND_AGENT_ID"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	printf "%s\n" running.main_w1 running.main_w2 >want &&
	diff want seen.main_w1 &&
	diff want seen.main_w2
'

test_expect_success 'a long-running worker does not hold up the main agent' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"MAIN2\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	# wait (at most 60 s) for a file that only the main agent next state makes
	i=0
	while [ ! -e "$OUT/main-progressed" ] && [ $i -lt 1200 ]; do sleep 0.05; i=$((i+1)); done
	if [ -e "$OUT/main-progressed" ]; then echo saw >"$OUT/worker"; else echo timeout >"$OUT/worker"; fi
	echo "<result>w</result>"
	EOS
	state MAIN2.sh <<-\EOS &&
	touch "$OUT/main-progressed"
	echo "<goto>MAIN3</goto>"
	EOS
	state MAIN3.sh <<-\EOS &&
	echo "<result>main</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	test "$(cat worker)" = saw
'

test_expect_success '--max-parallel 1 runs one state at a time' '
	state START.sh <<-\EOS &&
	echo "<fork>W</fork>"
	echo "<fork>W</fork>"
	echo "<goto>END</goto>"
	EOS
	state W.sh <<-\EOS &&
	mkdir "$OUT/lock" 2>/dev/null || echo overlap >>"$OUT/overlap"
	sleep 0.5
	rmdir "$OUT/lock"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	t0=$(now_ms) &&
	raymond wf --quiet --max-parallel 1 >out &&
	t1=$(now_ms) &&
	echo "elapsed $((t1 - t0)) ms" &&
	test "$(cat out)" = end &&
	test ! -e overlap &&
	test $((t1 - t0)) -ge 1000
'
test_expect_success 'single-quoted attribute values work like double-quoted ones' '
	state START.sh <<-\EOS &&
	printf "<goto input=\047say \"hi\"\047>B</goto>\n"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>$RAYMOND_INPUT</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "say \"hi\""
'

test_expect_success 'a result returning to a caller restores the caller directory' '
	mkdir -p sub &&
	state START.sh <<-\EOS &&
	echo "<call return=\"BACK\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "<reset cd=\"sub\">SUB2</reset>"
	EOS
	state SUB2.sh <<-\EOS &&
	echo "sub2 $(pwd -P)" >>"$OUT/seen"
	echo "<result>r</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "back $(pwd -P)" >>"$OUT/seen"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf --quiet >/dev/null &&
	top=$(pwd -P) &&
	printf "%s\n" "sub2 $top/sub" "back $top" >want &&
	diff want seen
'

test_expect_success 'a fork attribute cannot name a RAYMOND_ variable: the run fails, no worker starts' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"END\" RAYMOND_AGENT_ID=\"fake\" RAYMOND_STATE_DIR=\"/nowhere\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID $RAYMOND_STATE_DIR" >"$OUT/w"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf --quiet >/dev/null 2>err &&
	grep -q "attribute .RAYMOND_[A-Z_]*. cannot be a worker variable" err &&
	test ! -e w
'
test_done
