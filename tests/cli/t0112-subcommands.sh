#!/bin/bash
# The command line: commands git style (run, resume, list, status, help,
# version), the old forms beside them, help text, and argument errors.
. "$(dirname "$0")/lib.sh"

# err_is STATUS MESSAGE [HINT] -- CMD...: CMD exits with STATUS, prints
# nothing on stdout, and "raymond: error: MESSAGE" (then "hint: HINT",
# when given) is its whole stderr.
err_is() {
	status=$1 msg=$2 hint=
	shift 2
	if [ "$1" != -- ]; then hint=$1; shift; fi
	shift
	expect_status "$status" "$@" >out 2>err || return 1
	{ echo "raymond: error: $msg"; [ -z "$hint" ] || echo "hint: $hint"; } >want
	test ! -s out || { echo "stdout not empty:"; cat out; return 1; }
	cmp -s want err || { echo "stderr differs:"; diff want err; return 1; }
}

# The workflow wf: prints its input back.
echo_workflow() {
	state START.sh <<-\EOS
	echo "<result>got ${RAYMOND_INPUT:-nothing}</result>"
	EOS
}

test_expect_success 'raymond run WF and raymond WF both run the workflow' '
	echo_workflow &&
	raymond run wf --input one --quiet >out1 &&
	test "$(cat out1)" = "got one" &&
	raymond wf --input two --quiet >out2 &&
	test "$(cat out2)" = "got two" &&
	raymond run --quiet --input=three wf >out3 &&
	test "$(cat out3)" = "got three" &&
	test "$(ls .raymond/state/*.json | wc -l)" = 3
'

test_expect_success 'options may be shortened, given with =, and ended by --' '
	echo_workflow &&
	raymond run wf --inp=short --qui >out &&
	test "$(cat out)" = "got short" &&
	mkdir -p -- -odd && cp wf/START.sh -- -odd/ &&
	raymond run --quiet -- -odd >out &&
	test "$(cat out)" = "got nothing" &&
	raymond --quiet -- -odd >out &&
	test "$(cat out)" = "got nothing"
'

test_expect_success 'raymond resume ID and raymond --resume ID continue a run' '
	state START.sh <<-\EOS &&
	if [ -e fixed ]; then echo "<result>fixed</result>"; else exit 3; fi
	EOS
	expect_status 1 raymond run wf --workflow-id r1 --quiet 2>/dev/null &&
	expect_status 1 raymond run wf --workflow-id r2 --quiet 2>/dev/null &&
	touch fixed &&
	raymond resume r1 --quiet --timeout 60 >out1 &&
	test "$(cat out1)" = fixed &&
	raymond --resume r2 --quiet >out2 &&
	test "$(cat out2)" = fixed &&
	err_is 1 "run r1 already completed" "start a new run instead" -- raymond resume r1
'

test_expect_success 'raymond list and status print what --list and --status print' '
	state START.sh <<-\EOS &&
	echo "<call return=\"AFTER\" input=\"q\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	exit 2
	EOS
	state AFTER.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	raymond list >empty &&
	test "$(cat empty)" = "No runs found." &&
	expect_status 1 raymond wf --workflow-id r1 --quiet 2>/dev/null &&
	raymond list >new && raymond --list >old &&
	cmp new old && grep -q "^r1 *failed" new &&
	raymond status r1 >new && raymond --status r1 >old &&
	cmp new old && grep -q "main at SUB.sh (returns to AFTER.sh)" new &&
	raymond status r1 --json >new && raymond --status r1 --json >old &&
	cmp new old && grep -q "\"status\":\"failed\"" new &&
	raymond status --json r1 >new && cmp new old
'

