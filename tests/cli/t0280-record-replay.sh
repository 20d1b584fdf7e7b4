#!/bin/bash
# --record FILE and replay: a run against the fake Claude Code CLI is
# recorded, then played back offline (no CLI at all) as `raymond test
# --replay` does it: the cassette compiled to a test case
# (raymond.cassette.case) in a sandbox S, the child run started with
# RAYMOND_TEST_CASE, its trace compared with the recording
# (raymond.cassette.compare).  tests/cli/cassette.lua does the runner's
# part (replay-lib.sh).
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE
. "$(dirname "$0")/replay-lib.sh"

trace() { cat S/.raymond/test/trace.jsonl; }
result_of() { sed -n 's/.*"result":"\([^"]*\)".*/\1/p' "$1"; }

# A loop: START, then REVIEW sends the work to FIX once and approves it
# the second time; FIX goes back to REVIEW.
loop_workflow() {
	state START.md <<-\EOS &&
	Start on {{input}}.
	MOCK: reply <goto>REVIEW</goto>
	EOS
	state REVIEW.md <<-\EOS &&
	Review the work.
	MOCK: reply needs work <goto>FIX</goto> || reply fine <result>approved</result>
	EOS
	state FIX.md <<-\EOS
	Fix it.
	MOCK: reply <goto>REVIEW</goto>
	EOS
}

