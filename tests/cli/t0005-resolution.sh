#!/bin/bash
# How targets and the WORKFLOW argument resolve to state files.  A run
# whose tags name no state, or an ambiguous one, starts with --no-lint:
# lint would refuse it, and these tests are about the run's own errors.
. "$(dirname "$0")/lib.sh"

# expect_error TEXT: the run failed; the first line of err is a
# "raymond: error:" line containing TEXT.
expect_error() {
	first=$(head -n 1 err)
	case $first in
	"raymond: error: "*"$1"*) ;;
	*) echo "unexpected first stderr line: $first (wanted \"$1\")"; return 1 ;;
	esac
}

test_expect_success 'a target without extension finds NAME.sh' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>next.sh ran</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "next.sh ran"
'

test_expect_success 'a target with .sh finds that file' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT.sh</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>explicit</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = explicit
'

test_expect_success 'a target with both NAME.md and NAME.sh is ambiguous' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>sh</result>"
	EOS
	state NEXT.md <<-\EOS &&
	A prompt.
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "wf/START.sh (agent main): " &&
	expect_error "ambiguous" &&
	head -n 1 err | grep -q "NEXT.md" &&
	head -n 1 err | grep -q "NEXT.sh" &&
	grep -q "^hint: " err &&
	test ! -s out
'

test_expect_success 'an explicit extension settles an ambiguous name' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT.sh</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>the script</result>"
	EOS
	state NEXT.md <<-\EOS &&
	A prompt.
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "the script"
'

test_expect_success 'ambiguity is reported for return= and fork targets too' '
	state START.sh <<-\EOS &&
	echo "<call return=\"BACK\">SUB</call>"
	EOS
	state SUB.sh <<-\EOS &&
	echo "<result>s</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	state BACK.md <<-\EOS &&
	A prompt.
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "ambiguous" &&
	rm -rf .raymond &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"SUB\">BACK</fork>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "ambiguous"
'

test_expect_success 'an explicit extension must exist as written' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT.sh</goto>"
	EOS
	state NEXT <<-\EOS &&
	echo "<result>no extension</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "NEXT.sh" &&
	head -n 1 err | grep -q "not found" &&
	test ! -s out
'

test_expect_success 'a file without extension is not a state' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT <<-\EOS &&
	echo "<result>no extension</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "not found"
'

test_expect_success 'a .bat target is an error even when the file exists' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT.bat</goto>"
	EOS
	state NEXT.bat <<-\EOS &&
	echo "<result>bat</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "NEXT.bat" &&
	head -n 1 err | grep -q "Windows" &&
	test ! -s out
'

test_expect_success 'a .ps1 target is an error even when the file exists' '
	state START.sh <<-\EOS &&
	echo "<reset>NEXT.ps1</reset>"
	EOS
	state NEXT.ps1 <<-\EOS &&
	echo "<result>ps1</result>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	expect_error "NEXT.ps1" &&
	head -n 1 err | grep -q "Windows"
'

test_expect_success 'the entry state may be 1_START.sh' '
	state 1_START.sh <<-\EOS &&
	echo "<goto>START_LIKE</goto>"
	EOS
	state START_LIKE.sh <<-\EOS &&
	echo "<result>from 1_START</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "from 1_START" &&
	grep -q "\"entry\":\"1_START.sh\"" "$(state_file)"
'

test_expect_success 'the entry state may be START.sh' '
	state START.sh <<-\EOS &&
	echo "<result>from START</result>"
	EOS
	state OTHER.sh <<-\EOS &&
	echo "<result>other</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "from START"
'

test_expect_success 'both 1_START and START make an ambiguous entry point' '
	state 1_START.sh <<-\EOS &&
	echo "<result>one</result>"
	EOS
	state START.sh <<-\EOS &&
	echo "<result>two</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error "ambiguous entry point" &&
	test ! -s out
'

test_expect_success '1_START.md beside START.sh is an ambiguous entry point' '
	state 1_START.md <<-\EOS &&
	A prompt.
	EOS
	state START.sh <<-\EOS &&
	echo "<result>two</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error "ambiguous entry point" &&
	test ! -s out
'

test_expect_success 'START.md beside START.sh is ambiguous' '
	state START.md <<-\EOS &&
	A prompt.
	EOS
	state START.sh <<-\EOS &&
	echo "<result>sh</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error "ambiguous" &&
	test ! -s out
'

test_expect_success 'a folder without 1_START or START has no entry point' '
	state MAIN.sh <<-\EOS &&
	echo "<result>main</result>"
	EOS
	state start.sh <<-\EOS &&
	echo "<result>lowercase</result>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	expect_error "no entry point" &&
	test ! -s out
'

test_expect_success 'a single .sh file is a workflow; its targets resolve beside it' '
	state START.sh <<-\EOS &&
	echo "<result>not the entry</result>"
	EOS
	state B.sh <<-\EOS &&
	echo "<goto>C</goto>"
	EOS
	state C.sh <<-\EOS &&
	echo "<result>started at B</result>"
	EOS
	raymond wf/B.sh --quiet >out &&
	test "$(cat out)" = "started at B" &&
	rm -rf .raymond &&
	(cd wf && raymond B.sh --quiet >../out2) &&
	test "$(cat out2)" = "started at B"
'

test_expect_success 'a missing WORKFLOW argument path fails' '
	expect_status 1 raymond no-such-flow --quiet >out 2>err &&
	expect_error "no-such-flow" &&
	head -n 1 err | grep -q "does not exist"
'

test_expect_success 'a WORKFLOW file that is not a state fails' '
	mkdir wf &&
	echo "echo hi" >wf/run.txt &&
	expect_status 1 raymond wf/run.txt --quiet >out 2>err &&
	expect_error "run.txt" &&
	test ! -s out
'

test_expect_success 'a .bat WORKFLOW file fails' '
	mkdir wf &&
	echo "echo hi" >wf/START.bat &&
	expect_status 1 raymond wf/START.bat --quiet >out 2>err &&
	expect_error "START.bat"
'
test_expect_success 'white space around a target is ignored' '
	state START.sh <<-\EOS &&
	printf "<call return=\" BACK \">\n  SUB \n</call>\n"
	EOS
	state SUB.sh <<-\EOS &&
	echo "<result>sub</result>"
	EOS
	state BACK.sh <<-\EOS &&
	echo "<result>back after $RAYMOND_RESULT</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "back after sub"
'
test_done