test_expect_success 'help: every command, option group, option and tag; on stdout, status 0' '
	raymond help >help 2>err &&
	test ! -s err &&
	raymond --help >h2 && cmp help h2 &&
	raymond -h >h3 && cmp help h3 &&
	raymond wf --quiet --help >h4 && cmp help h4 &&
	for c in run resume answer list status test serve config init-config help version hook-bridge launch-follow; do
		grep -q "^  $c" help || { echo "no command $c"; return 1; }
	done &&
	for o in input workflow-id timeout max-parallel budget model effort claude \
	    dangerously-skip-permissions no-wait hooks no-default-hooks quiet no-debug json no-config user on-ask; do
		grep -q "^  --$o" help || { echo "no option --$o"; return 1; }
	done &&
	for g in "run options:" "markdown states (the Claude Code CLI):" "hooks (Lua" "output:" "status options:"; do
		grep -q "^$g" help || { echo "no group $g"; return 1; }
	done &&
	for t in "<goto>NEXT</goto>" "<reset cd=" "<call return=" "<function return=" "<fork next=" "<result>TEXT</result>" "<ask next=\"NEXT\""; do
		grep -qF "  $t" help || { echo "no tag $t"; return 1; }
	done &&
	grep -qF "<print>TEXT</print> shows TEXT" help &&
	grep -q "RAYMOND_WORKFLOW_ID" help &&
	grep -q "^exit status: 0 completed, 1 error, 2 waiting for answers (--on-ask pause)," help &&
	grep -q "^3 stopped (budget, hook, max_visits, loop; resumable), 130 interrupted" help &&
	grep -q "raymond workflows/hello --input world" help &&
	grep -q "raymond run NAME" help &&
	grep -q -- "--resume ID, --list, --status ID" help &&
	test "$(awk "length > 80" help | wc -l)" = 0
'

test_expect_success 'help CMD and CMD --help show that command alone' '
	raymond help run >run &&
	raymond run --help >run2 && cmp run run2 &&
	raymond run -h >run3 && cmp run run3 &&
	head -n 2 run | grep -q "^usage: raymond run WORKFLOW \[options\]" &&
	grep -q "^       raymond WORKFLOW \[options\]" run &&
	grep -q "^  --budget USD" run && grep -q "^  --hooks FILE" run &&
	! grep -q -- "--json" run &&
	raymond help resume >resume &&
	grep -q "^usage: raymond resume ID" resume &&
	grep -q "^  --timeout SECONDS" resume &&
	grep -q "^  --input TEXT" resume && ! grep -q -- "--workflow-id" resume &&
	raymond help answer | grep -q "^usage: raymond answer ID ASK_ID TEXT \[options\]$" &&
	raymond help status >status &&
	grep -q "^usage: raymond status ID \[--json\]" status &&
	grep -q "^  --json" status &&
	raymond status --help >status2 && cmp status status2 &&
	raymond help list | grep -q "^usage: raymond list \[--json\] \[--status S\]$" &&
	raymond help help | grep -q "^usage: raymond help \[COMMAND\]$" &&
	raymond help version | grep -q "^usage: raymond version$" &&
	raymond help hook-bridge | grep -q "^usage: raymond hook-bridge \[--warn\] \[--timeout S\]$" &&
	raymond help hook-bridge | grep -q "^Run by the Claude Code CLI, not by hand" &&
	raymond help launch-follow | grep -q "^Run by raymond, not by hand" &&
	err_is 1 "unknown command '\''nope'\''" "commands: run, resume, answer, list, status, watch, prune, test, serve, lint, diagram, convert, config, init-config, help, version, hook-bridge, launch-follow" -- raymond help nope
'

test_expect_success 'each command that takes --json says what its --json prints' '
	for c in status lint config list; do
		raymond help $c >h.$c &&
		sed -n "/^  --json/,/^  --[a-z]/p" h.$c | sed "\$d" >j.$c &&
		test -s j.$c || { echo "no --json in help $c"; cat h.$c; return 1; }
	done &&
	grep -q "state file and journal" j.status && ! grep -qi "lint\|finding" j.status &&
	grep -q "findings" j.lint && ! grep -q "status\|resume" j.lint &&
	grep -q "settings" j.config && ! grep -q "status\|lint\|finding" j.config &&
	grep -q "runs" j.list &&
	raymond help >help &&
	! grep -q "status: the run.s whole state" help &&
	test "$(awk "length > 80" help h.status h.lint h.config | wc -l)" = 0
'

test_expect_success 'version and --version, with and without Lua' '
	raymond version >v1 && raymond --version >v2 && cmp v1 v2 &&
	grep -q "^raymond [0-9]" v1 &&
	raymond --version --bogus >v3 && cmp v1 v3 &&
	raymond --quiet --version >v4 && cmp v1 v4 &&
	raymond --vers >v5 && cmp v1 v5 &&
	err_is 1 "unexpected argument '\''x'\''" "see: raymond help version" -- raymond version x
'

