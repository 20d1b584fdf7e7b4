#!/bin/bash
# kill -9 at random moments of a 200-step chain, then --resume.
#
# Each step appends "start N" and "end N" to a log; N travels in the
# input= attribute.  After every kill the state must name a step K
# such that no step after K ever started (the transition into a state is
# on disk before the state runs), and after --resume every step 1..200
# has run, the run ended at 200, and only K ran twice.
. "$(dirname "$0")/lib.sh"

TRIALS=${CRASH_TRIALS:-20}

make_chain() {
	state STEP.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "start $n" >>"$CHAIN_LOG"
	sleep 0.002
	echo "end $n" >>"$CHAIN_LOG"
	if [ "$n" -ge 200 ]; then
		echo "<result>finished at $n</result>"
	else
		echo "<goto input=\"$((n + 1))\">STEP</goto>"
	fi
	EOS
}

# The step the state says main is at (its pending input).
state_step() {
	state_json | grep -o '"input":"[0-9]*"' | grep -o '[0-9]*'
}

started_max() {
	sed -n 's/^start //p' "$CHAIN_LOG" | sort -n | tail -1
}

check_trial() {
	seed=$1
	rm -rf .raymond "$CHAIN_LOG"
	RANDOM=$seed
	delay=$(printf '0.%03d' $((RANDOM % 900 + 20)))
	"$RAYMOND" wf/STEP.sh --input 1 --quiet --no-debug >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	sleep 0.1 # let an orphaned step finish its log lines
	if [ -z "$(run_id 2>/dev/null)" ]; then
		# Killed before the first save (a busy machine starts slowly):
		# then no step may have started either.
		if [ -n "$(started_max 2>/dev/null)" ]; then
			echo "trial $seed: step $(started_max) started before the run was saved"
			return 1
		fi
		echo "trial $seed: killed after ${delay}s, before the first save; nothing ran"
		return 0
	fi
	raymond --status "$(run_id)" >/dev/null || { echo "state unreadable after kill"; return 1; }
	if state_json | grep -q '"status":"completed"'; then
		echo "trial $seed: kill came after the end"
		return 0
	fi
	k=$(state_step)
	m=$(started_max)
	m=${m:-0}
	if [ "$m" -gt "$k" ]; then
		echo "trial $seed: step $m started but the state is at $k"
		return 1
	fi
	raymond --resume "$(run_id)" --quiet --no-debug >out
	test "$(cat out)" = "finished at 200"
	grep -q '"status":"completed"' "$(state_file)"
	for i in $(seq 1 200); do
		c=$(grep -cx "start $i" "$CHAIN_LOG" || true)
		if [ "$c" -lt 1 ]; then echo "trial $seed: step $i never ran"; return 1; fi
		if [ "$c" -gt 1 ] && [ "$i" -ne "$k" ]; then
			echo "trial $seed: step $i ran $c times, but the kill fell in step $k"
			return 1
		fi
		if [ "$c" -gt 2 ]; then echo "trial $seed: step $i ran $c times"; return 1; fi
	done
	echo "trial $seed: killed after ${delay}s at step $k; resumed to 200"
}

test_expect_success 'an uninterrupted chain runs 200 steps once each' '
	make_chain &&
	export CHAIN_LOG=$PWD/chain.log &&
	raymond wf/STEP.sh --input 1 --quiet --no-debug >out &&
	test "$(cat out)" = "finished at 200" &&
	test "$(grep -c "^start" chain.log)" = 200 &&
	test "$(sort -u chain.log | wc -l)" = 400
'

test_expect_success "kill -9 at $TRIALS random moments, then --resume, loses and repeats nothing" '
	make_chain &&
	export CHAIN_LOG=$PWD/chain.log &&
	for t in $(seq 1 $TRIALS); do check_trial $((t * 7919)) || exit 1; done
'

# A chain whose step 5 waits for the test: kill -9 comes while it runs.
hold_at_5() {
	state STEP.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "start $n" >>"$CHAIN_LOG"
	if [ "$n" = 5 ]; then
		echo $$ >"$CHAIN_LOG.tmp" && mv "$CHAIN_LOG.tmp" "$CHAIN_LOG.pid5"
		while [ ! -e "$CHAIN_LOG.go" ]; do sleep 0.05; done
	fi
	if [ "$n" -ge 6 ]; then echo "<result>finished at $n</result>"; else echo "<goto input=\"$((n + 1))\">STEP</goto>"; fi
	EOS
	export CHAIN_LOG=$PWD/chain.log
}

# kill_at_5: start the chain, kill -9 raymond once step 5 runs, let that
# step end.
kill_at_5() {
	"$RAYMOND" wf/STEP.sh --input 1 --quiet --no-debug >/dev/null 2>&1 &
	pid=$!
	wait_for_file "$CHAIN_LOG.pid5" || return 1
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	touch "$CHAIN_LOG.go"
	wait_for_exit "$(cat "$CHAIN_LOG.pid5")"
}

test_expect_success 'after kill -9 the state file may lag, --status --json does not' '
	hold_at_5 &&
	kill_at_5 &&
	test -e ".raymond/state/$(run_id).journal" &&
	state_json | grep -q "\"input\":\"5\"" &&
	raymond --status "$(run_id)" | grep -q "main at STEP.sh \[input: \"5\"\]" &&
	raymond --list | grep -q "$(run_id) *interrupted" &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "finished at 6" &&
	test ! -e ".raymond/state/$(run_id).journal" &&
	grep -q "\"status\":\"completed\"" "$(state_file)" &&
	test "$(grep -c "^start 4" chain.log)" = 1
'

test_expect_success 'a journal of random bytes is skipped and the state file read' '
	hold_at_5 &&
	kill_at_5 &&
	j=".raymond/state/$(run_id).journal" &&
	head -c 8192 /dev/urandom >"$j" &&
	saved=$(grep -o "\"input\":\"[0-9]\"" "$(state_file)") &&
	state_json | grep -q "$saved" &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "finished at 6"
'

test_expect_success '--json goes with --status only' '
	expect_status 1 raymond --list --json 2>err &&
	grep -q "error: --json goes with --status" err
'

test_done