test_expect_success 'record a run, replay it offline: the same path, result and cost; visits count' '
	use_fake && loop_workflow &&
	raymond run wf --input "the parser" --record rec.cassette --quiet >out &&
	eq result "$(cat out)" approved &&
	calls 4 &&
	head -1 rec.cassette | has "\"cassette\":1" &&
	head -1 rec.cassette | has "\"workflow\":\"wf\"" &&
	head -1 rec.cassette | has "\"input\":\"the parser\"" &&
	eq turns "$(grep -c "\"ev\":\"turn\"" rec.cassette)" 4 &&
	grep "\"ev\":\"turn\"" rec.cassette | grep "\"state\":\"REVIEW.md\"" | grep -q "\"visit\":2" &&
	tail -1 rec.cassette | has "\"paths\":{\"main\":[\"START.md\",\"REVIEW.md\",\"FIX.md\",\"REVIEW.md\"]}" &&
	tail -1 rec.cassette | has "\"result\":\"approved\"" &&
	replay rec.cassette &&
	eq status "$(cat status)" 0 &&
	eq "replayed result" "$(cat rout)" approved &&
	eq "fake calls" "$(wc -l <fake/log.jsonl)" 4 &&
	trace | lacks diverge &&
	eq compare "$(helper compare rec.cassette)" same &&
	rc=$(sed -n "s/.*\"cost\":\([0-9.]*\).*/\1/p" .raymond/state/*.json) &&
	tc=$(sed -n "s/.*\"cost\":\([0-9.]*\).*/\1/p" S/.raymond/state/test.json) &&
	eq cost "$tc" "$rc"
'

test_expect_success 'the old form records too; an evaluate turn is recorded and replayed' '
	use_fake && mkdir -p wf &&
	cat >wf/START.md <<-\EOS &&
	---
	evaluate:
	  prompt: |
	    Is it good? Answer YES or NO.
	    {{output}}
	  routes:
	    YES: SHIP
	    NO: FIX
	---
	write it
	MOCK: reply it is written\nMOCK: reply YES
	EOS
	printf "echo \"<result>shipped</result>\"\n" >wf/SHIP.sh &&
	printf "echo \"<result>fixed</result>\"\n" >wf/FIX.sh &&
	raymond wf --record rec.cassette --quiet >out &&
	eq result "$(cat out)" shipped &&
	grep "\"ev\":\"turn\"" rec.cassette | grep -q "\"purpose\":\"evaluate\"" &&
	replay rec.cassette &&
	eq status "$(cat status)" 0 &&
	eq "replayed result" "$(cat rout)" shipped &&
	eq compare "$(helper compare rec.cassette)" same
'

test_expect_success 'an edited prompt is reported as "prompt changed" with the first differing lines, and still replays' '
	use_fake && loop_workflow &&
	raymond run wf --input x --record rec.cassette --quiet >out &&
	sed -i "s/^Fix it\.$/Fix it properly./" wf/FIX.md &&
	replay rec.cassette &&
	eq status "$(cat status)" 0 &&
	eq "replayed result" "$(cat rout)" approved &&
	trace | grep "\"ev\":\"diverge\"" >div &&
	eq "diverge lines" "$(wc -l <div)" 1 &&
	has "\"what\":\"prompt changed\"" <div &&
	has "\"state\":\"FIX.md\"" <div &&
	has "\"recorded\":\"Fix it.\"" <div &&
	has "\"now\":\"Fix it properly.\"" <div &&
	has "\"line\":1" <div
'

test_expect_success 'a changed transition: the turn the recording lacks fails clearly, and compare names the first differing state' '
	use_fake && mkdir -p wf &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>CHECK</goto>
	EOS
	printf "echo \"<goto>COMMIT</goto>\"\n" >wf/CHECK.sh &&
	state COMMIT.md <<-\EOS &&
	MOCK: reply <result>committed</result>
	EOS
	state IMPLEMENT.md <<-\EOS &&
	MOCK: reply <result>again</result>
	EOS
	raymond run wf --record rec.cassette --quiet >out &&
	eq result "$(cat out)" committed &&
	printf "echo \"<goto>IMPLEMENT</goto>\"\n" >wf/CHECK.sh &&
	replay rec.cassette &&
	eq status "$(cat status)" 1 &&
	has "the recording has no turn for [main] IMPLEMENT.md (visit 1): the workflow now goes where the recording did not" <rerr &&
	lacks retrying <rerr &&
	trace | grep "\"ev\":\"diverge\"" | has "\"what\":\"no recorded turn\"" &&
	eq compare "$(helper compare rec.cassette)" "main: recorded CHECK.sh -> COMMIT.md, now CHECK.sh -> IMPLEMENT.md
result: recorded \"committed\", now nothing"
'

test_expect_success 'kill -9 while recording leaves a usable prefix; the resume appends, nothing recorded twice' '
	use_fake && mkdir -p wf &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>WAIT</goto>
	EOS
	cat >wf/WAIT.sh <<-\EOS &&
	touch "$MARK/waiting"
	i=0
	until [ -e "$MARK/go" ] || [ $i -ge 3000 ]; do sleep 0.02; i=$((i + 1)); done
	echo "<goto>END</goto>"
	EOS
	state END.md <<-\EOS &&
	MOCK: reply <result>finished</result>
	EOS
	export MARK=$PWD &&
	{ "$RAYMOND" run wf --record rec.cassette --quiet >out 2>err & } &&
	pid=$! &&
	wait_for_file waiting &&
	wait_for_line rec.cassette "\"ev\":\"step\"" &&
	kill -9 $pid &&
	wait_for_exit $pid &&
	eq "turns before the resume" "$(grep -c "\"ev\":\"turn\"" rec.cassette)" 1 &&
	printf "{\"ev\":\"turn\",\"agent\":\"ma" >>rec.cassette &&
	rm -rf S && mkdir -p S/.raymond &&
	helper case rec.cassette >herr &&
	touch go &&
	raymond resume "$(run_id)" --quiet >out2 &&
	eq result "$(cat out2)" finished &&
	eq "turns" "$(grep -c "\"ev\":\"turn\"" rec.cassette)" 2 &&
	eq "START turns" "$(grep "\"ev\":\"turn\"" rec.cassette | grep -c "\"state\":\"START.md\"")" 1 &&
	eq "headers" "$(grep -c "\"cassette\":1" rec.cassette)" 1 &&
	tail -1 rec.cassette | has "\"paths\":{\"main\":[\"START.md\",\"WAIT.sh\",\"END.md\"]}" &&
	replay rec.cassette &&
	eq status "$(cat status)" 0 &&
	eq "replayed result" "$(cat rout)" finished &&
	eq compare "$(helper compare rec.cassette)" same
