#!/bin/bash
# What a script leaves running in its process group is stopped when the
# script's main process exits: it neither keeps raymond waiting nor
# outlives its state.  A process the script detached on purpose (setsid)
# is left alone.
. "$(dirname "$0")/lib.sh"

# gone PID: wait up to 60 s for PID to end; kill it if it does not.
gone() { wait_for_exit "$1" || { kill -9 "$1"; return 1; }; }

test_expect_success 'a background child holding stdout is stopped when the script exits' '
	state START.sh <<-\EOS &&
	sleep 1000 &
	echo $! >bg.pid
	echo "<result>ok</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = ok &&
	gone "$(cat bg.pid)"
'

test_expect_success 'a background child with its output elsewhere is stopped too, and the next state runs' '
	state START.sh <<-\EOS &&
	sleep 1000 >/dev/null 2>&1 &
	echo $! >bg.pid
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	pid=$(cat bg.pid)
	if grep -q "^[0-9]* (.*) Z " /proc/$pid/stat 2>/dev/null || ! [ -e /proc/$pid ]; then
		echo "<result>stopped</result>"
	else
		echo "<result>still running</result>"
	fi
	EOS
	raymond wf --quiet >out &&
	{ test "$(cat out)" = stopped || { kill -9 "$(cat bg.pid)"; false; }; }
'

# detached REDIRECT: START.sh starts a daemon out of its process group,
# with REDIRECT applied to its output, and ends; raymond must end too,
# leaving the daemon running.
detached() {
	printf '%s\n' "setsid -w sh -c 'sleep 1000 $1 </dev/null & echo \$! >bg.pid'" \
		'echo "<result>ok</result>"' >wf/START.sh &&
	raymond wf --quiet >out &&
	test "$(cat out)" = ok &&
	pid=$(cat bg.pid) &&
	is_running "$pid" &&
	kill "$pid"
}

test_expect_success 'a child detached with setsid keeps running, and raymond does not wait for it' '
	mkdir wf &&
	detached ">/dev/null 2>&1"
'

test_expect_success 'a detached process still holding stdout does not keep raymond waiting' '
	mkdir wf &&
	detached ""
'

test_done
