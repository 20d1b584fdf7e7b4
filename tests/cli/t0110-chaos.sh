#!/bin/bash
# Chaos: a fan-out of 50 agents, half running scripts and half the fake
# claude, is killed with SIGKILL at 30 random moments and resumed each
# time.  The outcome must equal an uninterrupted run's, and a state's side
# effect may happen twice only if that state was running (was the agent's
# current state on disk) when a kill came.
. "$(dirname "$0")/lib.sh"

KILLS=${CHAOS_KILLS:-30}

# Each worker runs eight states, S1 to S8, appending "<agent> <state>" to
# effects.log as its side effect.  Even workers are scripts, odd ones are
# markdown states whose Bash tool call (in the fake claude) does the same.
chaos_workflow() {
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake
	export EFFECTS=$PWD/effects.log
	mkdir -p fake
	state START.sh <<-\EOS
	for i in $(seq 1 50); do
		if [ $((i % 2)) = 0 ]; then echo "<fork k=\"$i\">SH1</fork>"; else echo "<fork k=\"$i\">MD1</fork>"; fi
	done
	echo "<goto>END</goto>"
	EOS
	for n in 1 2 3 4 5 6 7 8; do
		next=$((n + 1))
		if [ $n = 8 ]; then tag='<result>done $k</result>'; else tag="<goto>SH$next</goto>"; fi
		printf '%s\n' 'sleep 0.$((RANDOM % 3 + 1))' "echo \"\$RAYMOND_AGENT_ID S$n\" >>\"\$EFFECTS\"" "echo \"$tag\"" >wf/SH$n.sh
		if [ $n = 8 ]; then mtag='<result>done {{k}}</result>'; else mtag="<goto>MD$next</goto>"; fi
		printf '%s\n' "---" "max_repeats: 0" "---" "Step $n for {{agent_id}}." \
			"MOCK: bash sleep 0.\$((RANDOM % 3 + 1)); echo \"{{agent_id}} S$n\" >>\"\$EFFECTS\" => $mtag" >wf/MD$n.md
	done
	state END.sh <<-\EOS
	echo "<result>main done</result>"
	EOS
}

run_saved() { [ -n "$(run_id 2>/dev/null)" ]; }

# The workers' current states on disk, as "<agent> S<n>" lines.
current_states() {
	raymond --status "$(run_id)" | sed -n 's/^  \(main_[a-z]*[0-9]*\) at [A-Z]*\([0-9]\)\..*/\1 S\2/p'
}

test_expect_success "50 agents killed $KILLS times match an uninterrupted run" '
	mkdir ref && (cd ref && chaos_workflow && raymond wf --quiet --no-debug >out) &&
	sort ref/effects.log >ref.sorted &&
	test "$(wc -l <ref.sorted)" = 400 &&
	test -z "$(uniq -d ref.sorted)" &&
	chaos_workflow &&
	: >allowed &&
	RANDOM=4242 &&
	for t in $(seq 1 $KILLS); do
		if [ $t = 1 ]; then
			"$RAYMOND" wf --quiet --no-debug >/dev/null 2>&1 &
			pid=$!
			# A kill before the run is saved leaves nothing to resume.
			wait_until 60 run_saved || exit 1
		else
			"$RAYMOND" --resume "$(run_id)" --quiet --no-debug >/dev/null 2>&1 &
			pid=$!
		fi
		sleep "0.$(printf "%03d" $((RANDOM % 220 + 30)))"
		kill -9 $pid 2>/dev/null
		wait $pid 2>/dev/null
		if [ -f "$(state_file)" ] && state_json | grep -q "\"status\":\"completed\""; then break; fi
		# What was running when the kill came may run again.
		[ -f "$(state_file)" ] && current_states >>allowed
		sleep 0.1
	done
	echo "$t kills" &&
	test "$t" = "$KILLS" &&
	if ! state_json | grep -q "\"status\":\"completed\""; then
		raymond --resume "$(run_id)" --quiet --no-debug >out
	fi &&
	grep -q "\"status\":\"completed\"" "$(state_file)" &&
	sort -u effects.log >got.sorted &&
	diff ref.sorted got.sorted &&
	sort effects.log | uniq -d >twice &&
	echo "$(wc -l <twice) side effects repeated, $(sort -u allowed | wc -l) states were running at a kill" &&
	while read -r line; do
		grep -qx "$line" allowed || { echo "ran twice but completed before any kill: $line"; exit 1; }
	done <twice
'
test_done
