#!/bin/bash
# Errors: exit status 1, one "raymond: error:" line naming the state file
# and agent, detail and hint lines, a failed state file, and --resume.
# Workflows whose tags name no state run with --no-lint: lint would refuse
# them before they start, and these tests are about the run's own errors.
. "$(dirname "$0")/lib.sh"

# expect_error STATE AGENT TEXT: the run failed (stderr in err) at wf/STATE
# in AGENT with a first line containing TEXT and a hint line.
expect_error() {
	first=$(head -n 1 err)
	case $first in
	"raymond: error: wf/$1 (agent $2): "*"$3"*) ;;
	*) echo "unexpected first stderr line: $first (wanted wf/$1, agent $2, \"$3\")"; return 1 ;;
	esac
	grep -q "^hint: " err || { echo "no hint line"; return 1; }
	grep -q "\"status\":\"failed\"" "$(state_file)" || { echo "state file not failed"; return 1; }
}

# A one-state workflow whose START.sh prints TAGS, run with --quiet.
fail_with_output() {
	printf "printf \"%%s\\\\n\" %q\n" "$1" | state START.sh
	state B.sh <<-\EOS
	echo "<result>b</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err
}

# stopped_fast STATUS CMD...: CMD exits with STATUS (stdout in out, stderr
# in err) long before the 300 s its states would take: within 30 s.
stopped_fast() {
	local want=$1 t0 took
	shift
	t0=$(now_ms)
	expect_status "$want" "$@" >out 2>err || { cat err; return 1; }
	took=$(( $(now_ms) - t0 ))
	echo "ended after $took ms"
	[ "$took" -lt 30000 ] || { cat err; return 1; }
}

# stopped PIDFILE: the process whose pid PIDFILE holds has ended.
stopped() {
	wait_for_exit "$(cat "$1")" && return 0
	echo "process $(cat "$1") ($1) was not stopped"
	kill "$(cat "$1")"
	return 1
}

test_expect_success 'a script exiting non-zero fails the run with its last stderr lines' '
	state START.sh <<-\EOS &&
	for i in $(seq 1 40); do echo "stderr line $i" >&2; done
	echo "<goto>B</goto>"
	exit 3
	EOS
	state B.sh <<-\EOS &&
	touch "$OUT/b-ran"
	echo "<result>b</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error START.sh main "exited with status 3" &&
	grep -qx "  | stderr line 40" err &&
	grep -qx "  | stderr line 39" err &&
	! grep -q "stderr line 1$" err &&
	test ! -e b-ran &&
	test ! -s out
'

test_expect_success 'without --quiet the error still reaches stderr, stdout stays empty' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	exit 2
	EOS
	expect_status 1 raymond wf >out 2>err &&
	grep -q "^raymond: error: wf/B.sh (agent main): script exited with status 2" err &&
	test ! -s out
'

test_expect_success 'a script printing no tag fails' '
	fail_with_output "just prose: <results>B</results> <gotoX>B</gotoX>" &&
	expect_error START.sh main "no transition tag"
'

test_expect_success 'a script printing only <print> has no transition' '
	fail_with_output "<print>hello</print>" &&
	expect_error START.sh main "no transition tag" &&
	grep -qx hello out
'

test_expect_success 'two gotos fail' '
	fail_with_output "<goto>B</goto><goto>B</goto>" &&
	expect_error START.sh main "2 transition tags"
'

test_expect_success 'a result beside a goto fails' '
	fail_with_output "<result>x</result> <goto>B</goto>" &&
	expect_error START.sh main "2 transition tags"
'

test_expect_success 'a fork beside a call fails' '
	fail_with_output "<fork next=\"B\">B</fork><call return=\"B\">B</call>" &&
	expect_error START.sh main "2 transition tags"
'

test_expect_success 'an unknown tag is named in the error' '
	fail_with_output "<await next=\"X\">q</await>" &&
	expect_error START.sh main "unknown tag <await>"
'

test_expect_success 'a missing target is named in the error' '
	fail_with_output "<goto>NOPE</goto>" &&
	expect_error START.sh main "NOPE" &&
	head -n 1 err | grep -q "not found"
'

test_expect_success 'a missing return= target fails' '
	fail_with_output "<call return=\"NOPE\">B</call>" &&
	expect_error START.sh main "not found" &&
	head -n 1 err | grep -q "NOPE"
