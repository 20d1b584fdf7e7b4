#!/bin/bash
# A full disk or a failing write, rename or sync while the state is saved:
# the saved state stays intact, the run stops with a clear error, and once
# the disk is fine again --resume carries on without losing or repeating a
# step.  tests/fault/faultfs.c (LD_PRELOAD) makes the calls fail.
#
# A save goes to the journal (pwrite, fdatasync) and, at the start, every
# second and at the end, to the state file (write, fsync, rename);
# RAYMOND_SNAPSHOT_INTERVAL=0 makes every save replace the state file.
. "$(dirname "$0")/lib.sh"

# faulty CALL MATCH N ERRNO: run the chain with the N-th and later CALLs on
# files whose path holds MATCH failing.
faulty() {
	env LD_PRELOAD="$SHIM" RAYMOND_FAULT="$1:$2:$3:$4" \
		"$RAYMOND" wf/STEP.sh --input 1 --quiet --no-debug
}

at_step() { state_json | grep -o '"input":"[0-9]*"' | grep -o '[0-9]*'; }

# check_stopped_intact CALL MATCH N ERRNO MESSAGE
check_stopped_intact() {
	chain &&
	expect_status 1 faulty "$1" "$2" "$3" "$4" 2>err &&
	grep -q "cannot save the run state" err &&
	grep -q "$5" err &&
	grep -q "saved state still holds the last completed transition" err &&
	test ! -e "$(state_file).lock" &&
	k=$(at_step) &&
	last=$(tail -1 chain.log | cut -d" " -f2) &&
	echo "stopped after step $last, saved at step $k" &&
	# No step ran beyond the saved one, and no completed one is forgotten.
	{ [ "$last" = "$k" ] || [ "$last" = $((k - 1)) ]; } &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "done 10" &&
	for i in $(seq 1 10); do grep -qx "step $i" chain.log || { echo "step $i never ran"; exit 1; }; done &&
	# Only a step that ran but whose transition was not saved runs again.
	if [ "$last" = "$k" ]; then want="step $k"; else want=; fi &&
	test "$(sort chain.log | uniq -d)" = "$want"
}

test_expect_success 'a full disk while the state file is replaced stops the run and keeps the state' '
	export RAYMOND_SNAPSHOT_INTERVAL=0 &&
	check_stopped_intact write .raymond/state/ 4 28 "No space left on device"
'

test_expect_success 'a failing rename of the state file stops the run and keeps the state' '
	export RAYMOND_SNAPSHOT_INTERVAL=0 &&
	check_stopped_intact rename .raymond/state/ 4 5 "Input/output error"
'

test_expect_success 'a failing fsync of the state file stops the run and keeps the state' '
	export RAYMOND_SNAPSHOT_INTERVAL=0 &&
	check_stopped_intact fsync .raymond/state/ 4 5 "Input/output error"
'

test_expect_success 'a failing journal write stops the run and keeps the state' '
	check_stopped_intact pwrite .journal 4 28 "No space left on device"
'

test_expect_success 'a failing journal fdatasync stops the run and keeps the state' '
	check_stopped_intact fdatasync .journal 3 5 "Input/output error"
'

test_expect_success 'a journal that cannot be made leaves every save to the state file' '
	chain &&
	faulty write .journal 1 28 >out 2>err &&
	test "$(cat out)" = "done 10" &&
	test ! -s err &&
	test "$(wc -l <chain.log)" = 10 &&
	grep -q "\"status\":\"completed\"" "$(state_file)" &&
	test ! -e ".raymond/state/$(run_id).journal"
'

test_expect_success 'when the state file cannot be replaced at the end, the journal keeps the finished run' '
	chain &&
	expect_status 1 faulty write .json 2 28 2>err &&
	grep -q "cannot save the run state: .*No space left on device" err &&
	test ! -e "$(state_file).lock" &&
	test "$(sort -u chain.log | wc -l)" = 10 &&
	state_json | grep -q "\"status\":\"completed\"" &&
	raymond --status "$(run_id)" | grep -q "^Result: *done 10"
'

test_done
