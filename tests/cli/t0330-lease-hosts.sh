#!/bin/bash
# Two hosts on one .raymond (shared storage): the run is owned through a
# lease (src/lease.h), not a kernel lock.  RAYMOND_HOST lets this machine
# play two hosts, alpha and beta, and RAYMOND_LEASE_SECONDS shortens the
# lease.  Another host is refused while the lease is live, even after its
# first expiry (it is renewed), takes the run over only once it expired,
# and an owner that finds its lease taken stops and saves nothing more.
. "$(dirname "$0")/lib.sh"

# SLOW.sh notes each run of it in $RUNS, then waits until go exists.
slow_workflow() {
	state START.sh <<-\EOS
	echo "<goto>SLOW</goto>"
	EOS
	state SLOW.sh <<-\EOS
	echo "ran on $RAYMOND_HOST" >>"$RUNS"
	touch started
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>slow done</result>"
	EOS
}

# lease_field ID FIELD: a field of run ID's lease file.
lease_field() { sed -n "s/^$2 //p" ".raymond/state/$1.lock"; }

# after EPOCH: the wall clock is past EPOCH (seconds, with a fraction).
after() { awk -v t="$1" -v n="$(date +%s.%N)" 'BEGIN { exit !(n > t) }'; }

test_expect_success 'another host is refused while the lease lives, past its first expiry, and is told who holds it' '
	slow_workflow &&
	export RUNS=$PWD/runs RAYMOND_LEASE_SECONDS=2
	RAYMOND_HOST=alpha "$RAYMOND" wf --workflow-id r1 --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	test "$(lease_field r1 host)" = alpha &&
	test "$(lease_field r1 pid)" = $pid &&
	first=$(lease_field r1 expires) &&
	wait_until 60 after "$first" &&
	expect_status 1 env RAYMOND_HOST=beta "$RAYMOND" --resume r1 2>err2 &&
	cat err2 &&
	grep -Eq "run r1 is being driven by another raymond process \(pid $pid on host alpha, its lease on .*/r1\.lock runs until 2[0-9]{3}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z unless renewed\)" err2 &&
	grep -q "^hint: a run is taken over only once its lease has expired" err2 &&
	RAYMOND_HOST=beta "$RAYMOND" status r1 >st &&
	grep -qx "Status:    running" st &&
	test "$(cat runs)" = "ran on alpha" &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = "slow done" &&
	test ! -e .raymond/state/r1.lock
'

test_expect_success 'kill -9 of the owner: its host sees the run interrupted at once, another host only once the lease expired, then takes it over' '
	slow_workflow &&
	export RUNS=$PWD/runs RAYMOND_LEASE_SECONDS=10
	RAYMOND_HOST=alpha "$RAYMOND" wf --workflow-id r2 --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	kill -9 $pid && { wait $pid 2>/dev/null || :; } &&
	expires=$(lease_field r2 expires) &&
	RAYMOND_HOST=alpha "$RAYMOND" status r2 >st1 &&
	grep -qx "Status:    interrupted" st1 &&
	RAYMOND_HOST=beta "$RAYMOND" status r2 >st2 &&
	grep -qx "Status:    running" st2 &&
	expect_status 1 env RAYMOND_HOST=beta "$RAYMOND" --resume r2 2>err2 &&
	grep -q "pid $pid on host alpha" err2 &&
	test "$(cat runs)" = "ran on alpha" &&
	wait_until 60 after "$expires" &&
	RAYMOND_HOST=beta "$RAYMOND" status r2 >st3 &&
	grep -qx "Status:    interrupted" st3 &&
	rm -f started && touch go &&
	RAYMOND_HOST=beta "$RAYMOND" --resume r2 --quiet >out3 &&
	test "$(cat out3)" = "slow done" &&
	test "$(cat runs)" = "$(printf "ran on alpha\nran on beta")" &&
	RAYMOND_HOST=alpha "$RAYMOND" status r2 | grep -qx "Status:    completed"
'

