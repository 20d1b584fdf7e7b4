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
test_expect_success 'workflows/report calls workflows/wordcount and reports its result' '
	raymond "$TESTS_TOP/workflows/report" --input "the quick brown fox jumps" >out 2>err &&
	printf "asking ../wordcount about: the quick brown fox jumps\nreport: 5 words, longest: quick\n" >expect &&
	cmp expect out &&
	grep -q "START.sh -> call-workflow ../wordcount (1_START.sh) (return to REPORT.sh)" err &&
	grep -q "completed: 4 steps" err &&
	raymond "$TESTS_TOP/workflows/wordcount" --input "a bb" --quiet >out &&
	test "$(cat out)" = "2 words, longest: bb"
'
test_expect_success 'workflows/approval pauses for a person, is refused without --on-ask pause, and goes on with the answer' '
	expect_status 1 raymond "$TESTS_TOP/workflows/approval" --input "bump the version" 2>err &&
	grep -q "declares <ask> transitions in state(s): .*1_START.sh:9" err &&
	grep -q "hint: use --on-ask=pause" err &&
	expect_status 2 raymond "$TESTS_TOP/workflows/approval" --input "bump the version" --on-ask pause >json 2>err &&
	grep -q "\"status\": \"asking\"" json &&
	grep -q "Approve the change .*bump the version" json &&
	id=$(sed -n "s/.*\"run_id\": \"\(.*\)\".*/\1/p" json) &&
	test ! -e approval-out/applied &&
	raymond --resume "$id" --input "yes, looks right" --quiet >out &&
	test "$(cat out)" = "approved and applied: bump the version" &&
	test -e approval-out/applied &&
	grep -qx "review: yes, looks right" approval-out/change.txt
'
test_expect_success 'workflows/fan-out-join joins the workers and summarises, a failure included' '
	raymond "$TESTS_TOP/workflows/fan-out-join" --input "one three 4x fifteen" >out 2>err &&
	printf "3 measured, 1 failed:\n  one has 3 letters\n  three has 5 letters\n  fifteen has 7 letters\nforked one worker per word\n" >expect &&
	cmp expect out &&
	grep -q "join of 4 workers (wait all): 3 ok, 1 failed, 0 cancelled; main_summar5 starts at SUMMARY.sh" err &&
	grep -q "completed: 7 steps" err
'

# Copy example NAME to ./NAME and append a MOCK line to each listed prompt,
# so the fake claude plays the model: script STATE "MOCK: ..." ...
copy_example() {
	cp -r "$TESTS_TOP/workflows/$1" "$1"
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake
	mkdir -p fake
}
script() { printf '\n%s\n' "$2" >>"$1"; }

test_expect_success 'workflows/review-loop plans, implements, loops on review, then commits' '
	copy_example review-loop &&
	script review-loop/1_START.md "MOCK: reply plan written" &&
	script review-loop/IMPLEMENT.md "MOCK: reply implemented" &&
	script review-loop/REVIEW.md "MOCK: reply <goto>IMPLEMENT</goto> || reply <goto>COMMIT</goto>" &&
	script review-loop/COMMIT.md "MOCK: reply <result>Add a verbose flag</result>" &&
	raymond review-loop --input "add a verbose flag" >out 2>err &&
	test "$(cat out)" = "Add a verbose flag" &&
	test "$(grep -c "IMPLEMENT.md -> goto CHECK.sh" err)" = 2 &&
	grep -q "1_START.md -> reset IMPLEMENT.md" err &&
	grep -q "REVIEW.md.*-> goto COMMIT.md" err &&
	grep -q "no tests found" fake/log.jsonl
'

