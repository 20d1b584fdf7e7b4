#!/bin/bash
# raymond list and raymond status: each run's status, cost, elapsed time
# and the states of its live agents, as a table and as JSON, newest first.
. "$(dirname "$0")/lib.sh"

# four_runs: in this order, a completed run "done" (one Claude turn,
# $0.0075, lasting over a second), a failed one "bad" (at SUB.sh under a
# <call>), a stopped one "held" (a hook stopped it at its start), and an
# interrupted one "lost" (raymond killed with -9 while its two agents wait
# at B.sh and W.sh).
four_runs() {
	use_fake &&
	mkdir -p done bad held lost &&
	cat >done/START.md <<-\EOS &&
	MOCK: reply <goto>SLOW</goto>
	EOS
	cat >done/SLOW.sh <<-\EOS &&
	sleep 1.2
	echo "<result>fine</result>"
	EOS
	raymond done --workflow-id done --quiet >out &&
	test "$(cat out)" = fine &&
	cat >bad/START.sh <<-\EOS &&
	echo "<call return=\"AFTER\">SUB</call>"
	EOS
	printf "exit 2\n" >bad/SUB.sh &&
	printf "echo \"<result>x</result>\"\n" >bad/AFTER.sh &&
	expect_status 1 raymond bad --workflow-id bad --quiet 2>/dev/null &&
	stopped_run held &&
	cat >lost/START.sh <<-\EOS &&
	echo "<fork next=\"B\">W</fork>"
	EOS
	for s in B W; do
		printf "touch at-%s\n%s\n" $s "$HOLD" >lost/$s.sh || return 1
	done
	"$RAYMOND" lost --workflow-id lost --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file at-B && wait_for_file at-W &&
	kill -9 $pid && { wait $pid 2>/dev/null || :; } &&
	touch release
}

# What a state that waits for the file release (up to 60 s) runs.
HOLD='for _ in $(seq 1 1200); do [ -e release ] && break; sleep 0.05; done'

# row ID: the line of run ID in list's table, its columns split by blanks.
row() { grep "^$1 " list; }

test_expect_success 'list: a header, then the runs newest first with status, cost, elapsed, states and workflow' '
	four_runs &&
	raymond list >list &&
	cat list &&
	head -n 1 list | grep -Eq "^ID +STATUS +COST +ELAPSED +STATES +WORKFLOW$" &&
	test "$(sed 1d list | cut -d" " -f1 | tr "\n" " ")" = "lost held bad done " &&
	row done | grep -Eq "^done +completed +\\\$0\.0075 +[1-9][0-9]*s +- +done$" &&
	row bad | grep -Eq "^bad +failed +\\\$0\.0000 +[0-9]+s +SUB\.sh +bad$" &&
	row held | grep -Eq "^held +stopped +\\\$0\.0000 +[0-9]+s +START\.sh +held$" &&
	row lost | grep -Eq "^lost +interrupted +\\\$0\.0000 +[0-9]+s +B\.sh, \+1 more +lost$"
'

test_expect_success 'list --status keeps the runs of the statuses given; a status raymond does not know is an error' '
	four_runs &&
	raymond list --status failed >out &&
	test "$(sed 1d out | cut -d" " -f1)" = bad &&
	raymond list --status completed --status interrupted >out &&
	test "$(sed 1d out | cut -d" " -f1 | tr "\n" " ")" = "lost done " &&
	raymond list --status running >out &&
	test "$(cat out)" = "No runs with that status." &&
	expect_status 1 raymond list --status done 2>err &&
	grep -qx "raymond: error: --status must be running, completed, asking, stopped, interrupted, failed or unreadable, not '\''done'\''" err
'

test_expect_success 'list --json: an array of objects with the same fields, numbers as numbers, newest first' '
	four_runs &&
	raymond list --json >json &&
	cat json &&
	test "$(head -c 1 json)" = "[" && test "$(tail -c 2 json)" = "$(printf "]\n")" &&
	test "$(grep -o "\"id\":\"[a-z]*\"" json | tr "\n" " ")" = "\"id\":\"lost\" \"id\":\"held\" \"id\":\"bad\" \"id\":\"done\" " &&
	grep "\"id\":\"done\"" json | grep "\"cost_usd\":0.0075," | grep "\"budget_usd\":10," |
	    grep "\"status\":\"completed\"" | grep -q "\"states\":\[\]" &&
	grep "\"id\":\"done\"" json | grep -Eq "\"elapsed_seconds\":[1-9][0-9]*(\.[0-9]+)?," &&
	grep "\"id\":\"lost\"" json | grep "\"status\":\"interrupted\"" | grep -q "\"states\":\[\"B.sh\",\"W.sh\"\]" &&
	grep "\"id\":\"bad\"" json | grep "\"status\":\"failed\"" | grep -q "\"error\":\"" &&
	grep "\"id\":\"held\"" json | grep -q "\"status\":\"stopped\"" &&
	mkdir -p empty/.git && cd empty && raymond list --json >json && test "$(cat json)" = "[]"
'