'

test_expect_success 'an unquoted attribute value is malformed' '
	fail_with_output "<goto input=x>B</goto>" &&
	expect_error START.sh main "malformed attribute"
'

test_expect_success 'a duplicate attribute fails' '
	fail_with_output "<goto input=\"a\" input=\"b\">B</goto>" &&
	expect_error START.sh main "duplicate attribute"
'

test_expect_success 'an attribute the tag does not take fails' '
	fail_with_output "<goto cd=\"x\">B</goto>" &&
	expect_error START.sh main "unknown attribute" &&
	head -n 1 err | grep -q "cd"
'

test_expect_success 'call without return= fails' '
	fail_with_output "<call>B</call>" &&
	expect_error START.sh main "<call> needs return="
'

test_expect_success 'function without return= fails' '
	fail_with_output "<function input=\"x\">B</function>" &&
	expect_error START.sh main "<function> needs return="
'

test_expect_success 'fork without next= and without goto fails and starts no worker' '
	state W.sh <<-\EOS &&
	touch "$OUT/worker-ran"
	echo "<result>w</result>"
	EOS
	export OUT=$PWD &&
	fail_with_output "<fork item=\"1\">W</fork>" &&
	expect_error START.sh main "needs next=" &&
	test ! -e worker-ran
'

test_expect_success 'forks with different next= values fail' '
	state W.sh <<-\EOS &&
	echo "<result>w</result>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>c</result>"
	EOS
	fail_with_output "<fork next=\"B\">W</fork><fork next=\"C\">W</fork>" &&
	expect_error START.sh main "ambiguous"
'

test_expect_success 'a fork next= disagreeing with the goto fails' '
	state W.sh <<-\EOS &&
	echo "<result>w</result>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>c</result>"
	EOS
	fail_with_output "<fork next=\"B\">W</fork><goto>C</goto>" &&
	expect_error START.sh main "ambiguous"
'

test_expect_success 'an error in a worker names the worker agent' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"B\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<goto>MISSING</goto>"
	EOS
	state B.sh <<-\EOS &&
	# still running when the worker fails, which stops it
	sleep 300
	echo "<result>b</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error W.sh main_w1 "MISSING"
'

test_expect_success 'the inactivity timeout message names the limit' '
	state START.sh <<-\EOS &&
	sleep 300
	echo "<result>late</result>"
	EOS
	expect_status 1 raymond wf --quiet --timeout 1 >out 2>err &&
	expect_error START.sh main "no output for 1 seconds"
'

test_expect_success 'the inactivity timeout fails fast and kills the process group' '
	state START.sh <<-\EOS &&
	sleep 300 &
	echo $! >"$OUT/child.pid"
	sleep 300
	echo "<result>late</result>"
	EOS
	export OUT=$PWD &&
	stopped_fast 1 raymond wf --quiet --timeout 1 &&
	head -n 1 err | grep -q "^raymond: error: wf/START.sh (agent main): .*no output for" &&
	stopped child.pid
'

test_expect_success 'the timeout is for silence, not total time' '
	state START.sh <<-\EOS &&
	for i in 1 2 3 4 5 6 7 8; do echo "working $i"; sleep 0.5; done
	echo "<result>finished</result>"
	EOS
	raymond wf --quiet --timeout 3 >out &&
	test "$(cat out)" = finished
'

test_expect_success 'goto ../x is rejected even when the file exists' '
	state START.sh <<-\EOS &&
	echo "<goto>../x</goto>"
	EOS
	printf "echo \"<result>escaped</result>\"\n" >x.sh &&
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error START.sh main "path separator" &&
	! grep -q escaped out
'

test_expect_success 'goto sub/x.sh is rejected even when the file exists' '
	state START.sh <<-\EOS &&
	echo "<goto>sub/x.sh</goto>"
	EOS
	mkdir wf/sub &&
	printf "echo \"<result>escaped</result>\"\n" >wf/sub/x.sh &&
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error START.sh main "path separator" &&
	! grep -q escaped out
'

test_expect_success 'a backslash in a target is rejected' '
	fail_with_output "<goto>sub\\x</goto>" &&
	expect_error START.sh main "path separator"
'

test_expect_success 'a path in call return= is rejected' '
	fail_with_output "<call return=\"../B\">B</call>" &&
	expect_error START.sh main "path separator"