test_expect_success 'workflows/classify passes the message on implicitly and routes on the verdict' '
	copy_example classify &&
	script classify/1_START.md "MOCK: reply noted" &&
	script classify/CLASSIFY.md "MOCK: reply <result>NEGATIVE</result>" &&
	script classify/APOLOGISE.md "MOCK: reply <result>We are sorry.</result>" &&
	raymond classify --input "my order broke" >out 2>err &&
	test "$(cat out)" = "We are sorry." &&
	grep -q "1_START.md -> function CLASSIFY.md (return to ROUTE.sh)" err &&
	grep -q "ROUTE.sh -> goto APOLOGISE.md" err &&
	grep "my order broke" fake/log.jsonl | grep -q "claude-haiku"
'

test_expect_success 'workflows/fanout-md forks one summariser per file and collects them' '
	copy_example fanout-md &&
	script fanout-md/1_START.md "MOCK: bash mkdir -p summaries && printf \"a.md\\nb.md\\n\" >summaries/expected.txt => <fork next=\"COLLECT.sh\" file=\"a.md\">SUMMARISE</fork><fork next=\"COLLECT.sh\" file=\"b.md\">SUMMARISE</fork>" &&
	script fanout-md/SUMMARISE.md "MOCK: bash echo about {{file}} >summaries/{{agent_id}}.txt => <result>done</result>" &&
	raymond fanout-md >out 2>err &&
	test "$(cat out)" = "2 of 2 summaries written to summaries/" &&
	grep -qx "about a.md" summaries/main_summar1.txt &&
	grep -qx "about b.md" summaries/main_summar2.txt
'

test_expect_success 'workflows/review-loop stops reviewing after max_visits' '
	copy_example review-loop &&
	script review-loop/1_START.md "MOCK: reply plan written" &&
	script review-loop/IMPLEMENT.md "MOCK: reply implemented" &&
	script review-loop/REVIEW.md "MOCK: reply <goto>IMPLEMENT</goto>" &&
	script review-loop/COMMIT.md "MOCK: reply <result>Capped</result>" &&
	raymond review-loop --input "loop forever" >out 2>err &&
	test "$(cat out)" = Capped &&
	test "$(grep -c "REVIEW.md.*-> goto IMPLEMENT.md" err)" = 3 &&
	grep -q "REVIEW.md -> goto COMMIT.md" err
'

test_expect_success 'workflows/evaluator-gate lets a cheap evaluator route, and max_visits ends it' '
	copy_example evaluator-gate &&
	script evaluator-gate/1_START.md "MOCK: bash echo first > poem.txt => not a limerick\\nMOCK: reply NO" &&
	script evaluator-gate/REVISE.md "MOCK: bash echo second > poem.txt => a limerick now\\nMOCK: reply YES" &&
	raymond evaluator-gate --input cats >out 2>err &&
	test "$(cat out)" = second &&
	grep -q "1_START.md -> goto REVISE.md" err &&
	grep -q "REVISE.md -> goto DONE.sh" err &&
	test "$(grep -c "claude-haiku" fake/log.jsonl)" = 2
'

test_expect_success 'workflows/test-router sends IMPLEMENT back while the tests fail' '
	copy_example test-router &&
	script test-router/1_START.md "MOCK: reply <goto>IMPLEMENT</goto>" &&
	script test-router/IMPLEMENT.md "MOCK: reply <goto>COMMIT</goto>" &&
	script test-router/COMMIT.md "MOCK: reply <result>fixed it</result>" &&
	printf "%s\n" "n=\$(cat runs 2>/dev/null || echo 0); echo \$((n + 1)) >runs" \
	    "[ \$n -ge 1 ] || { echo FAILED: test_widget; exit 1; }" >check.sh &&
	RAYMOND_TEST_COMMAND="sh check.sh" raymond test-router --input "fix the widget" >out 2>err &&
	test "$(cat out)" = "fixed it" &&
	test "$(cat runs)" = 2 &&
	test "$(grep -c "^\[main\] IMPLEMENT.md -> goto IMPLEMENT.md" err)" = 1 &&
	grep -q "^\[main\] test-router/hooks.lua:[0-9]* PreTransition: routed IMPLEMENT.md -> goto IMPLEMENT.md: the tests fail (exit 1)$" err &&
	grep -q "FAILED: test_widget" fake/log.jsonl
