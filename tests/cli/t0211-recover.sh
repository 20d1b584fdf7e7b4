#!/bin/bash
# raymond --recover (and raymond list --recover), as the original raymond
# has it: the ids of the runs raymond resume would continue (failed,
# stopped, interrupted), one a line, or "No recoverable workflows found.".
. "$(dirname "$0")/lib.sh"

# What a state that waits for the file release (up to 60 s) runs.
HOLD='for _ in $(seq 1 1200); do [ -e release ] && break; sleep 0.05; done'

# runs: a completed run "done", a failed one "bad", a stopped one "held"
# (a hook stopped it at its start), an interrupted one "lost" (raymond
# killed with -9 while it waits), a running one "live" (waiting for
# ./release, its raymond's pid in $live) and an unreadable one "junk".
runs() {
	mkdir -p done bad wait &&
	printf "echo \"<result>x</result>\"\n" >done/START.sh &&
	raymond done --workflow-id done --quiet >/dev/null &&
	printf "exit 2\n" >bad/START.sh &&
	expect_status 1 raymond bad --workflow-id bad --quiet 2>/dev/null &&
	stopped_run held &&
	printf "touch at-\$RAYMOND_WORKFLOW_ID\n%s\necho \"<result>x</result>\"\n" "$HOLD" >wait/START.sh &&
	{ "$RAYMOND" wait --workflow-id lost --quiet >/dev/null 2>&1 & } &&
	lost=$! &&
	wait_for_file at-lost &&
	kill -9 $lost && { wait $lost 2>/dev/null || :; } &&
	{ "$RAYMOND" wait --workflow-id live --quiet >/dev/null 2>&1 & } &&
	live=$! &&
	wait_for_file at-live &&
	echo "{" >.raymond/state/junk.json
}

test_expect_success 'with no runs: No recoverable workflows found.' '
	raymond --recover >out &&
	test "$(cat out)" = "No recoverable workflows found." &&
	raymond list --recover >out2 &&
	cmp out out2
'

test_expect_success 'the failed, stopped and interrupted runs, one id a line; not the completed, running or unreadable' '
	runs &&
	raymond --recover >out &&
	raymond list >list &&
	touch release && wait $live &&
	sort out >got &&
	printf "bad\nheld\nlost\n" >want &&
	cmp want got &&
	grep -Eq "^live +running" list &&
	grep -Eq "^lost +interrupted" list &&
	grep -Eq "^junk +unreadable" list
'

test_expect_success 'each id it prints is one raymond resume continues; the others resume refuses' '
	runs &&
	touch release && wait $live &&
	raymond --recover >ids &&
	printf "echo \"<result>x</result>\"\n" >bad/START.sh &&
	rm held/hooks.lua &&
	while read -r id; do
		raymond resume "$id" --quiet >out || return 1
		test "$(cat out)" = x || return 1
	done <ids &&
	raymond --recover >after &&
	test "$(cat after)" = "No recoverable workflows found." &&
	expect_status 1 raymond resume done 2>err &&
	grep -q "run done already completed" err
'

test_expect_success '--recover goes with neither --json nor --status, nor a WORKFLOW' '
	expect_status 1 raymond list --recover --json 2>err &&
	grep -qx "raymond: error: --recover prints run ids only; it does not go with --json or --status" err &&
	expect_status 1 raymond list --recover --status failed 2>err &&
	grep -q "does not go with --json or --status" err &&
	expect_status 1 raymond --recover --json 2>err &&
	grep -qx "raymond: error: --json goes with --status" err &&
	expect_status 1 raymond --recover wf 2>err &&
	grep -q "cannot go with" err
'

test_expect_success 'help names it' '
	raymond help >help &&
	tr "\n" " " <help | grep -q -- "--recover is raymond list --recover" &&
	raymond help list | grep -q -- "--recover"
'

test_done
