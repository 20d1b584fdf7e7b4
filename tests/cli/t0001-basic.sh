#!/bin/bash
# The basic transitions of script states, one by one.
. "$(dirname "$0")/lib.sh"

test_expect_success 'goto follows to the named state and result ends the run' '
	state START.sh <<-\EOS &&
	echo "<goto>NEXT</goto>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>reached next</result>"
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = "reached next"
'

test_expect_success 'the final result of main is printed on stdout, progress on stderr' '
	state START.sh <<-\EOS &&
	echo "<result>the answer</result>"
	EOS
	raymond wf >out 2>err &&
	test "$(cat out)" = "the answer" &&
	grep -q "completed" err
'
test_done
