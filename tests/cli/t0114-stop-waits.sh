#!/bin/bash
# A stop is never held up: SIGINT or SIGTERM ends raymond within 2 s while
# a hook spins in Lua, spins inside a string function, sleeps, or while the
# run waits for a usage limit to reset; the run is interrupted (exit 130)
# and resumes.  And a pattern search that would run for minutes is bounded
# by the hook's instruction budget like any other hook code.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

eq() { [ "$2" = "$3" ] || { printf '%s:\n  expected: %s\n  got:      %s\n' "$1" "$3" "$2"; return 1; }; }

# hook BODY: wf/hooks.lua whose PreTransition first leaves the mark
# in-hook, then runs BODY.
hook() {
	printf 'return {\n  PreTransition = function(ev)\n    raymond.write_atomic("in-hook", "x")\n%s\n  end,\n}\n' "$1" >wf/hooks.lua
}

# ends_within_2s SIG: send SIG to raymond ($pid) and require that it
# exits with 130 within 2 s, leaving the run interrupted.  It is watched
# for 5 s at most, then killed, so a failing test leaves nothing behind.
ends_within_2s() {
	t0=$(now_ms)
	kill -"$1" $pid
	while kill -0 $pid 2>/dev/null && [ $(( $(now_ms) - t0 )) -lt 5000 ]; do sleep 0.02; done
	took=$(( $(now_ms) - t0 ))
	echo "raymond ended ${took} ms after SIG$1"
	if kill -0 $pid 2>/dev/null; then kill -9 $pid; echo "still running"; cat err; return 1; fi
	expect_status 130 wait $pid || { cat err; return 1; }
	[ "$took" -lt 2000 ] || { cat err; return 1; }
	grep -q "\"status\":\"interrupted\"" "$(state_file)"
}

# stopped_within SIG MARK: start raymond on wf, wait (up to 60 s) for
# MARK to appear, then ends_within_2s SIG.
stopped_within() {
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file "$2" || { echo "never reached $2"; cat err; kill -9 $pid; return 1; }
	ends_within_2s "$1"
}

resumes() {
	echo "return {}" >wf/hooks.lua &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" b
}

for sig in INT TERM; do
test_expect_success "SIG$sig ends a hook spinning in Lua at once, with no instruction budget" '
	two_step &&
	hook "    while true do end" &&
	export RAYMOND_HOOK_INSTRUCTIONS=0 &&
	stopped_within '$sig' in-hook &&
	resumes
'
done

test_expect_success 'SIGINT ends a hook spinning inside string.find at once' '
	two_step &&
	hook "    string.find(string.rep(\"a\", 30000), \".-.-.-.-.-b\")" &&
	export RAYMOND_HOOK_INSTRUCTIONS=0 &&
	stopped_within INT in-hook &&
	resumes
'

test_expect_success 'SIGINT ends a hook waiting in raymond.sleep(100) at once' '
	two_step &&
	hook "    raymond.sleep(100)" &&
	stopped_within INT in-hook &&
	resumes
'

test_expect_success 'SIGTERM ends the wait for a usage limit to reset at once' '
	mkdir -p fake &&
	export RAYMOND_CLAUDE="$FAKE" FAKE_CLAUDE_DIR=$PWD/fake &&
	state START.md <<-\EOS
	MOCK: limit 3600 || reply <result>b</result>
	EOS
	: a line of its own, so that only raymond goes to the background
	"$RAYMOND" wf >out 2>err &
	pid=$!
	wait_for_line err "usage limit reached; waiting" || { echo "the run never waited"; cat err; kill -9 $pid; false; }
	ends_within_2s TERM
'

test_expect_success 'a catastrophic pattern in a hook is stopped by its instruction budget, naming the file' '
	two_step &&
	hook "    string.find(string.rep(\"a\", 30000), \".-.-.-.-.-b\")" &&
	export RAYMOND_HOOK_INSTRUCTIONS=10000000 &&
	timeout 60 "$RAYMOND" wf --quiet >out 2>err; rc=$? &&
	eq "exit status" "$rc" 1 &&
	grep -q "hooks.lua" err && grep -q "instruction budget" err &&
	test ! -e b-ran &&
	resumes
'

test_done
