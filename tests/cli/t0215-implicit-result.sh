#!/bin/bash
# The implicit result: a single allowed <result> with a fixed payload is
# taken when the reply has no tag, its payload rendered like the prompt;
# lint reports it, the diagram draws it, and a bad payload is refused.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05 RAYMOND_LIMIT_MARGIN=0
unset CLAUDECODE

log() { sed -n "${1}p" fake/log.jsonl; }
has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
eq() { [ "$2" = "$3" ] || { echo "$1: expected '$3', got '$2'"; return 1; }; }

test_expect_success 'a single result with a fixed payload is taken when the reply has no tag' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: "done"}]
	---
	I am START
	MOCK: reply just words, no tag
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" done &&
	calls 1 &&
	lacks "REMINDER" <fake/log.jsonl
'

test_expect_success 'the payload is rendered like the prompt' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: result, payload: "checked {{input}} for {{agent_id}}" }
	---
	I am START
	MOCK: reply no tag
	EOS
	raymond wf --input "the file" >out 2>err &&
	eq stdout "$(cat out)" "checked the file for main"
'

test_expect_success 'a written result meets the rendered payload, as the reminder shows it' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: "checked {{input}}"}]
	---
	I am START
	MOCK: reply <result>wrong</result> || reply <result>checked the file</result>
	EOS
	raymond wf --input "the file" >out 2>err &&
	eq stdout "$(cat out)" "checked the file" &&
	calls 2 &&
	log 2 | has "1. <result>checked the file</result>"
'

test_expect_success 'an empty payload is fixed too' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: ""}]
	---
	I am START
	MOCK: reply no tag
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" "" &&
	calls 1
'

test_expect_success 'an implicit result returns to the caller with its payload' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <call return="AFTER">CHILD</call>
	EOS
	state CHILD.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: approved}]
	---
	I am CHILD
	MOCK: reply looks fine to me
	EOS
	state AFTER.md <<-\EOS &&
	I am AFTER got=[{{input}}]
	MOCK: reply <result>after</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" after &&
	calls 3 &&
	log 3 | has "I am AFTER got=[approved]"
'

test_expect_success 'a reply with another payload is reminded, then no tag takes the fixed one' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: done}]
	---
	I am START
	MOCK: reply <result>something else</result> || reply no tag this time
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" done &&
	calls 2 &&
	log 2 | has "REMINDER"
'

test_expect_success 'force_implicit takes the fixed result whatever the reply says' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: done}]
	force_implicit: true
	---
	I am START
	MOCK: reply <result>other</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" done &&
	calls 1
'

test_expect_success 'a payload that is a list or a mapping is refused, naming the file' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result, payload: [a, b]}]
	---
	I am START
	MOCK: reply no tag
	EOS
	expect_status 1 raymond wf >out 2>err &&
	has "wf/START.md:2: error: allowed_transitions[1] payload must be a string, got a list [invalid-frontmatter]" <err &&
	calls 0 &&
	printf -- "---\nallowed_transitions: [{tag: result, payload: {a: 1}}]\n---\nI am START\n" >wf/START.md &&
	expect_status 1 raymond wf >out 2>err &&
	has "wf/START.md:2: error: allowed_transitions[1] payload must be a string, got a mapping [invalid-frontmatter]" <err &&
	expect_status 1 raymond wf --no-lint >out 2>err &&
	has "wf/START.md: allowed_transitions[1] payload must be a string, got a mapping" <err &&
	calls 0
'

test_expect_success 'lint reports the implicit result; force_implicit without a payload is an error' '
	printf -- "---\nallowed_transitions:\n  - { tag: result, payload: done }\n---\nWork.\n" | state START.md &&
	raymond lint wf --level info >out 2>err &&
	has "wf/START.md:2: info: the one allowed transition (<result>done</result>) is taken when the reply has no tag [implicit-transition]" <out &&
	printf -- "---\nforce_implicit: true\nallowed_transitions:\n  - { tag: result }\n---\nWork.\n" >wf/START.md &&
	expect_status 1 raymond lint wf >out 2>err &&
	has "wf/START.md:2: error: force_implicit needs exactly one allowed transition, and a <result> with a fixed payload, e.g. {tag: result, payload: done} [force-implicit-invalid]" <out
'

test_expect_success 'the diagram draws the implicit result with its payload' '
	printf -- "---\nallowed_transitions:\n  - { tag: result, payload: done }\n---\nWork.\n" | state START.md &&
	raymond diagram wf >out 2>err &&
	has "s_START_md -->|\"result: done\"| __end__" <out
'

test_done