test_expect_success 'a command name wins over a folder; raymond run NAME runs the folder' '
	for name in list run help status; do
		mkdir -p $name && printf "echo \"<result>folder %s</result>\"\n" $name >$name/START.sh || return 1
	done &&
	raymond list >out && test "$(cat out)" = "No runs found." &&
	raymond run list --quiet >out && test "$(cat out)" = "folder list" &&
	raymond ./list --quiet >out && test "$(cat out)" = "folder list" &&
	raymond --quiet -- list >out && test "$(cat out)" = "folder list" &&
	raymond run run --quiet >out && test "$(cat out)" = "folder run" &&
	raymond run help --quiet >out && test "$(cat out)" = "folder help" &&
	raymond help >out && grep -q "^commands:" out &&
	raymond list >out && test "$(grep -c " completed " out)" = 5
'

test_expect_success 'a mistyped command gets a hint; other missing workflows do not' '
	err_is 1 "workflow '\''lsit'\'' does not exist" \
	    "did you mean raymond list? commands: run, resume, answer, list, status, watch, prune, test, serve, lint, diagram, convert, config, init-config, help, version, hook-bridge, launch-follow" -- raymond lsit &&
	err_is 1 "workflow '\''stauts'\'' does not exist" \
	    "did you mean raymond status? commands: run, resume, answer, list, status, watch, prune, test, serve, lint, diagram, convert, config, init-config, help, version, hook-bridge, launch-follow" -- raymond stauts &&
	err_is 1 "workflow '\''nope'\'' does not exist" -- raymond nope &&
	err_is 1 "workflow '\''lsit'\'' does not exist" -- raymond run lsit &&
	err_is 1 "workflow '\''x/lsit'\'' does not exist" -- raymond x/lsit
'

test_expect_success 'argument errors of each command' '
	h="see: raymond help" &&
	err_is 1 "unknown option '\''--bogus'\''" "$h run" -- raymond run wf --bogus &&
	err_is 1 "unknown option '\''-x'\''" "$h run" -- raymond run -x wf &&
	err_is 1 "option '\''--input'\'' needs a value" "$h run" -- raymond run wf --input &&
	err_is 1 "option '\''--json'\'' does not go with raymond run" "$h run" -- raymond run wf --json &&
	err_is 1 "no workflow given" "raymond run WORKFLOW (a folder or a state file); see raymond help run" -- raymond run &&
	err_is 1 "unexpected argument '\''extra'\''" "give one WORKFLOW; quote --input text that has spaces" -- raymond run wf extra &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''soon'\''" "for example: --timeout 300" -- raymond run wf --timeout soon &&
	err_is 1 "unknown option '\''--bogus'\''" "$h resume" -- raymond resume r1 --bogus &&
	err_is 1 "option '\''--timeout'\'' needs a value" "$h resume" -- raymond resume r1 --timeout &&
	err_is 1 "option '\''--input'\'' does not go with raymond answer" "see: raymond help answer" -- raymond answer r1 a1 x --input y &&
	err_is 1 "no ask id given" "raymond status ID shows the pending asks with their ids" -- raymond answer r1 &&
	err_is 1 "no answer given" "raymond answer ID ASK_ID TEXT (quote TEXT that has spaces)" -- raymond answer r1 a1 &&
	err_is 1 "no run id given" "raymond resume ID; list runs with: raymond list" -- raymond resume &&
	err_is 1 "unexpected argument '\''r2'\''" "$h resume" -- raymond resume r1 r2 &&
	err_is 1 "unknown option '\''--bogus'\''" "$h list" -- raymond list --bogus &&
	err_is 1 "option '\''--quiet'\'' does not go with raymond list" "$h list" -- raymond list --quiet &&
	err_is 1 "unexpected argument '\''x'\''" "$h list" -- raymond list x &&
	err_is 1 "unknown option '\''--bogus'\''" "$h status" -- raymond status r1 --bogus &&
	err_is 1 "no run id given" "raymond status ID; list runs with: raymond list" -- raymond status --json &&
	err_is 1 "option '\''--json'\'' takes no value" "$h status" -- raymond status r1 --json=yes &&
	err_is 1 "unknown option '\''--all'\''" "$h help" -- raymond help --all &&
	err_is 1 "option '\''--no'\'' is ambiguous: --no-lint, --no-wait, --no-default-hooks, --no-debug, --no-config" "$h run" -- raymond run wf --no
