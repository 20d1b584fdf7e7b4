#!/bin/bash
# Frontmatter values are the strings the author wrote (007, yes, off stay
# text in allowed_transitions); only fields whose schema is a number or a
# boolean are typed, and a value of the wrong type is a clear error.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

test_expect_success 'a target written 007 names the state 007' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - {tag: goto, target: 007}
	---
	Go on.
	MOCK: reply <goto>007</goto>
	EOS
	state 007.sh <<-\EOS &&
	echo "<result>agent 007</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = "agent 007" &&
	calls 1
'

test_expect_success 'an implicit transition to 007 takes its input as written' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: 007, input: 010}]
	---
	Go on.
	MOCK: reply no tag here
	EOS
	state 007.sh <<-\EOS &&
	echo "<result>got $RAYMOND_INPUT</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = "got 010"
'

test_expect_success 'payloads written yes and off are those words, not booleans' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - {tag: result, payload: yes}
	  - {tag: result, payload: off}
	---
	Answer.
	MOCK: reply <result>true</result> || reply <result>yes</result>
	EOS
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = yes &&
	calls 2 &&
	grep -qF "<result>yes</result>" fake/log.jsonl &&
	grep -qF "<result>off</result>" fake/log.jsonl
'

test_expect_success 'a plain yes in a boolean field is still true' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: NEXT}]
	force_implicit: yes
	timeout: 30
	---
	Go on.
	MOCK: reply <goto>START</goto>
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>next</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = next
'

# refuses FIELD-LINE MESSAGE: a START.md with FIELD-LINE in its
# frontmatter fails the run with MESSAGE before the model is asked (with
# --no-lint: lint would refuse the workflow before the run does).
refuses() {
	use_fake &&
	printf -- "---\n%s\n---\nHello.\nMOCK: reply <result>x</result>\n" "$1" | state START.md &&
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	grep -qxF "raymond: error: wf/START.md (agent main): wf/START.md: $2" err || { cat err; return 1; }
	test ! -e fake/log.jsonl
}

test_expect_success 'wrong types are still clear errors' '
	refuses "timeout: soon" "frontmatter field '"'"'timeout'"'"' must be a number, got string" &&
	rm -rf .raymond &&
	refuses "force_implicit: \"yes\"" "frontmatter field '"'"'force_implicit'"'"' must be a boolean, got string" &&
	rm -rf .raymond &&
	refuses "model: [a, b]" "frontmatter field '"'"'model'"'"' must be a string, got table"
'

test_expect_success 'a hook'"'"'s declared field of the wrong type is a clear error, not ignored' '
	refuses "max_visits: many" "frontmatter field '"'"'max_visits'"'"' must be a number, got string" &&
	rm -rf .raymond &&
	refuses "evaluate: haiku" "frontmatter field '"'"'evaluate'"'"' must be a table, got string"
'

test_done
