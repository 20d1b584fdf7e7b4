#!/bin/bash
# kill -9 while an agent is inside a called workflow, then --resume: the
# result comes back to the caller's return state in the caller's
# workflow, and no step but the one the kill cut short runs twice.
. "$(dirname "$0")/lib.sh"

flow() { mkdir -p "flows/$1" && cat >"flows/$1/$2"; }

test_expect_success 'kill -9 inside the called workflow; resume returns to the caller once' '
	export LOG=$PWD/log &&
	flow main 1_START.sh <<-\EOS &&
	echo "main start" >>"$LOG"
	echo "<call-workflow return=\"BACK\" input=\"job\">../sub</call-workflow>"
	EOS
	flow main BACK.sh <<-\EOS &&
	echo "back [$RAYMOND_INPUT] in $RAYMOND_STATE_DIR" >>"$LOG"
	echo "<result>done: $RAYMOND_INPUT</result>"
	EOS
	flow sub 1_START.sh <<-\EOS &&
	echo "sub start [$RAYMOND_INPUT]" >>"$LOG"
	echo "<call return=\"AFTER\" input=\"$RAYMOND_INPUT\">SLOW</call>"
	EOS
	flow sub SLOW.sh <<-\EOS &&
	echo "slow begins" >>"$LOG"
	touch inside
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "slow done" >>"$LOG"
	echo "<result>slow [$RAYMOND_INPUT]</result>"
	EOS
	flow sub AFTER.sh <<-\EOS
	echo "<result>sub finished $RAYMOND_INPUT</result>"
	EOS
	"$RAYMOND" flows/main --quiet >out 2>err &
	pid=$!
	# The killed raymond leaves SLOW.sh running; resume stops it before
	# anything runs, and SLOW.sh starts again, so go comes only after that.
	wait_for_file inside &&
	kill -9 $pid && { wait $pid || true; } &&
	state_json >st &&
	grep -q "\"state\":\"SLOW.sh\"" st &&
	grep -q "\"workflow\":\"$PWD/flows/sub\"" st &&
	grep -q "\"depth\":1" st &&
	rm inside &&
	{ "$RAYMOND" --resume "$(run_id)" --quiet >out & } &&
	pid=$! &&
	wait_for_file inside &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = "done: sub finished slow [job]" &&
	printf "%s\n" "main start" "sub start [job]" "slow begins" "slow begins" "slow done" \
		"back [sub finished slow [job]] in $PWD/flows/main" >want &&
	diff -u want log &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

TRIALS=${CRASH_TRIALS:-8}

# main/STEP.sh calls sub for every n; sub returns n+1.  Each step logs
# "start <where> <n>" before its work.
make_chain() {
	flow main STEP.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "start main $n" >>"$LOG"
	sleep 0.002
	if [ "$n" -ge 40 ]; then echo "<result>finished at $n</result>"; exit 0; fi
	echo "<call-workflow return=\"STEP\" input=\"$n\">../sub</call-workflow>"
	EOS
	flow sub 1_START.sh <<-\EOS
	n=$RAYMOND_INPUT
	echo "start sub $n" >>"$LOG"
	sleep 0.002
	echo "<result>$((n + 1))</result>"
	EOS
}

test_expect_success "kill -9 at random moments of a cross-workflow chain ($TRIALS trials)" '
	export LOG=$PWD/log && make_chain &&
	for seed in $(seq 1 $TRIALS); do
		rm -rf .raymond "$LOG"
		RANDOM=$seed
		delay=$(printf "0.%03d" $((RANDOM % 400 + 20)))
		"$RAYMOND" flows/main/STEP.sh --input 0 --quiet --no-debug >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		kill -9 $pid 2>/dev/null || true
		wait $pid 2>/dev/null || true
		sleep 0.1
		[ -n "$(run_id 2>/dev/null)" ] || continue
		state_json | grep -q "\"status\":\"completed\"" && continue
		raymond --resume "$(run_id)" --quiet --no-debug >out
		test "$(cat out)" = "finished at 40" || { echo "trial $seed: $(cat out)"; exit 1; }
		for w in main sub; do
			last=40; [ $w = sub ] && last=39
			for i in $(seq 0 $last); do
				c=$(grep -cx "start $w $i" "$LOG" || true)
				[ "$c" -ge 1 ] || { echo "trial $seed: $w $i never ran"; exit 1; }
				[ "$c" -le 2 ] || { echo "trial $seed: $w $i ran $c times"; exit 1; }
			done
		done
		twice=$(sort "$LOG" | uniq -d | wc -l)
		[ "$twice" -le 1 ] || { echo "trial $seed: $twice steps ran twice"; sort "$LOG" | uniq -d; exit 1; }
	done
'

test_done
