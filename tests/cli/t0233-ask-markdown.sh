#!/bin/bash
# <ask> from a markdown state (the fake Claude Code CLI): allowed by the
# frontmatter, the answer reaches the next prompt as {{input}} and
# {{ask_id}}, in the same session.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
log() { sed -n "${1}p" fake/log.jsonl; }

test_expect_success 'a model asks; the answer is {{input}} at next, {{ask_id}} set, the session resumed' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: ask, next: DECIDE, timeout: 1h, timeout_next: LATE }
	---
	Ask whether to merge.
	MOCK: reply Let me check. <ask next="DECIDE" timeout="1h" timeout_next="LATE">Merge now?</ask>
	EOS
	state DECIDE.md <<-\EOS &&
	The person said: {{input}} (to {{ask_id}})
	MOCK: reply <result>decided</result>
	EOS
	state LATE.md <<-\EOS &&
	Nobody answered.
	MOCK: reply <result>late</result>
	EOS
	expect_status 1 raymond wf 2>err &&
	grep -q "declares <ask> transitions in state(s): wf/START.md:6" err &&
	expect_status 2 raymond wf --on-ask pause --workflow-id m >json 2>/dev/null &&
	calls 1 &&
	grep -q "\"prompt\": \"Merge now?\"" json &&
	ask=$(sed -n "s/.*\"ask_id\": \"\\(.*\\)\",/\\1/p" json | head -1) &&
	s1=$(log 1 | jstr session) &&
	raymond --resume m --input "yes, merge" --quiet >out &&
	test "$(cat out)" = decided &&
	calls 2 &&
	log 2 | grep -qF "\"prompt\":\"The person said: yes, merge (to $ask)" &&
	log 2 | grep -qF "\"--resume\",\"$s1\"" &&
	test "$(log 2 | jstr session)" = "$s1"
'

test_expect_success 'an <ask> the frontmatter does not allow gets a reminder, like any other tag' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: result }
	---
	Finish.
	MOCK: reply <ask next="START">may I?</ask> || reply <result>done</result>
	EOS
	raymond wf --on-ask pause --quiet >out 2>err &&
	test "$(cat out)" = done &&
	calls 2 &&
	log 2 | grep -q "<ask>...</ask> is not one of the allowed transitions"
'

test_done
