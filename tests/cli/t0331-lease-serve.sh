#!/bin/bash
# raymond serve with .raymond shared by two hosts (RAYMOND_HOST plays
# them, src/lease.h): a daemon stops only a run whose lease names its own
# host, and says which host drives any other.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

test_expect_success 'a daemon on another host will not stop a run, and names the host that drives it; one on its host does' '
	mkdir -p flows/cli &&
	printf "touch started\nfor i in \$(seq 1200); do sleep 0.05; done\necho \"<result>never</result>\"\n" \
		>flows/cli/START.sh || return 1
	RAYMOND_HOST=alpha "$RAYMOND" flows/cli --workflow-id cli1 --quiet >cli.out 2>&1 &
	cli=$!
	wait_for_file started &&
	RAYMOND_HOST=beta start_serve &&
	post /api/runs/cli1/stop "" && code_is 409 &&
	has "run cli1 is driven by raymond pid $cli on host alpha, not this one" &&
	get /api/runs/cli1 -H "Authorization: Bearer $TOKEN" && has "\"status\":\"running\"" &&
	stop_serve &&
	is_running $cli &&
	RAYMOND_HOST=alpha start_serve &&
	post /api/runs/cli1/stop "" && code_is 202 &&
	wait_for_exit $cli &&
	get /api/runs/cli1 -H "Authorization: Bearer $TOKEN" && has "\"status\":\"interrupted\"" &&
	stop_serve
'

serve_cleanup
test_done