'

test_expect_success 'workflows/release-gate denies git push outside RELEASE.md and lets it run there' '
	copy_example release-gate &&
	git init -q --bare remote.git &&
	git init -q work &&
	git -C work -c user.name=t -c user.email=t@t commit -q --allow-empty -m first &&
	git -C work remote add origin "$PWD/remote.git" &&
	mv release-gate work/ &&
	script work/release-gate/1_START.md "MOCK: bash git push origin HEAD:refs/heads/main => <goto>RELEASE</goto>" &&
	script work/release-gate/RELEASE.md "MOCK: bash git push origin HEAD:refs/heads/main => <result>pushed</result>" &&
	(cd work && raymond release-gate --input "fix the typo" >../out 2>../err) &&
	test "$(cat out)" = pushed &&
	grep -q "^\[main\] 1_START.md: Bash \"git push origin HEAD:refs/heads/main\" denied by release-gate/hooks.lua:[0-9]*: pushing is only allowed in RELEASE" err &&
	grep -q "pushing is only allowed in RELEASE" fake/events.jsonl &&
	test "$(git -C remote.git for-each-ref | wc -l)" = 1
'

test_expect_success 'workflows/team-budget switches to haiku once half the budget is spent' '
	copy_example team-budget &&
	script team-budget/1_START.md "MOCK: reply <goto>REFINE</goto> || reply <goto>REFINE</goto> || reply <goto>REFINE</goto> || reply <result>done</result>" &&
	script team-budget/REFINE.md "MOCK: reply <goto>1_START</goto>" &&
	raymond team-budget --input tea --budget 0.04 >out 2>err &&
	test "$(cat out)" = done &&
	grep -q "switching to haiku" err &&
	sed -n "1,3p" fake/log.jsonl | grep -c "claude-sonnet" | grep -qx 3 &&
	tail -1 fake/log.jsonl | grep -q "claude-haiku"
'

test_expect_success 'workflows/word-stats.yaml calls the folder workflow wordcount/ and reports its result' '
	raymond "$TESTS_TOP/workflows/word-stats.yaml" --input "the quick brown fox" >out 2>err &&
	printf "counting the words of: the quick brown fox\nword stats: 4 words, longest: quick\n" >expect &&
	cmp expect out &&
	grep -q "START.sh -> call-workflow ../wordcount (1_START.sh) (return to REPORT.sh)" err &&
	raymond lint "$TESTS_TOP/workflows/word-stats.yaml" >lint.out &&
	test "$(cat lint.out)" = "2 info" &&
	raymond diagram "$TESTS_TOP/workflows/word-stats.yaml" >got.mmd &&
	diff -u "$TESTS_TOP/tests/cli/diagram/word-stats.mmd" got.mmd
'

test_expect_success 'workflows/todo-report.yaml counts TODO comments and has the model report them' '
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake &&
	mkdir -p fake src &&
	printf "a # TODO one\nb # TODO two\n" >src/a.sh &&
	sed "s|^      matter most, one line each, starting with file:line.\$|&\n      MOCK: bash echo src/a.sh:1 >todo-report.md => done|" \
	    "$TESTS_TOP/workflows/todo-report.yaml" >todo.yaml &&
	raymond todo.yaml >out 2>err &&
	test "$(tail -1 out)" = "todo-report.md written" &&
	grep -q "^[0-9]* TODO comments$" out &&
	grep -qx "src/a.sh:1" todo-report.md &&
	mkdir empty &&
	(cd empty && raymond "$TESTS_TOP/workflows/todo-report.yaml" >../out 2>../err) &&
	printf "0 TODO comments\nno TODO comments\n" >want &&
	cmp want out &&
	test "$(wc -l <fake/log.jsonl)" = 1
'

test_done
