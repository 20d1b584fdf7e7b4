#!/bin/bash
# raymond lint's output (text, --json, --level), exit statuses and
# arguments; and the error checks raymond run makes before it starts.
. "$(dirname "$0")/lib.sh"

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

# broken: wf/ with an error (START.md names a missing state), a warning
# (ORPHAN.sh is unreachable) and an info (ORPHAN.sh is a script).
broken() {
	printf "Work, then <goto>NOPE</goto> or <result>done</result>\n" | state START.md &&
	printf "echo \"<result>x</result>\"\n" | state ORPHAN.sh && chmod +x wf/ORPHAN.sh
}

test_expect_success 'text: file:line: severity: message [check], sorted by file and line, then the summary' '
	broken &&
	printf -- "---\nmodel: sonet\n---\n<result>x</result>\n" | state A.md &&
	expect_status 1 raymond lint wf >out 2>err &&
	test ! -s err &&
	cat >want <<-\EOF &&
	wf/A.md: warning: A.md is unreachable: no transition from START.md leads to it [unreachable-state]
	wf/A.md:2: error: model '"'"'sonet'"'"' is not haiku, sonnet, opus or a full model id such as claude-sonnet-4-5 [invalid-model]
	wf/ORPHAN.sh: warning: ORPHAN.sh is unreachable: no transition from START.md leads to it [unreachable-state]
	wf/START.md:1: error: <goto>NOPE</goto>: state '"'"'NOPE'"'"' not found (looked for NOPE.md and NOPE.sh) [missing-target]
	2 errors, 2 warnings, 1 info
	EOF
	diff want out
'

test_expect_success 'a clean workflow says so and exits 0; info and warnings alone exit 0' '
	printf "Work, then <result>x</result>\n" | state START.md &&
	raymond lint wf >out &&
	test "$(cat out)" = "No issues found." &&
	printf "echo \"<result>x</result>\"\n" | state START.sh && chmod +x wf/START.sh && rm wf/START.md &&
	raymond lint wf >out &&
	test "$(cat out)" = "1 info" &&
	raymond lint wf --level info >out &&
	test "$(cat out)" = "wf/START.sh: info: START.sh is a script: lint read only the tags written literally in it [script-state-no-static-analysis]
1 info" &&
	printf "echo \"<result>x</result>\"\n" | state ORPHAN.sh && chmod +x wf/ORPHAN.sh &&
	raymond lint wf >out &&
	tail -n 1 out | grep -qx "1 warning, 2 info"
'

test_expect_success '--level error hides warnings and info but the summary counts them; --level info shows all' '
	broken &&
	expect_status 1 raymond lint wf --level error >out &&
	test "$(grep -c "\]$" out)" = 1 &&
	grep -q "\[missing-target\]$" out &&
	tail -n 1 out | grep -qx "1 error, 1 warning, 1 info" &&
	expect_status 1 raymond lint wf --level info >out &&
	test "$(grep -c "\]$" out)" = 3 &&
	expect_status 1 raymond lint wf --level warning >out &&
	test "$(grep -c "\]$" out)" = 2
'

test_expect_success '--json: an array of {file, line, severity, message, check}, --level applied' '
	broken &&
	expect_status 1 raymond lint wf --json >out &&
	cat >want <<-\EOF &&
	[{"check":"unreachable-state","file":"wf/ORPHAN.sh","line":null,"message":"ORPHAN.sh is unreachable: no transition from START.md leads to it","severity":"warning"},{"check":"missing-target","file":"wf/START.md","line":1,"message":"<goto>NOPE</goto>: state '"'"'NOPE'"'"' not found (looked for NOPE.md and NOPE.sh)","severity":"error"}]
	EOF
	diff want out &&
	expect_status 1 raymond lint wf --json --level error >out &&
	grep -q "^\[{\"check\":\"missing-target\",[^{]*}\]\$" out &&
	rm wf/ORPHAN.sh && printf "Work, then <result>done</result>\n" | state START.md &&
	raymond lint wf --json >out &&
	test "$(cat out)" = "[]"
'

test_expect_success 'a path that is not a workflow is an error, exit 1' '
	expect_status 1 raymond lint nowhere >out 2>err &&
	test ! -s out &&
	grep -qx "raymond: error: workflow '"'"'nowhere'"'"' does not exist" err &&
	mkdir empty &&
	expect_status 1 raymond lint empty 2>err &&
	grep -qx "raymond: error: '"'"'empty'"'"' is not a workflow: it holds no state file (.md or .sh)" err &&
	grep -q "^hint: give a workflow folder" err &&
	echo x >notes.txt &&
	expect_status 1 raymond lint notes.txt 2>err &&
	grep -q "is not a workflow: it is neither a folder" err &&
	expect_status 1 raymond lint 2>err &&
	grep -qx "raymond: error: no workflow given" err &&
	expect_status 1 raymond lint wf --level loud 2>err &&
	grep -q "level must be info, warning or error" err &&
	expect_status 1 raymond wf --level error 2>err &&
	grep -q "\-\-level goes with raymond lint" err
'

test_expect_success 'a state file lints its folder with that file as the entry' '
	broken &&
	expect_status 1 raymond lint wf/ORPHAN.sh >out &&
	grep -q "^wf/START.md: warning: START.md is unreachable: no transition from ORPHAN.sh" out
'