test_expect_success 'an owner that finds its lease taken over stops at once and saves nothing more' '
	slow_workflow &&
	export RUNS=$PWD/runs RAYMOND_LEASE_SECONDS=2
	RAYMOND_HOST=alpha "$RAYMOND" wf --workflow-id r3 --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	kill -STOP $pid &&
	expires=$(lease_field r3 expires) &&
	wait_until 60 after "$expires" &&
	rm -f started || return 1
	RAYMOND_HOST=beta "$RAYMOND" --resume r3 --quiet >out3 2>err3 &
	bpid=$!
	wait_for_file started &&
	test "$(lease_field r3 host)" = beta &&
	kill -CONT $pid || { kill -9 $pid $bpid; return 1; }
	alpha=0
	wait $pid || alpha=$?
	cat err &&
	test "$alpha" != 0 &&
	grep -q "the lease .*/r3\.lock. of this run was taken by raymond pid $bpid on host beta" err &&
	test "$(lease_field r3 host)" = beta &&
	RAYMOND_HOST=beta "$RAYMOND" status r3 | grep -qx "Status:    running" &&
	touch go &&
	wait $bpid &&
	test "$(cat out3)" = "slow done" &&
	RAYMOND_HOST=beta "$RAYMOND" status r3 | grep -qx "Status:    completed" &&
	test "$(cat runs)" = "$(printf "ran on alpha\nran on beta")"
'

test_expect_success 'six hosts resume one run at the same moment: exactly one drives it, the others are refused, naming it' '
	slow_workflow &&
	export RUNS=$PWD/runs
	"$RAYMOND" wf --workflow-id r5 --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	kill -TERM $pid &&
	expect_status 130 wait $pid &&
	test ! -e .raymond/state/r5.lock &&
	rm -f started || return 1
	pids=""
	for i in 1 2 3 4 5 6; do
		RAYMOND_HOST=h$i "$RAYMOND" --resume r5 --quiet >out.$i 2>err.$i &
		pids="$pids $!"
	done
	refused() { test "$(grep -l "being driven by another raymond process" err.* | wc -l)" = 5; }
	wait_until 60 refused &&
	wait_for_file started &&
	touch go &&
	won=0 &&
	for p in $pids; do
		if wait $p; then won=$((won + 1)); fi
	done &&
	test $won = 1 &&
	test "$(cat out.*)" = "slow done" &&
	winner=$(grep -l "slow done" out.* | sed "s/^out\.//") &&
	test "$(grep -l "on host h$winner, its lease" err.* | wc -l)" = 5 &&
	test "$(wc -l <runs)" = 2 &&
	"$RAYMOND" status r5 | grep -qx "Status:    completed"
'

test_expect_success 'the lease is renewed while a hook keeps Lua busy for longer than the lease' '
	state START.sh <<-\EOS &&
	touch started
	echo "<goto>END</goto>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	printf "return {\n  PreTransition = function(ev)\n    local t = os.time() + 8\n    while os.time() < t do end\n  end,\n}\n" >wf/hooks.lua &&
	export RAYMOND_LEASE_SECONDS=2 RAYMOND_HOOK_INSTRUCTIONS=1000000000000
	RAYMOND_HOST=alpha "$RAYMOND" wf --workflow-id r6 --quiet >out 2>err &
	pid=$!
	wait_for_file started &&
	first=$(lease_field r6 expires) &&
	wait_until 60 after "$first" &&
	expect_status 1 env RAYMOND_HOST=beta "$RAYMOND" --resume r6 2>err2 &&
	cat err2 &&
	grep -q "being driven by another raymond process (pid $pid on host alpha" err2 &&
	wait $pid &&
	test "$(cat out)" = end
'

test_expect_success 'a RAYMOND_HOST that is no host name is refused, naming it' '
	slow_workflow &&
	expect_status 1 env RAYMOND_HOST="two words" "$RAYMOND" wf --workflow-id r4 --quiet 2>err &&
	grep -q "RAYMOND_HOST .two words. is not a host name" err
'

test_done