'

test_expect_success 'an <ask> answered on resume is recorded, and the replay gives the same answer' '
	use_fake && mkdir -p wf &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: ask, next: DECIDE }
	---
	Ask whether to merge.
	MOCK: reply <ask next="DECIDE">Merge now?</ask>
	EOS
	state DECIDE.md <<-\EOS &&
	The person said: {{input}}
	MOCK: reply <result>decided</result>
	EOS
	expect_status 2 raymond run wf --on-ask pause --workflow-id m --record rec.cassette >json 2>/dev/null &&
	raymond resume m --input "yes, merge" --quiet >out &&
	eq result "$(cat out)" decided &&
	eq answers "$(grep -c "\"ev\":\"answer\"" rec.cassette)" 1 &&
	eq ends "$(grep -c "\"ev\":\"end\"" rec.cassette)" 2 &&
	replay rec.cassette &&
	eq status "$(cat status)" 0 &&
	eq "replayed result" "$(cat rout)" decided &&
	trace | lacks diverge &&
	eq compare "$(helper compare rec.cassette)" same
'

test_expect_success 'secrets in the environment are absent from the cassette' '
	use_fake && mkdir -p wf &&
	export DEPLOY_TOKEN=tok-0123456789abcdef MY_PASSWORD=hunter2-hunter2 ANTHROPIC_API_KEY=sk-ant-api-fake-123456 &&
	state START.md <<-\EOS &&
	Deploy with {{input}} and hunter2-hunter2.
	MOCK: bash echo "$DEPLOY_TOKEN $ANTHROPIC_API_KEY" => used tok-0123456789abcdef <result>done</result>
	EOS
	raymond run wf --input "tok-0123456789abcdef" --record rec.cassette --quiet >out &&
	eq result "$(cat out)" done &&
	grep -q "tok-0123456789abcdef" fake/log.jsonl &&
	lacks "tok-0123456789abcdef" <rec.cassette &&
	lacks "hunter2-hunter2" <rec.cassette &&
	lacks "sk-ant-api-fake-123456" <rec.cassette &&
	has "[redacted DEPLOY_TOKEN]" <rec.cassette &&
	has "[redacted MY_PASSWORD]" <rec.cassette &&
	has "[redacted ANTHROPIC_API_KEY]" <rec.cassette &&
	lacks "--session-id" <rec.cassette
'

test_expect_success 'bad cassettes: errors naming FILE:LINE, before anything runs' '
	use_fake && loop_workflow &&
	raymond run wf --input x --record rec.cassette --quiet >out &&
	echo "not json" >junk.cassette &&
	expect_status 1 helper case junk.cassette >msg &&
	eq msg "$(cat msg)" "junk.cassette:1: not a raymond cassette: the first line is not a cassette header" &&
	sed "1s/\"cassette\":1/\"cassette\":7/" rec.cassette >new.cassette &&
	expect_status 1 helper case new.cassette >msg &&
	has "new.cassette:1: cassette format 7 is newer than this raymond reads (1)" <msg &&
	mv wf/FIX.md wf/REPAIR.md &&
	expect_status 1 helper case rec.cassette >msg &&
	n=$(grep -n "\"state\":\"FIX.md\"" rec.cassette | grep "\"ev\":\"turn\"" | head -1 | cut -d: -f1) &&
	eq msg "$(cat msg)" "rec.cassette:$n: the recording has a turn of state FIX.md, which the workflow wf does not have" &&
	mv wf/REPAIR.md wf/FIX.md &&
	rm -rf S && mkdir -p S/.raymond && helper case rec.cassette >herr &&
	sed -i "3s/.*/{broken/" rec.cassette &&
	mapfile -t args <S/.raymond/test/argv &&
	(cd S && expect_status 1 env RAYMOND_TEST_CASE="$PWD/.raymond/test/case.json" "$RAYMOND" run "${args[@]}" >../rout 2>../rerr) &&
	has "rec.cassette:3: not a JSON object" <rerr &&
	test ! -e S/.raymond/state/test.json
'

test_done
