#!/bin/bash
# <print> on a script's stderr is shown like one on stdout (made safe,
# live view aware); stderr's transition tags are not obeyed: only stdout
# steers the workflow.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE NO_COLOR

test_expect_success 'a print on stderr goes to stdout, in order with the result' '
	state START.sh <<-\EOS &&
	echo "<print>from stderr</print>" >&2
	echo "<result>the result</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	printf "%s\n" "from stderr" "the result" >want &&
	diff want out &&
	test ! -s err
'

test_expect_success 'a print on stderr split across reads is shown whole' '
	state START.sh <<-\EOS &&
	printf "noise <pri" >&2; sleep 0.3; printf "nt>hel" >&2; sleep 0.3; printf "lo</pr" >&2
	sleep 0.3; printf "int> more noise\n" >&2
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	printf "%s\n" hello done >want &&
	diff want out
'

test_expect_success 'a transition tag on stderr is ignored; stdout decides' '
	state START.sh <<-\EOS &&
	echo "<goto>ELSEWHERE</goto>" >&2
	echo "<print>also <result>x</result> shown</print>" >&2
	echo "<goto>B</goto>"
	EOS
	echo "echo \"<result>went to B</result>\"" | state B.sh &&
	echo "echo \"<result>went elsewhere</result>\"" | state ELSEWHERE.sh &&
	raymond wf --quiet >out 2>err &&
	printf "%s\n" "also <result>x</result> shown" "went to B" >want &&
	diff want out
'

test_expect_success 'a tag on stderr alone is no transition: the state has none' '
	state START.sh <<-\EOS &&
	echo "<result>on stderr</result>" >&2
	EOS
	expect_status 1 raymond wf >out 2>err &&
	grep -q "no transition tag" err &&
	! grep -q "on stderr" out
'

test_expect_success 'control characters in a stderr print are shown, not obeyed' '
	state START.sh <<-\EOS &&
	printf "<print>clear\033[2Jscreen</print>\n" >&2
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	printf "%s\n" "clear^[[2Jscreen" done >want &&
	diff want out
'

test_expect_success 'a malformed print on stderr stops its prints, not the state' '
	state START.sh <<-\EOS &&
	echo "<print a=b>x</print>" >&2
	echo "<print>after</print>" >&2
	echo "<print>stdout still</print><result>done</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	printf "%s\n" "stdout still" done >want &&
	diff want out
'

PTY=$(dirname "$RAYMOND")/tests/pty-run
SCREEN=$(cd "$(dirname "$0")" && pwd)/screen.awk

test_expect_success 'a worker'\''s stderr print is prefixed on a terminal, like its stdout prints' '
	export TERM=xterm &&
	echo "echo \"<fork next=\\\"END\\\">W</fork>\"" | state START.sh &&
	state W.sh <<-\EOS &&
	echo "<print>worker on stderr</print>" >&2
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>main result</result>"
	EOS
	"$PTY" 80 24 log "$RAYMOND" --quiet wf &&
	LC_ALL=C awk -v lastnl=0 -f "$SCREEN" log >final &&
	grep -qx "\[main_w1\] worker on stderr" final
'

test_done
