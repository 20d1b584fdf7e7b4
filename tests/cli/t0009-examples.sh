#!/bin/bash
# The example workflows in workflows/ run as their README says.
. "$(dirname "$0")/lib.sh"

test_expect_success 'workflows/hello greets, counts down and ends' '
	raymond "$TESTS_TOP/workflows/hello" --input you >out 2>err &&
	printf "hello, you\n3...\n2...\n1...\nliftoff\n" >expect &&
	cmp expect out &&
	grep -q "completed: 5 steps" err
'

test_expect_success 'workflows/fanout runs one worker per word in parallel' '
	raymond "$TESTS_TOP/workflows/fanout" --input "one three fifteen" --quiet >out &&
	tail -1 out >result &&
	test "$(cat result)" = "fifteen has 7 letters;one has 3 letters;three has 5 letters" &&
	test "$(grep -c "^main_worker[123] finished" out)" = 3 &&
	ls fanout-out/main_worker1.txt fanout-out/main_worker2.txt fanout-out/main_worker3.txt
'
test_done
