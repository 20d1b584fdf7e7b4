#!/bin/bash
# raymond prune: removes the runs matching every filter, with every file
# they left, never a running one, and says what it removed and freed.
. "$(dirname "$0")/lib.sh"

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

# finished ID...: a completed run of one script state for each ID.
finished() {
	[ -e done.sh ] || printf "echo \"<result>ok</result>\"\n" >done.sh
	for id in "$@"; do raymond done.sh --workflow-id "$id" --quiet >/dev/null || return 1; done
}

# age ID: make run ID's last change 2020-01-01.
age() {
	sed -i "s/\"updated_at\":\"[^\"]*\"/\"updated_at\":\"2020-01-01T00:00:00.000000Z\"/" ".raymond/state/$1.json"
}

# paths ID: every path run ID may leave (lua/raymond/workspace.lua, run_paths).
paths() {
	echo ".raymond/state/$1.json .raymond/state/$1.json.lock .raymond/state/$1.journal" \
		".raymond/state/$1.children .raymond/debug/$1.record .raymond/extract/$1 .raymond/tasks/$1" \
		".raymond/state/$1.lock"
}

# bytes PATH...: what the paths that exist take on disk, as prune counts it.
bytes() {
	local there=()
	for p in "$@"; do [ -e "$p" ] && there+=("$p"); done
	[ ${#there[@]} = 0 ] && { echo 0; return; }
	du -B1 -c "${there[@]}" | tail -n 1 | cut -f1
}

test_expect_success 'prune without a filter removes nothing and says which filter to give' '
	finished r1 &&
	expect_status 1 raymond prune 2>err &&
	grep -qx "raymond: error: raymond prune needs a filter: --older-than DURATION, --status S, or both" err &&
	grep -qx "hint: for example: raymond prune --older-than 7d --dry-run" err &&
	test -e .raymond/state/r1.json
'

test_expect_success 'prune --status removes the runs of that status and keeps the others' '
	finished ok1 ok2 &&
	printf "exit 2\n" >bad.sh &&
	expect_status 1 raymond bad.sh --workflow-id bad1 --quiet 2>/dev/null &&
	raymond prune --status failed >out &&
	cat out &&
	grep -Eqx "removed bad1 \(failed, last change [0-9]+s ago, [0-9.]+ (B|KiB)\)" out &&
	grep -Eqx "removed 1 run\(s\), freed [0-9]+ bytes \([0-9.]+ (B|KiB)\)" out &&
	test ! -e .raymond/state/bad1.json && test ! -e .raymond/debug/bad1.record &&
	test -e .raymond/state/ok1.json && test -e .raymond/state/ok2.json &&
	raymond prune --status stopped >out &&
	test "$(cat out)" = "No runs to remove." &&
	raymond prune --status failed --status completed >out &&
	test "$(grep -c "^removed ok" out)" = 2 &&
	test -z "$(ls -A .raymond/state)" && test -z "$(ls -A .raymond/debug)"
'

test_expect_success 'prune --older-than goes by the last change; with --status both must match' '
	finished old new &&
	age old &&
	raymond prune --older-than 7d --status failed >out &&
	test "$(cat out)" = "No runs to remove." &&
	raymond prune --older-than 7d >out &&
	cat out &&
	grep -Eq "^removed old \(completed, last change [0-9]+d[0-9]{2}h ago, " out &&
	! grep -q "new" out &&
	test ! -e .raymond/state/old.json && test -e .raymond/state/new.json &&
	raymond prune --older-than 12h >out && test "$(cat out)" = "No runs to remove." &&
	raymond prune --older-than 30m --status completed >out && test "$(cat out)" = "No runs to remove." &&
	test -e .raymond/state/new.json
'

test_expect_success 'a duration prune cannot read is an error naming it' '
	for bad in 7 7days d -1d 1.5h 7D; do
		expect_status 1 raymond prune --older-than "$bad" 2>err &&
		grep -qx "raymond: error: --older-than needs a duration such as 30m, 12h or 7d, got '\''$bad'\''" err &&
		grep -qx "hint: a whole number and a unit: s, m, h, d or w" err || return 1
	done &&
	expect_status 1 raymond prune --status finished 2>err &&
	grep -q "^raymond: error: --status must be running, completed, asking, stopped, interrupted, failed or unreadable, not '\''finished'\''" err
'

test_expect_success 'prune --status unreadable removes a broken run with all its files, under its lock, and nothing else' '
	finished keep &&
	for p in $(paths broken); do
		case $p in
		*.children|*/extract/*) mkdir -p $p && echo x >$p/f ;;
		*) echo "{ not json" >$p ;;
		esac || return 1
	done &&
	mkdir -p .raymond/extract/keep && echo x >.raymond/extract/keep/f &&
	echo "{ not json" >.raymond/state/held.json &&
	echo "{ not json" >.raymond/state/...json &&
	raymond list --status unreadable >list &&
	test "$(sed 1d list | cut -d" " -f1 | sort | tr "\n" " ")" = ".. broken held " || return 1
	printf "raymond lease\nhost elsewhere\npid 4242\nstart 0\nexpires %s\ngen 1\ntoken %s\n" \
		$(($(date +%s) + 600)) 0123456789abcdef0123456789abcdef >.raymond/state/held.lock &&
	raymond prune --status unreadable >out &&
	cat out &&
	grep -Eqx "removed broken \(unreadable, last change [0-9]+s ago, [0-9.]+ (B|KiB)\)" out &&
	grep -qx "kept held: it is running (a raymond holds its lock); stop it first" out &&
	grep -qx "kept ..: its name is not a run id raymond makes (1 to 128 letters, digits, '\''_'\'' or '\''-'\''), so prune leaves it alone; remove its files by hand" out &&
	grep -qx "removed 1 run(s), freed .*" out &&
	for p in $(paths broken); do
		test ! -e $p || { echo "prune left $p"; return 1; }
	done &&
	test -e .raymond/state/held.json && test -e .raymond/state/...json &&
	test -e .raymond/state/keep.json && test -e .raymond/debug/keep.record && test -e .raymond/extract/keep/f
'

test_expect_success 'prune leaves alone a state file whose name is not a run id: ...json would make extract/.. of .raymond' '
	finished keep &&
	mkdir -p .raymond/extract/keep && echo x >.raymond/extract/keep/f &&
	echo "{ not json" >.raymond/state/...json &&
	echo "{ not json" >.raymond/state/..json &&
	touch -d 2020-01-01 .raymond/state/...json .raymond/state/..json &&
	raymond prune --older-than 7d >out &&
	cat out &&
	grep -q "^kept ..: its name is not a run id raymond makes " out &&
	grep -q "^kept .: its name is not a run id raymond makes " out &&
	grep -qx "No runs to remove." out &&
	test -e .raymond/state/keep.json && test -e .raymond/state/...json && test -e .raymond/state/..json && test -e .raymond/extract/keep/f
'

test_expect_success 'prune --dry-run says what it would remove and what that frees, and removes nothing' '
	finished a b &&
	before=$(find .raymond | sort) &&
	want=$(bytes $(paths a) $(paths b)) &&
	raymond prune --status completed --dry-run >out &&
	cat out &&
	grep -Eqx "would remove a \(completed, last change [0-9]+s ago, [0-9.]+ (B|KiB)\)" out &&
	grep -Eqx "would remove b \(completed, last change [0-9]+s ago, [0-9.]+ (B|KiB)\)" out &&
	grep -qx "would remove 2 run(s), freeing $want bytes (.*)" out &&
	test "$(find .raymond | sort)" = "$before" &&
	raymond prune --status completed >out &&
	grep -qx "removed 2 run(s), freed $want bytes (.*)" out
'

test_expect_success 'prune removes every file a killed run left: state, journal, lock, children, debug record, extracted scripts, task folders' '
	finished keep &&
	mkdir -p flow &&
	printf "%s\n" "echo \"<goto>B</goto>\"" >flow/START.sh &&
	printf "%s\n" "touch started; for _ in \$(seq 1 1200); do [ -e go ] && break; sleep 0.05; done" \
		"echo \"<result>x</result>\"" >flow/B.sh &&
	"$MKZIP" flow.zip flow/ flow/START.sh=flow/START.sh flow/B.sh=flow/B.sh &&
	export RAYMOND_SNAPSHOT_INTERVAL=100
	"$RAYMOND" flow.zip --workflow-id lost --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file started &&
	kill -9 $pid && { wait $pid 2>/dev/null || :; } &&
	touch go &&
	for p in .raymond/state/lost.json .raymond/state/lost.journal .raymond/state/lost.lock \
	    .raymond/debug/lost.record .raymond/extract/lost .raymond/tasks/lost/main; do
		test -e $p || { echo "the killed run left no $p"; return 1; }
	done &&
	test -n "$(ls .raymond/state/lost.children)" &&
	want=$(bytes $(paths lost)) &&
	raymond prune --status interrupted >out &&
	cat out &&
	grep -Eqx "removed lost \(interrupted, last change [0-9]+s ago, [0-9.]+ (KiB|MiB)\)" out &&
	grep -qx "removed 1 run(s), freed $want bytes (.*)" out &&
	for p in $(paths lost); do
		test ! -e $p || { echo "prune left $p"; return 1; }
	done &&
	test -e .raymond/state/keep.json && test -e .raymond/debug/keep.record
'

test_expect_success 'prune never removes a running run, and says so; the run goes on' '
	finished old1 &&
	state START.sh <<-\EOS &&
	touch waiting
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>done</result>"
	EOS
	"$RAYMOND" wf --workflow-id live --quiet >run.out 2>run.err &
	pid=$!
	wait_for_file waiting && {
		raymond prune --status running >out1 &&
		raymond prune --older-than 0s >out2 &&
		raymond prune --older-than 0s --dry-run >out3
		seen=$?
		touch go
		wait $pid && test $seen = 0
	} &&
	cat out1 out2 out3 &&
	grep -qx "kept live: it is running (a raymond holds its lock); stop it first" out1 &&
	grep -qx "No runs to remove." out1 &&
	grep -qx "kept live: it is running (a raymond holds its lock); stop it first" out2 &&
	grep -q "^removed old1 " out2 &&
	grep -qx "kept live: it is running (a raymond holds its lock); stop it first" out3 &&
	test "$(cat run.out)" = done &&
	raymond status live | grep -qx "Status:    completed"
'

test_done
