#!/bin/bash
# GET /api/runs keeps what it read of each run between requests; each
# request must still show every run as it is on disk then: a run resumed
# from the command line, a new run, a removed one, a run whose raymond
# was killed (no file changes, its lock goes), and that run resumed.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve-lib.sh"

# runs: GET /api/runs into ./runs, one run a line.
runs() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE/api/runs" >runs; }

# shows ID STATUS: the listing shows run ID with STATUS.
shows() { runs && grep -q "^[[,]*{\"id\":\"$1\",\"status\":\"$2\"" runs || { echo "not $1 $2:"; cat runs; false; }; }
absent() { runs && ! grep -q "\"id\":\"$1\"" runs || { echo "$1 still listed:"; cat runs; false; }; }

test_expect_success 'each request shows the runs as they are on disk now' '
	state START.sh <<-\EOS &&
	echo x >>starts
	if [ -e fixed ]; then echo "<result>ok</result>"; else exit 3; fi
	EOS
	raymond wf --workflow-id flaky --quiet >/dev/null 2>&1 || true &&
	raymond wf --workflow-id other --quiet >/dev/null 2>&1 || true &&
	start_serve &&
	shows flaky failed && shows other failed &&
	shows flaky failed &&
	touch fixed &&
	raymond resume flaky --quiet >/dev/null &&
	shows flaky completed && shows other failed &&
	raymond wf --workflow-id third --quiet >/dev/null &&
	shows third completed &&
	rm .raymond/state/other.json &&
	absent other && shows flaky completed && shows third completed &&
	test "$(wc -l <starts)" = 4
'

test_expect_success 'a run whose raymond is killed shows interrupted at the next request, and resumed shows completed' '
	state START.sh <<-\EOS &&
	echo x >>starts
	touch started
	while [ ! -e go ]; do sleep 0.05; done
	echo "<goto>DONE</goto>"
	EOS
	state DONE.sh <<-\EOS &&
	echo x >>done
	echo "<result>done</result>"
	EOS
	start_serve
	# Every save replaces the state file, and none comes later than the
	# step start: once the script runs, no file of the run changes.
	RAYMOND_SNAPSHOT_INTERVAL=0 "$RAYMOND" wf --workflow-id crash --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file started &&
	shows crash running &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	shows crash interrupted &&
	touch go &&
	raymond resume crash --quiet >/dev/null &&
	shows crash completed &&
	test "$(wc -l <done)" = 1 &&
	test "$(wc -l <starts)" = 2
'

serve_cleanup
test_done
