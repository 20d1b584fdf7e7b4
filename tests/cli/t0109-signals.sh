#!/bin/bash
# SIGINT and SIGTERM: every child process group is gone within 2 s, even
# children that ignore SIGTERM, and the run resumes.
. "$(dirname "$0")/lib.sh"

# Agents whose states start children that ignore SIGTERM; each records
# the pids of its group in pids/.
stubborn_fanout() {
	mkdir -p pids
	state START.sh <<-\EOS
	for i in 1 2 3; do echo "<fork n=\"$i\">HOLD</fork>"; done
	echo "<goto>HOLD</goto>"
	EOS
	state HOLD.sh <<-\EOS
	if [ -e released ]; then echo "<result>released ${n:-main}</result>"; exit 0; fi
	trap "" TERM
	(trap "" TERM; exec sleep 300) &
	echo "$$ $!" >"pids/.${RAYMOND_AGENT_ID}" && mv "pids/.${RAYMOND_AGENT_ID}" "pids/${RAYMOND_AGENT_ID}"
	while :; do sleep 0.1; done
	EOS
}

all_pids() { cat pids/* 2>/dev/null | tr " " "\n" | grep .; }

# The processes still running (is_running: a zombie has ended), checked
# without starting a process, so that the check itself stays fast on a
# loaded machine.
any_alive() {
	local p
	for p in $PIDS; do is_running "$p" && return 0; done
	return 1
}

four_agents() { [ "$(ls pids | wc -l)" = 4 ]; }

for sig in INT TERM; do
test_expect_success "SIG$sig: every group is gone within 2 s, exit 130, and the run resumes" '
	stubborn_fanout
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_until 60 four_agents &&
	PIDS=$(all_pids) &&
	test "$(echo "$PIDS" | wc -l)" = 8 &&
	t0=$(now_ms) &&
	kill -'$sig' $pid &&
	while any_alive && [ $(( $(now_ms) - t0 )) -lt 60000 ]; do sleep 0.01; done &&
	gone=$(( $(now_ms) - t0 )) &&
	echo "all children gone ${gone} ms after the signal" &&
	! any_alive &&
	test "$gone" -lt 2000 &&
	expect_status 130 wait $pid &&
	grep -q "\"status\":\"interrupted\"" "$(state_file)" &&
	touch released &&
	raymond --resume "$(run_id)" --quiet >out &&
	grep -qx "released main" out
'
done
test_done
