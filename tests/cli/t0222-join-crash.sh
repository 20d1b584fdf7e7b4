#!/bin/bash
# Joins survive kill -9: a resume gathers every worker's result exactly
# once, runs no worker that had already ended, and starts the summary
# agent exactly once, wherever the kill fell (docs/protocol.md, "Joins").
. "$(dirname "$0")/lib.sh"

TRIALS=${CRASH_TRIALS:-8}

# A fan-out of $1 workers W.sh (item 1..N) joined by SUM.sh.  Each worker
# logs "start I" and "end I" to work.log; with a file hold-I it waits
# until that file is gone.  SUM.sh (its pid in sum.pid) waits for the
# file go, then appends its agent id to sum.log and keeps the results it
# got in results.json.  A waiting script whose raymond was killed gives
# up at once, before its side effect, so the test can go on as soon as
# it has ended, without racing it.
fan_out() {
	mkdir -p wf &&
	cat >wf/START.sh <<-EOS &&
	for i in \$(seq $1); do echo "<fork next=\"DONE\" join=\"SUM\" item=\"\$i\">W</fork>"; done
	EOS
	state W.sh <<-\EOS &&
	echo "start $item" >>"$JOIN_DIR/work.log"
	echo $$ >"$JOIN_DIR/pid-$item"
	while [ -e "$JOIN_DIR/hold-$item" ]; do kill -0 $PPID || exit 1; sleep 0.02; done
	echo "end $item" >>"$JOIN_DIR/work.log"
	echo "<result>r$item</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>parent done</result>"
	EOS
	state SUM.sh <<-\EOS
	echo $$ >"$JOIN_DIR/sum.pid"
	until [ -e "$JOIN_DIR/go" ]; do kill -0 $PPID || exit 1; sleep 0.02; done
	echo "$RAYMOND_AGENT_ID" >>"$JOIN_DIR/sum.log"
	cp "$RAYMOND_RESULTS_FILE" "$JOIN_DIR/results.json"
	echo "<result>summarised</result>"
	EOS
}

# results_in: the saved state holds the results of workers 1 and 2.
results_in() {
	s=$(state_json) &&
	case $s in *'"result":"r1"'*) ;; *) return 1 ;; esac &&
	case $s in *'"result":"r2"'*) ;; *) return 1 ;; esac
}

# ended PIDFILE...: the processes whose pids the files hold have ended.
ended() {
	for f in "$@"; do
		[ -e "$f" ] || continue
		wait_for_exit "$(cat "$f")" || return 1
	done
}

# The summary ran once, and its results hold r1..r$1 once each, in order.
gathered_once() {
	test "$(wc -l <sum.log)" -eq 1 || { echo "sum.log:"; cat sum.log; return 1; }
	want=
	for i in $(seq "$1"); do
		want="$want${want:+,}{\"agent\":\"main_w$i\",\"result\":\"r$i\",\"state\":\"W.sh\",\"status\":\"ok\"}"
	done
	test "$(cat results.json)" = "[$want]" || { echo "results.json:"; cat results.json; return 1; }
}

test_expect_success 'kill -9 while workers run: the ended ones are not run again, the rest are' '
	export JOIN_DIR=$PWD &&
	fan_out 5 &&
	touch go hold-3 hold-4 hold-5
	"$RAYMOND" wf --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_line work.log "^end 2$" &&
	wait_for_line work.log "^end 1$" &&
	wait_for_line work.log "^start 5$" &&
	wait_until 60 results_in &&
	raymond status "$(run_id)" >status &&
	grep -F "Joins:     main_w1 of main -> SUM.sh (wait all): 2 of 5 ended (2 ok, 0 failed)" status &&
	kill -9 $pid && { wait $pid 2>/dev/null || true; } &&
	ended pid-3 pid-4 pid-5 &&
	rm hold-3 hold-4 hold-5 &&
	raymond --resume "$(run_id)" --quiet >out &&
	grep -x "parent done" out &&
	gathered_once 5 &&
	for i in 1 2; do test "$(grep -cx "start $i" work.log)" -eq 1; done &&
	for i in 3 4 5; do test "$(grep -cx "end $i" work.log)" -eq 1; done
'

test_expect_success 'kill -9 while the summary runs: it starts again, once, with the same results' '
	export JOIN_DIR=$PWD &&
	fan_out 3
	"$RAYMOND" wf --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file sum.pid &&
	kill -9 $pid && { wait $pid 2>/dev/null || true; } &&
	ended sum.pid &&
	touch go &&
	raymond --resume "$(run_id)" --quiet >out &&
	gathered_once 3 &&
	test "$(cat sum.log)" = main_sum4 &&
	for i in 1 2 3; do test "$(grep -cx "start $i" work.log)" -eq 1; done
'

# kill -9 at a random moment of a fan-out of 20 (before the summary's
# side effect, which waits for go), then resume: every worker's result
# is gathered once and the summary runs once, wherever the kill fell.
check_trial() {
	seed=$1
	rm -rf .raymond work.log sum.log sum.pid results.json go
	RANDOM=$seed
	delay=$(printf '0.%03d' $((RANDOM % 600 + 20)))
	"$RAYMOND" wf --quiet --no-debug >/dev/null 2>&1 &
	pid=$!
	sleep "$delay"
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	ended sum.pid || return 1
	touch go
	if [ -z "$(run_id 2>/dev/null)" ]; then
		echo "trial $seed: killed after ${delay}s, before the first save"
		raymond wf --quiet --no-debug >/dev/null
	else
		echo "trial $seed: killed after ${delay}s"
		raymond --resume "$(run_id)" --quiet --no-debug >/dev/null
	fi
	gathered_once 20
}

test_expect_success "kill -9 at random moments of a 20-worker join ($TRIALS trials)" '
	export JOIN_DIR=$PWD &&
	fan_out 20 &&
	for t in $(seq $TRIALS); do check_trial $((t * 7919)) || exit 1; done
'

test_done
