#!/bin/bash
# --dangerously-skip-permissions=false and =true, as the original raymond
# takes them: =false is the default (--permission-mode acceptEdits), even
# over a config file's true; =true is the bare flag.  raymond config says
# where the setting comes from.
. "$(dirname "$0")/lib.sh"
unset CLAUDECODE
export IS_SANDBOX=1

# permissions P...: the fake's turns so far ran with these permission
# settings, in order (acceptEdits, or skip for --dangerously-skip-permissions).
permissions() {
	got=$(sed -n 's/.*"permission":"\([^"]*\)".*/\1/p' fake/log.jsonl | tr "\n" " ")
	[ "$got" = "$* " ] || { echo "permissions: expected '$*', got '$got'"; return 1; }
}

md_wf() { mkdir -p wf && printf "MOCK: reply <result>ok</result>" >wf/START.md; }

test_expect_success '=false runs with the default acceptEdits; =true and the bare flag skip permissions' '
	use_fake && md_wf &&
	raymond wf --dangerously-skip-permissions=false >out 2>err &&
	grep -qx ok out &&
	raymond wf --dangerously-skip-permissions=true >/dev/null 2>&1 &&
	raymond wf --dangerously-skip-permissions >/dev/null 2>&1 &&
	raymond wf >/dev/null 2>&1 &&
	permissions acceptEdits skip skip acceptEdits
'

test_expect_success '=false wins over a config file true; raymond config says it comes from the command line' '
	use_fake && md_wf &&
	mkdir -p .raymond &&
	printf "raymond:\n  dangerously_skip_permissions: true\n" >.raymond/config.yaml &&
	raymond config >cfg &&
	grep -qx "dangerously_skip_permissions = true (.raymond/config.yaml:2)" cfg &&
	raymond config --dangerously-skip-permissions=false >cfg &&
	grep -qx "dangerously_skip_permissions = false (command line)" cfg &&
	raymond wf --dangerously-skip-permissions=false >/dev/null 2>err &&
	! grep -q "dangerously_skip_permissions is on" err &&
	raymond wf >/dev/null 2>err &&
	grep -qx "raymond: dangerously_skip_permissions is on (.raymond/config.yaml:2)" err &&
	permissions acceptEdits skip
'

test_expect_success 'the config file false value is the default too, and raymond config names its line' '
	use_fake && md_wf &&
	mkdir -p .raymond &&
	printf "raymond:\n  dangerously_skip_permissions: false\n" >.raymond/config.yaml &&
	raymond config >cfg &&
	grep -qx "dangerously_skip_permissions = false (.raymond/config.yaml:2)" cfg &&
	raymond wf >/dev/null 2>&1 &&
	raymond wf --dangerously-skip-permissions=true >/dev/null 2>&1 &&
	permissions acceptEdits skip
'

test_expect_success 'a resume given =false turns off what the run was launched with' '
	use_fake &&
	mkdir -p wf &&
	printf "MOCK: reply <goto>GATE</goto>" >wf/START.md &&
	printf "[ -e \"\$OUT/fixed\" ] || exit 3\necho \"<goto>END</goto>\"\n" >wf/GATE.sh &&
	printf "MOCK: reply <result>ok</result>" >wf/END.md &&
	export OUT=$PWD &&
	expect_status 1 raymond wf --dangerously-skip-permissions >/dev/null 2>&1 &&
	touch fixed &&
	raymond resume "$(run_id)" --dangerously-skip-permissions=false >out 2>/dev/null &&
	grep -qx ok out &&
	permissions skip acceptEdits
'

test_expect_success 'any other value is refused, saying what it takes' '
	md_wf &&
	expect_status 1 raymond wf --dangerously-skip-permissions=no 2>err &&
	grep -qx "raymond: error: option '"'"'--dangerously-skip-permissions'"'"' takes =true or =false, not '"'"'no'"'"'" err &&
	expect_status 1 raymond wf --dangerously-skip-permissions= 2>err &&
	grep -q "takes =true or =false, not '"'"''"'"'" err &&
	expect_status 1 raymond wf --quiet=false 2>err &&
	grep -qx "raymond: error: option '"'"'--quiet'"'"' takes no value" err &&
	! ls .raymond/state/*.json 2>/dev/null
'

test_done
