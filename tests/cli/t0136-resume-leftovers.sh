#!/bin/bash
# After kill -9 of raymond, --resume first stops what the killed raymond's
# states left running (their process groups are recorded before they
# start), so no state runs twice at once; a recorded pid that now names an
# unrelated process is never touched.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

# leads_session PID: PID has made its own session (setsid has run).
leads_session() { [ "$(ps -o sid= -p "$1" | tr -d " ")" = "$1" ]; }

# The first attempt of START.sh starts a background child and waits; a
# later attempt notes any earlier attempt or child still alive, then ends.
slow_state() {
	state START.sh <<-\EOS
	echo "start $$" >>attempts
	for p in $(sed -n "s/^start //p" attempts) $(cat bg.pid 2>/dev/null); do
		[ "$p" = $$ ] && continue
		if [ -e /proc/$p/stat ] && ! grep -q "^[0-9]* (.*) Z " /proc/$p/stat; then
			echo "overlap $p" >>attempts
		fi
	done
	if ! [ -e once ]; then
		touch once
		sleep 1000 &
		echo $! >bg.pid
		touch waiting
		wait
	fi
	echo "end $$" >>attempts
	echo "<result>done</result>"
	EOS
}

# Start raymond on wf, wait (up to 60 s) for the state to be waiting, and
# kill -9 raymond.
kill_while_waiting() {
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file waiting || { echo "the state never started"; cat err; kill -9 $pid; return 1; }
	kill -9 $pid
	wait $pid || :
}

# Kill what this test started (each attempt leads its process group),
# and the unrelated process ($other).
cleanup() {
	for p in $(sed -n "s/^start //p" attempts) $(cat bg.pid 2>/dev/null) ${other:-}; do
		is_running "$p" && { kill -9 -- -"$p" 2>/dev/null || kill -9 "$p"; }
	done
	:
}

# checked CMD...: run CMD (an && list in a function), then clean up
# whether it passed or not.
checked() {
	if "$@"; then cleanup; else cat err attempts; cleanup; return 1; fi
}

resumed_once() {
	test "$(cat out)" = done &&
	! grep -q overlap attempts &&
	test "$(grep -c "^end" attempts)" = 1
}

first() {
	old=$(sed -n "s/^start //p" attempts) &&
	is_running "$old" &&
	raymond --resume "$(run_id)" >out 2>err &&
	grep -q "stopping 2 process(es) the previous raymond of run $(run_id) left running" err &&
	new=$(sed -n "s/^start //p" attempts | tail -1) &&
	printf "start %s\nstart %s\nend %s\n" "$old" "$new" "$new" >want &&
	diff -u want attempts &&
	! is_running "$old" && ! is_running "$(cat bg.pid)" &&
	! ls .raymond/state | grep -q children
}

test_expect_success 'resume stops the killed run'"'"'s state and its child before running it again' '
	slow_state &&
	kill_while_waiting &&
	checked first
'

unrelated() {
	wait_until 60 leads_session "$other" &&
	start=$(sed "s/^.*) //" /proc/$other/stat | cut -d" " -f20) &&
	f=$(ls -d .raymond/state/*.children/*) &&
	echo "$other $((start + 1))" >"$f" &&
	raymond --resume "$(run_id)" --quiet >out 2>err &&
	is_running "$other" &&
	resumed_once
}

test_expect_success 'a recorded pid now held by an unrelated process is left alone; the child is found all the same' '
	slow_state &&
	kill_while_waiting
	setsid sleep 1000 </dev/null >/dev/null 2>&1 &
	other=$!
	checked unrelated
'

unwritten() {
	f=$(ls -d .raymond/state/*.children/*) &&
	: >"$f" &&
	raymond --resume "$(run_id)" --quiet >out 2>err &&
	resumed_once
}

test_expect_success 'a child whose pid was never written is found through its environment' '
	slow_state &&
	kill_while_waiting &&
	checked unwritten
'

# A Claude turn is recorded like a script: its CLI (the fake, behind a
# wrapper that waits on its first call) is stopped before the turn runs
# again.
turn() {
	old=$(sed -n "s/^start //p" attempts) &&
	is_running "$old" &&
	raymond --resume "$(run_id)" --quiet >out 2>err &&
	test "$(cat out)" = done &&
	! is_running "$old" &&
	test "$(grep -c "^start" attempts)" = 2 &&
	! grep -q overlap attempts
}

test_expect_success 'a Claude turn the killed raymond left running is stopped before the turn runs again' '
	mkdir -p fake wf &&
	cat >claude <<-EOF &&
	#!/bin/bash
	echo "start \$\$" >>attempts
	for p in \$(sed -n "s/^start //p" attempts); do
		[ "\$p" = \$\$ ] && continue
		[ -e /proc/\$p/stat ] && ! grep -q "^[0-9]* (.*) Z " /proc/\$p/stat && echo "overlap \$p" >>attempts
	done
	if ! [ -e once ]; then touch once waiting; sleep 1000; fi
	exec "$(dirname "$RAYMOND")/tests/fake-claude" "\$@"
	EOF
	chmod +x claude &&
	export RAYMOND_CLAUDE=$PWD/claude FAKE_CLAUDE_DIR=$PWD/fake &&
	printf "go\nMOCK: reply <result>done</result>\n" >wf/START.md &&
	kill_while_waiting &&
	checked turn
'

# A run stopped by a failing state, ready for --resume (which succeeds),
# and a process of the test's own ($other: a sleep leading a session and
# group of its own, so that killing its group kills nothing else) whose
# death would show that raymond signalled what a forged record named.
forged_setup() {
	state START.sh <<-\EOS &&
	if [ -e fixed ]; then echo "<result>done</result>"; else exit 3; fi
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	touch fixed &&
	mkdir -p ".raymond/state/$(run_id).children" &&
	wait_until 60 leads_session "$other" &&
	start=$(sed "s/^.*) //" /proc/$other/stat | cut -d" " -f20)
}

# forged NAME TEXT: a record NAME holding TEXT (expanded once $start is
# known) is planted; --resume runs the run to its end and leaves $other
# alone.
forged() {
	forged_setup &&
	eval "text=\"$2\"" &&
	echo "$text" >".raymond/state/$(run_id).children/$1" &&
	raymond --resume "$(run_id)" --quiet >out 2>err &&
	test "$(cat out)" = done &&
	is_running "$other"
}

UUID=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9

test_expect_success 'a forged record naming a live process of the user with its true start time does not get it signalled' '
	setsid sleep 1000 </dev/null >/dev/null 2>&1 &
	other=$!
	checked forged $UUID "$other \$start"
'

test_expect_success 'a forged record whose pid wraps past 2^32 onto a live process does not get it signalled' '
	setsid sleep 1000 </dev/null >/dev/null 2>&1 &
	other=$!
	checked forged $UUID "\$((other + 4294967296)) \$start"
'

test_expect_success 'a record named by a prefix of another process'"'"'s RAYMOND_PROCESS_GROUP does not match it' '
	setsid env RAYMOND_PROCESS_GROUP=$UUID sleep 1000 </dev/null >/dev/null 2>&1 &
	other=$!
	checked forged 0f1e2d3c ""
'

test_done