test_expect_success 'a zip archive is linted from its contents, its names as ARCHIVE/NAME' '
	broken &&
	"$MKZIP" flow.zip START.md=wf/START.md ORPHAN.sh=wf/ORPHAN.sh &&
	expect_status 1 raymond lint flow.zip >out &&
	grep -q "^flow.zip/START.md:1: error: .*\[missing-target\]$" out &&
	echo garbage >bad.zip &&
	expect_status 1 raymond lint bad.zip 2>err &&
	grep -q "^raymond: error: " err
'

test_expect_success 'raymond help lint and raymond lint --help describe it' '
	raymond help lint >out &&
	grep -q "^usage: raymond lint WORKFLOW \[--json\] \[--level info|warning|error\]" out &&
	grep -q -- "--level" out &&
	raymond lint --help >out2 &&
	diff out out2 &&
	raymond help >all &&
	grep -q "^  lint " all
'

# ------------------------------------------------------------- before a run

test_expect_success 'raymond run refuses a workflow with an error before any turn, creating no run' '
	use_fake &&
	printf "Then <goto>NOPE</goto>\nMOCK: reply <goto>NOPE</goto>\n" | state START.md &&
	t0=$(now_ms) &&
	expect_status 1 raymond wf >out 2>err &&
	t1=$(now_ms) &&
	calls 0 &&
	test ! -e .raymond/state &&
	grep -qx "wf/START.md:1: error: <goto>NOPE</goto>: state '"'"'NOPE'"'"' not found (looked for NOPE.md and NOPE.sh) \[missing-target\]" err &&
	grep -qx "raymond: error: wf has 1 error; the run was not started" err &&
	grep -q "^hint: .*--no-lint" err &&
	test ! -s out &&
	expect_status 1 raymond run wf 2>err &&
	grep -q "\[missing-target\]" err &&
	echo "refused in $((t1 - t0)) ms"
'

test_expect_success 'warnings do not stop a run, and are not printed by it' '
	use_fake &&
	printf "MOCK: reply <result>ok</result>\nDo it, then <result>ok</result>\n" | state START.md &&
	printf "echo \"<result>x</result>\"\n" | state ORPHAN.sh &&
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = ok &&
	! grep -q "unreachable" err &&
	calls 1
'

test_expect_success 'an error in a state the run cannot reach does not stop it; lint reports it' '
	printf "echo \"<result>ran</result>\"\n" | state START.sh &&
	printf "Notes: end with <goto>SOMEWHERE</goto>\n" | state README.md &&
	raymond wf --quiet >out &&
	test "$(cat out)" = ran &&
	expect_status 1 raymond lint wf >out &&
	grep -q "^wf/README.md:1: error: .*\[missing-target\]$" out
'

test_expect_success '--no-lint starts it anyway; the run fails on its own terms' '
	use_fake &&
	printf "MOCK: reply <goto>NOPE</goto>\nThen <goto>NOPE</goto>\n" | state START.md &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	calls 1 &&
	grep -q "^raymond: error: wf/START.md (agent main): .*NOPE" err &&
	! grep -q "\[missing-target\]" err
'

test_expect_success 'resume does not lint again' '
	printf "echo \"<goto>B</goto>\"\n" | state START.sh &&
	printf "echo \"<goto>TYPO</goto>\"\n" | state B.sh &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	expect_status 1 raymond resume "$(run_id)" --quiet 2>err &&
	! grep -q "\[missing-target\]" err &&
	grep -q "^raymond: error: wf/B.sh (agent main): .*TYPO" err &&
	printf "echo \"<result>fixed</result>\"\n" | state B.sh &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = fixed
'

test_expect_success 'a hook file that does not load is refused before the run, --no-lint keeps the old way' '
	printf "echo \"<result>x</result>\"\n" | state START.sh &&
	printf "return {\n" >wf/hooks.lua &&
	expect_status 1 raymond wf 2>err &&
	grep -q "^wf/hooks.lua:.*\[hook-load-error\]$" err &&
	test ! -e .raymond/state &&
	expect_status 1 raymond wf --no-lint 2>err &&
	grep -q "fix the hook, then continue with" err
'

test_expect_success 'lint reads the config file'"'"'s hooks and no_default_hooks as a run does; --no-config skips it' '
	printf "echo \"<result>x</result>\"\n" | state START.sh &&
	mkdir -p .raymond hk &&
	printf "return {\n" >hk/bad.lua &&
	printf "raymond:\n  hooks: [hk/bad.lua]\n" >.raymond/config.yaml &&
	expect_status 1 raymond lint wf >out 2>err &&
	grep -q "^hk/bad.lua:2: error: .*\[hook-load-error\]$" out &&
	expect_status 1 raymond wf 2>err &&
	grep -q "^hk/bad.lua:2: error: .*\[hook-load-error\]$" err &&
	raymond lint wf --no-config >out &&
	! grep -q hook-load-error out &&
	printf -- "---\nmax_visits: 2\non_max_visits: NOPE\n---\n<result>x</result>\n" | state START.md && rm wf/START.sh &&
	printf "raymond:\n  no_default_hooks: true\n" >.raymond/config.yaml &&
	raymond lint wf >out &&
	! grep -q missing-target out &&
	expect_status 1 raymond lint wf --no-config >out &&
	grep -q "NOPE.*\[missing-target\]$" out
'

test_expect_success 'every example workflow lints without an error or a warning' '
	for w in "$TESTS_TOP"/workflows/*/; do
		raymond lint "$w" >out || { echo "$w:"; cat out; exit 1; }
		! grep -q "error\|warning" out || { echo "$w:"; cat out; exit 1; }
	done
'

test_done
