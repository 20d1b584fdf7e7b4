#!/bin/bash
# A stop while a hook waits (in raymond.exec, raymond.evaluate or
# raymond.sleep), whether Ctrl-C or another agent's failure, never makes
# durable a decision the uninterrupted run would not have made: the hook's
# decision is discarded, even when it routes on the killed command's
# status or catches the error, and after --resume the run takes the same
# path as one never stopped.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

# START -> B -> result b, unless a hook routes START to FAILED; each state
# appends its name to the file path.
workflow() {
	for s in START B FAILED; do
		next="<goto>B</goto>"
		[ $s = B ] && next="<result>b</result>"
		[ $s = FAILED ] && next="<result>failed</result>"
		printf 'echo %s >>path\necho "%s"\n' "$s" "$next" >"wf/$s.sh" || return 1
	done
}

# hook BODY: wf/hooks.lua, whose PreTransition runs BODY when leaving
# START; BODY returns `failed` to route to FAILED.
hook() {
	mkdir -p wf &&
	printf 'local failed = { transition = { tag = "goto", target = "FAILED" } }\nreturn {\n  PreTransition = function(ev)\n    if ev.state ~= "START.sh" then return end\n%s\n  end,\n}\n' "$1" >wf/hooks.lua &&
	workflow
}

# Hook bodies that wait while the file slow exists, leaving the file
# waiting, and route to FAILED on what the wait returned.
EXEC_HOOK='    local r = raymond.exec{"sh", "-c", "[ -e slow ] && touch waiting && sleep 100; exit 0"}
    if r.code ~= 0 then return failed end'
SLEEP_HOOK='    if raymond.read_file("slow") then
      raymond.write_atomic("waiting", "x")
      if not pcall(raymond.sleep, 100) then return failed end
    end'
EVALUATE_HOOK='    local answer = raymond.evaluate{prompt = "Go on?\nMOCK: reply yes"}
    if answer ~= "yes" then return failed end'

# The CLI for raymond.evaluate: the fake, after a long wait while the file
# slow exists.
slow_claude() {
	mkdir -p fake &&
	printf "#!/bin/sh\nif [ -e slow ]; then touch waiting; sleep 100; fi\nexec \"%s\" \"\$@\"\n" "$FAKE" >claude &&
	chmod +x claude &&
	export RAYMOND_CLAUDE=$PWD/claude FAKE_CLAUDE_DIR=$PWD/fake
}

# Interrupt the run while the hook waits (the file slow makes it wait and
# it leaves the file waiting), resume it, and compare the path it took and
# its result with a run of a copy of the workflow that never waited.
same_path_after_interrupt() {
	touch slow
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file waiting || { echo "the hook never waited"; cat err; kill -9 $pid; return 1; }
	kill -INT $pid
	expect_status 130 wait $pid || { cat err; return 1; }
	rm -f slow
	raymond --resume "$(run_id)" --quiet >out 2>err || { cat err; return 1; }
	mkdir base && cp -r wf base/ &&
	(cd base && "$RAYMOND" wf --quiet >out) &&
	uniq path >got && uniq base/path >want &&
	diff -u want got &&
	test "$(cat out)" = "$(cat base/out)" &&
	test "$(cat out)" = b
}

test_expect_success 'a hook routing on raymond.exec'"'"'s exit status: the command killed by Ctrl-C is no failure' '
	hook "$EXEC_HOOK" &&
	same_path_after_interrupt
'

test_expect_success 'a hook routing on whether raymond.sleep was cut, catching its error' '
	hook "$SLEEP_HOOK" &&
	same_path_after_interrupt
'

test_expect_success 'a hook routing on raymond.evaluate'"'"'s answer: a turn killed by Ctrl-C is no answer' '
	slow_claude &&
	hook "$EVALUATE_HOOK" &&
	same_path_after_interrupt
'

# The same, stopped by another agent's failure instead of Ctrl-C: START
# forks a worker W and goes on at START2, whose hook waits; W fails once
# the hook waits.  The run fails (exit 1); resumed without the file slow,
# W succeeds and the run ends as one never stopped.
forked() {
	mkdir -p wf &&
	workflow &&
	state START.sh <<-\EOS &&
	echo START >>path
	echo "<fork next=\"START2\">W</fork>"
	EOS
	state START2.sh <<-\EOS &&
	echo START2 >>path
	echo "<goto>B</goto>"
	EOS
	state W.sh <<-\EOS &&
	echo W >>path
	if [ -e slow ]; then
		for _ in $(seq 1 1200); do [ -e waiting ] && break; sleep 0.05; done
		echo "the worker fails" >&2
		exit 1
	fi
	echo "<result>w</result>"
	EOS
	printf 'local failed = { transition = { tag = "goto", target = "FAILED" } }\nreturn {\n  PreTransition = function(ev)\n    if ev.state ~= "START2.sh" then return end\n%s\n  end,\n}\n' "$1" >wf/hooks.lua
}

same_path_after_failure() {
	touch slow
	expect_status 1 raymond wf --quiet >out 2>err || { cat err; return 1; }
	grep -q "the worker fails" err &&
	rm -f slow &&
	raymond --resume "$(run_id)" --quiet >out 2>err || { cat err; return 1; }
	mkdir base && cp -r wf base/ &&
	(cd base && "$RAYMOND" wf --quiet >out) &&
	sort -u path >got && sort -u base/path >want &&
	diff -u want got &&
	test "$(cat out)" = "$(cat base/out)" &&
	test "$(cat out)" = b
}

test_expect_success 'another agent'"'"'s failure kills the command raymond.exec waits for: no failure of the hook'"'"'s' '
	forked "$EXEC_HOOK" &&
	same_path_after_failure
'

test_expect_success 'another agent'"'"'s failure cuts raymond.sleep: a hook catching it decides nothing' '
	forked "$SLEEP_HOOK" &&
	same_path_after_failure
'

test_expect_success 'another agent'"'"'s failure kills raymond.evaluate'"'"'s turn: no answer' '
	slow_claude &&
	forked "$EVALUATE_HOOK" &&
	same_path_after_failure
'

# A handler that catches the stop in raymond.exec, then asks raymond.evaluate
# (whose turn runs PreTurn handlers inside this call) before it decides.
CAUGHT_THEN_EVALUATE_HOOK='    local ok = pcall(raymond.exec, {"sh", "-c", "[ -e slow ] && touch waiting && sleep 100; exit 0"})
    if not ok then
      raymond.evaluate{prompt = "Go on?\nMOCK: reply yes"}
      return failed
    end'

test_expect_success 'a hook that catches the stop in raymond.exec and then evaluates still decides nothing' '
	use_fake &&
	forked "$CAUGHT_THEN_EVALUATE_HOOK" &&
	same_path_after_failure
'

test_done
