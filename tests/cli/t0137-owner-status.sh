#!/bin/bash
# list and status tell a run whose raymond died (kill -9) from one that
# runs: the run's lock (an flock held by the driving process) says whether
# an owner is alive.  Both command forms and --json agree.
. "$(dirname "$0")/lib.sh"

# A state that waits (up to 60 s) for the file go, after leaving waiting.
waiting_state() {
	state START.sh <<-\EOS
	touch waiting
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>done</result>"
	EOS
}

start_and_wait() {
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file waiting || { echo "the state never started"; cat err; kill -9 $pid; return 1; }
}

# shows STATUS: every form of list and status shows the run as STATUS.
shows() {
	id=$(run_id)
	for list in "--list" "list"; do
		raymond $list >l &&
		grep -q "^$id  *$1 " l || { echo "raymond $list:"; cat l; return 1; }
	done
	for status in "--status" "status"; do
		raymond $status "$id" >s &&
		grep -qx "Status:    $1" s || { echo "raymond $status $id:"; cat s; return 1; }
		raymond $status "$id" --json >j &&
		grep -q "\"status\":\"$1\"" j || { echo "raymond $status $id --json:"; cat j; return 1; }
	done
}

test_expect_success 'a run whose raymond is alive shows as running, and the look does not disturb it' '
	waiting_state &&
	start_and_wait && {
		shows running; seen=$?
		touch go
		wait $pid && test "$(cat out)" = done && test $seen = 0
	}
'

test_expect_success 'a run whose raymond was killed with SIGKILL shows as interrupted' '
	waiting_state &&
	start_and_wait &&
	kill -9 $pid &&
	{ wait $pid || :; } && {
		shows interrupted; seen=$?
		touch go
		test $seen = 0 &&
		raymond --resume "$(run_id)" --quiet >out &&
		test "$(cat out)" = done
	}
'

test_done