'

test_expect_success 'reset cd= to a missing directory fails' '
	fail_with_output "<reset cd=\"no-such-dir\">B</reset>" &&
	expect_error START.sh main "no-such-dir" &&
	head -n 1 err | grep -q "not a directory"
'

test_expect_success 'fork cd= to a missing directory fails and starts no worker' '
	state W.sh <<-\EOS &&
	touch "$OUT/worker-ran"
	echo "<result>w</result>"
	EOS
	export OUT=$PWD &&
	fail_with_output "<fork next=\"B\" cd=\"no-such-dir\">W</fork>" &&
	expect_error START.sh main "not a directory" &&
	test ! -e worker-ran
'

test_expect_success 'a failed run resumes at the failed state, not from the start' '
	state START.sh <<-\EOS &&
	echo start >>"$OUT/log"
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo b >>"$OUT/log"
	test -e "$OUT/fixed" || { echo "not fixed yet" >&2; exit 1; }
	echo "<goto>C</goto>"
	EOS
	state C.sh <<-\EOS &&
	echo c >>"$OUT/log"
	echo "<result>resumed ok</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error B.sh main "exited with status 1" &&
	id=$(run_id) &&
	grep -q "raymond --resume $id" err &&
	touch fixed &&
	raymond --resume "$id" --quiet >out2 &&
	test "$(cat out2)" = "resumed ok" &&
	printf "%s\n" start b b c >want &&
	diff want log &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

test_expect_success 'a run failed on a bad tag resumes after the script is fixed' '
	state START.sh <<-\EOS &&
	echo "<goto input=\"kept\">B</goto>"
	EOS
	state B.sh <<-\EOS &&
	echo "<goto>TYPO</goto>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>c</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error B.sh main "TYPO" &&
	state B.sh <<-\EOS &&
	echo "<result>b saw ${RAYMOND_INPUT-nothing}</result>"
	EOS
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = "b saw kept"
'

test_expect_success 'a failed worker is run again on resume, with its id and variables' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"B\" job=\"j7\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "$RAYMOND_AGENT_ID $job" >>"$OUT/log"
	test -e "$OUT/fixed" || exit 4
	echo "<result>w</result>"
	EOS
	state B.sh <<-\EOS &&
	echo "<result>main done</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error W.sh main_w1 "exited with status 4" &&
	touch fixed &&
	raymond --resume "$(run_id)" --quiet >out &&
	tail -n 1 log >last &&
	test "$(cat last)" = "main_w1 j7" &&
	grep -q "\"status\":\"completed\"" "$(state_file)"
'

test_expect_success 'a completed run cannot be resumed' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	raymond wf --quiet >out &&
	expect_status 1 raymond --resume "$(run_id)" --quiet >out 2>err &&
	grep -q "^raymond: error: .*already completed" err
'

test_expect_success 'resuming an unknown run id fails' '
	mkdir .raymond &&
	expect_status 1 raymond --resume no_such_run >out 2>err &&
	grep -q "^raymond: error: no run no_such_run" err
'
test_expect_success 'output on stderr also counts as activity for the timeout' '
	state START.sh <<-\EOS &&
	for i in 1 2 3 4 5 6 7 8; do echo "still working $i" >&2; sleep 0.5; done
	echo "<result>finished</result>"
	EOS
	raymond wf --quiet --timeout 3 >out &&
	test "$(cat out)" = finished
'

test_expect_success 'when one agent fails, the states other agents run are stopped' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"SLOW\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	# fail while SLOW runs
	for _ in $(seq 1200); do [ -e "$OUT/slow.pid" ] && break; sleep 0.05; done
	exit 5
	EOS
	state SLOW.sh <<-\EOS &&
	echo $$ >"$OUT/slow.pid.tmp" && mv "$OUT/slow.pid.tmp" "$OUT/slow.pid"
	sleep 300
	echo "<result>slow</result>"
	EOS
	export OUT=$PWD &&
	stopped_fast 1 raymond wf --quiet &&
	expect_error W.sh main_w1 "exited with status 5" &&
	test ! -s out &&
	stopped slow.pid
'

test_expect_success 'other names of the wider protocol are unknown tags, not ignored' '
	fail_with_output "<await>x</await>" &&
	expect_error START.sh main "unknown tag <await>"
'
test_done