test_expect_success 'list shows an unreadable state file as unreadable, with the reason, among the others' '
	printf "echo \"<result>x</result>\"\n" >START.sh &&
	raymond START.sh --workflow-id good --quiet >/dev/null &&
	echo "{ not json" >.raymond/state/broken.json &&
	raymond list >list &&
	row good | grep -q " completed " &&
	row broken | grep -q "^broken  *unreadable  *state file .*broken.json is corrupt or truncated" &&
	raymond list --json | grep -q "\"id\":\"broken\",\"status\":\"unreadable\"" || { cat list; false; }
'

# spoil ID FIELD VALUE: set FIELD of run ID's state file to the JSON
# VALUE: a launch option it holds, or else a field of the record.
spoil() {
	if grep -q "\"$2\":" ".raymond/state/$1.json"; then
		sed -i "s/\"$2\":[^,}]*/\"$2\":$3/" ".raymond/state/$1.json"
	else
		sed -i "s/^{/{\"$2\":$3,/" ".raymond/state/$1.json"
	fi &&
	grep -qF "\"$2\":$3" ".raymond/state/$1.json"
}

test_expect_success 'a cost or a launch number of the wrong type makes a run unreadable; list, status and resume say which' '
	printf "echo \"<result>x</result>\"\n" >START.sh &&
	for id in good cost budget timeout; do
		raymond START.sh --workflow-id $id --quiet >/dev/null || return 1
	done &&
	spoil cost cost "\"abc\"" &&
	spoil budget budget "\"x\"" &&
	spoil timeout timeout "[1]" &&
	raymond list >list &&
	row good | grep -q " completed " &&
	row cost | grep -q "^cost  *unreadable  *state file .*cost.json is not a valid raymond state: cost should be a number, found string$" &&
	row budget | grep -q "launch.budget should be a number, found string$" &&
	row timeout | grep -q "launch.timeout should be a number, found table$" &&
	raymond list --json >json &&
	! grep -q "\"cost_usd\":\"" json &&
	grep -q "\"id\":\"cost\",\"status\":\"unreadable\"" json &&
	expect_status 1 raymond status budget 2>err &&
	grep -q "^raymond: error: state file .*budget.json is not a valid raymond state: launch.budget should be a number, found string$" err &&
	sed -i "s/\"status\":\"completed\"/\"status\":\"failed\"/" .raymond/state/budget.json &&
	expect_status 1 raymond resume budget 2>err &&
	grep -q "launch.budget should be a number, found string$" err &&
	grep -qx "hint: the file was left as it is; restore it from a backup or start a new run" err || { cat list err; false; }
'

test_expect_success 'status: cost against the budget, elapsed time, and each agent with its state and cost' '
	four_runs &&
	raymond status done >s &&
	grep -qx "Cost:      \\\$0.0075 of a \\\$10.00 budget" s &&
	grep -Eqx "Elapsed:   [1-9][0-9]*s" s &&
	raymond status lost >s &&
	grep -qx "Status:    interrupted" s &&
	grep -qx "  main at B.sh, \\\$0.0000 spent" s &&
	grep -qx "  main_w1 at W.sh, \\\$0.0000 spent" s &&
	raymond status bad >s &&
	grep -qx "  main at SUB.sh (returns to AFTER.sh), \\\$0.0000 spent" s &&
	printf "echo \"<result>x</result>\"\n" >START.sh &&
	raymond START.sh --workflow-id free --budget 0 --quiet >/dev/null &&
	raymond status free | grep -qx "Cost:      \\\$0.0000 (no budget)"
'

test_expect_success 'status --json stays the record a resume reads: the state file, field for field' '
	four_runs &&
	raymond status done --json >j &&
	test "$(cat j)" = "$(cat .raymond/state/done.json)" &&
	raymond status held --json >j &&
	test "$(cat j)" = "$(cat .raymond/state/held.json)"
'

# The elapsed_seconds of the only run, and whether it moved on from $1.
elapsed_now() { raymond list --json | grep -o "\"elapsed_seconds\":[0-9.]*"; }
grown_from() { test "$(elapsed_now)" != "$1"; }

test_expect_success 'a running run shows as running, with its time so far growing' '
	state START.sh <<-\EOS &&
	touch waiting
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>done</result>"
	EOS
	"$RAYMOND" wf --workflow-id live --quiet >out 2>err &
	pid=$!
	wait_for_file waiting && {
		raymond list >list && row live | grep -Eq "^live +running +\\\$0\.0000 +[0-9]+s +START\.sh +wf$" &&
		raymond status live | grep -Eqx "Elapsed:   [0-9]+s so far" &&
		first=$(elapsed_now) &&
		wait_until 60 grown_from "$first"
		seen=$?
		touch go
		wait $pid && test $seen = 0
	}
'

test_expect_success 'status of a run that does not exist, and of an invalid id' '
	expect_status 1 raymond status nosuch 2>err &&
	grep -q "^raymond: error: no run nosuch in .*/.raymond/state$" err &&
	grep -qx "hint: list runs with: raymond list" err &&
	expect_status 1 raymond status "a.b" 2>err &&
	grep -q "invalid run id" err
'

test_done