'

test_expect_success 'an option taking one value given twice is an error, in any spelling; flags and lists may repeat' '
	h="see: raymond help" &&
	err_is 1 "option '\''--older-than'\'' given twice ('\''1d'\'', then '\''2d'\''); give it once" "$h prune" -- \
	    raymond prune --older-than 1d --older-than 2d &&
	err_is 1 "option '\''--budget'\'' given twice ('\''5'\'', then '\''50'\''); give it once" "$h run" -- \
	    raymond run wf --budget 5 --bud=50 &&
	err_is 1 "option '\''--input'\'' given twice ('\''a'\'', then '\''a'\''); give it once" "see: raymond --help" -- \
	    raymond wf --input a --input=a &&
	mkdir -p proj/.git && cd proj &&
	raymond list --status failed --status failed --json --json >out &&
	test "$(cat out)" = "[]" &&
	raymond prune --status failed --dry-run --dry-run >out &&
	test "$(cat out)" = "No runs to remove."
'

test_expect_success 'the old form keeps its errors, word for word' '
	h="see: raymond --help" &&
	err_is 1 "no workflow given" "raymond WORKFLOW (a folder or a state file), or raymond --resume ID; see raymond --help" -- raymond &&
	err_is 1 "unknown option '\''--bogus'\''" "$h" -- raymond wf --bogus &&
	err_is 1 "unknown option '\''-x'\''" "$h" -- raymond -x wf &&
	err_is 1 "option '\''--input'\'' needs a value" "$h" -- raymond wf --input &&
	err_is 1 "option '\''--status'\'' needs a value" "$h" -- raymond --status &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''abc'\''" "for example: --timeout 300" -- raymond wf --timeout abc &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''-5'\''" "for example: --timeout 300" -- raymond wf --timeout -5 &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''nan'\''" "for example: --timeout 300" -- raymond wf --timeout nan &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\'''\''" "for example: --timeout 300" -- raymond wf --timeout "" &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''5 '\''" "for example: --timeout 300" -- raymond wf --timeout "5 " &&
	err_is 1 "--timeout needs a number from 0 to 1e+07, got '\''0x10000000000000000'\''" "for example: --timeout 300" -- raymond wf --timeout 0x10000000000000000 &&
	err_is 1 "--budget needs a number from 0 to 1e+06, got '\''1e999'\''" "for example: --budget 300" -- raymond wf --budget 1e999 &&
	err_is 1 "--max-parallel needs a number from 0 to 1e+06, got '\''1e19'\''" "for example: --max-parallel 300" -- raymond wf --max-parallel 1e19 &&
	err_is 1 "--max-parallel needs a whole number, got '\''2.5'\''" -- raymond wf --max-parallel 2.5 &&
	err_is 1 "--effort must be low, medium, high, xhigh or max, not '\''extreme'\''" -- raymond wf --effort extreme &&
	err_is 1 "unexpected argument '\''extra'\''" "give one WORKFLOW; quote --input text that has spaces" -- raymond wf extra &&
	err_is 1 "a WORKFLOW argument ('\''wf'\'') cannot go with --resume, --list or --status" -- raymond --resume x wf &&
	err_is 1 "a WORKFLOW argument ('\''wf'\'') cannot go with --resume, --list or --status" -- raymond --list wf &&
	err_is 1 "--json goes with --status" "raymond --status ID --json" -- raymond wf --json &&
	err_is 1 "--json goes with --status" "raymond --status ID --json" -- raymond --list --json
'

test_expect_success 'numbers are read as before: hex, blanks before, exponents' '
	echo_workflow &&
	raymond wf --timeout " 5" --max-parallel 3e0 --budget 0x10 --quiet >out &&
	test "$(cat out)" = "got nothing" &&
	raymond status "$(run_id)" --json >st &&
	grep -q "\"timeout\":5" st && grep -q "\"max_parallel\":3" st && grep -q "\"budget\":16" st
'

test_expect_success 'at most 64 --hooks files' '
	echo_workflow &&
	set -- && for _ in $(seq 1 65); do set -- "$@" --hooks h.lua; done &&
	err_is 1 "more than 64 --hooks files" "put hook files in the workflow'\''s hooks/ folder instead" -- raymond wf "$@"
'

test_done
