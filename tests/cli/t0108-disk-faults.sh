#!/bin/bash
# A full disk or a failing rename while the state is written: the previous
# state stays intact, the run stops with a clear error, and once the disk
# is fine again --resume carries on.  tests/fault/faultfs.c (LD_PRELOAD)
# makes the calls fail.
. "$(dirname "$0")/lib.sh"

SHIM="$(dirname "$RAYMOND")/tests/faultfs.so"
# A sanitizer build must accept a library loaded before its runtime.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

chain() {
	state STEP.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "step $n" >>"$CHAIN_LOG"
	if [ "$n" -ge 10 ]; then echo "<result>done $n</result>"; else echo "<goto input=\"$((n + 1))\">STEP</goto>"; fi
	EOS
	export CHAIN_LOG=$PWD/chain.log
}

# faulty CALL ERRNO: run the chain with the N-th state write's CALL failing.
faulty() {
	env LD_PRELOAD="$SHIM" RAYMOND_FAULT="$1:.raymond/state/:4:$2" \
		"$RAYMOND" wf/STEP.sh --input 1 --quiet --no-debug
}

at_step() { grep -o '"input":"[0-9]*"' "$(state_file)" | grep -o '[0-9]*'; }

check_stopped_intact() {
	expect_status 1 faulty "$1" "$2" 2>err &&
	grep -q "cannot save the run state" err &&
	grep -q "$3" err &&
	grep -q "state file still holds the last completed transition" err &&
	raymond --status "$(run_id)" >/dev/null &&
	k=$(at_step) &&
	test "$(tail -1 chain.log)" = "step $k" &&
	test ! -e "$(state_file).lock" &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "done 10" &&
	for i in $(seq 1 10); do grep -qx "step $i" chain.log || { echo "step $i never ran"; exit 1; }; done &&
	test "$(sort chain.log | uniq -d)" = "step $k"
}

test_expect_success 'a full disk (write fails with ENOSPC) stops the run and keeps the previous state' '
	chain &&
	check_stopped_intact write 28 "No space left on device"
'

test_expect_success 'a failing rename stops the run and keeps the previous state' '
	chain &&
	check_stopped_intact rename 5 "Input/output error"
'

test_expect_success 'a failing fsync stops the run and keeps the previous state' '
	chain &&
	check_stopped_intact fsync 5 "Input/output error"
'
test_done
