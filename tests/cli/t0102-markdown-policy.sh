#!/bin/bash
# Markdown states with the fake Claude Code CLI: frontmatter and the
# allowed_transitions policy (reminders, implicit transitions,
# force_implicit, result payloads), and hook context in the next prompt.
# Checks read the fake's log ($FAKE_CLAUDE_DIR/log.jsonl) with grep/sed.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05 RAYMOND_LIMIT_MARGIN=0
unset CLAUDECODE

# jstr KEY / jnum KEY / jlit KEY: the value of the last "KEY" on each input
# line: a string without escaped quotes, a number, or true/false/null.
jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jnum() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\)[,}].*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }

# log N: the N-th invocation; logp LABEL: the invocations whose prompt
# starts with LABEL.
log() { sed -n "${1}p" fake/log.jsonl; }
logp() { grep -F "\"prompt\":\"$1" fake/log.jsonl; }

# run_fails ARGS...: raymond ARGS exits with status 1; its output goes to out
# and err.
run_fails() {
	expect_status 1 "$RAYMOND" "$@" >out 2>err ||
		{ echo "expected exit status 1: raymond $*"; sed "s/^/err: /" err; return 1; }
}

# has TEXT / lacks TEXT / has_line LINE: stdin holds TEXT (or not), or the
# whole line LINE; else say what it holds.
has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
has_line() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qFx -e "$1" || { echo "no line '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# eq WHAT GOT WANT
eq() { [ "$2" = "$3" ] || { echo "$1: expected '$3', got '$2'"; return 1; }; }

# The status of the only run.
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }

# not_run LABEL: no invocation had a prompt starting with LABEL.
not_run() { ! logp "$1" || { echo "$1 should not have run"; return 1; }; }

# reminded N: invocation N re-prompted invocation N-1's session with a
# reminder.
reminded() {
	log "$1" | has "REMINDER: your last reply was not accepted" &&
	eq "$1 resumed" "$(log "$1" | jlit resumed)" true &&
	eq "$1 session" "$(log "$1" | jstr session)" "$(log $(($1 - 1)) | jstr session)" &&
	log "$1" | has "\"--resume\",\"$(log $(($1 - 1)) | jstr session)\""
}

# NEXT and OTHER: states that end the run with "next" or "other".
next_and_other() {
	state NEXT.md <<-\EOS &&
	I am NEXT
	MOCK: reply <result>next</result>
	EOS
	state OTHER.md <<-\EOS
	I am OTHER
	MOCK: reply <result>other</result>
	EOS
}

test_expect_success 'block-style allowed_transitions: a disallowed tag gets a reminder' '
	use_fake && next_and_other &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - tag: goto
	    target: NEXT
	  - tag: result
	---
	I am START
	MOCK: reply <goto>OTHER</goto> || reply <goto>NEXT</goto>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 3 &&
	reminded 2 &&
	not_run "I am OTHER"
'

test_expect_success 'flow-style allowed_transitions work the same' '
	use_fake && next_and_other &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: NEXT}, {tag: result}]
	---
	I am START
	MOCK: reply <goto>OTHER</goto> || reply <goto>NEXT</goto>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 3 &&
	reminded 2 &&
	not_run "I am OTHER"
'

test_expect_success 'a state file with CRLF line ends works, frontmatter included' '
	use_fake && next_and_other &&
	printf "%s\r\n" "---" "allowed_transitions:" "  - tag: goto" "    target: NEXT" \
		"  - tag: result" "model: haiku" "---" "I am START" \
		"MOCK: reply <goto>OTHER</goto> || reply <goto>NEXT</goto>" >wf/START.md &&
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 3 &&
	reminded 2 &&
	not_run "I am OTHER" &&
	eq model "$(log 1 | jstr model)" claude-haiku-4-5-20251001 &&
	! log 1 | has "\"prompt\":\"---"
'

test_expect_success 'an unknown frontmatter field warns once per file' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transition:
	  - { tag: goto, target: START }
	---
	MOCK: reply <goto>START</goto> || reply <goto>START</goto> || reply <result>done</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" done &&
	calls 3 &&
	eq warnings "$(grep -c "unknown frontmatter field" err)" 1 &&
	has "wf/START.md: unknown frontmatter field '\''allowed_transition'\''" <err
'

test_expect_success 'bad YAML stops the run naming the file line' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	model: haiku
	# a comment

	effort: low: high
	---
	MOCK: reply <result>ok</result>
	EOS
	run_fails wf --no-lint &&
	calls 0 &&
	has "wf/START.md" <err &&
	has "frontmatter line 5:" <err &&
	eq status "$(run_status)" failed
'

test_expect_success 'an effort not in the list is an error' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	effort: huge
	---
	MOCK: reply <result>ok</result>
	EOS
	run_fails wf &&
	calls 0 &&
	has "effort '\''huge'\'' is not one of low, medium, high, xhigh, max" <err
'

test_expect_success 'force_implicit without a single non-result transition is an error' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: START}, {tag: result}]
	force_implicit: true
	---
	MOCK: reply <result>ok</result>
	EOS
	run_fails wf &&
	calls 0 &&
	has "force_implicit needs exactly one allowed transition" <err &&
	mkdir wf2 &&
	printf "%s\n" "---" "allowed_transitions: [{tag: result}]" "force_implicit: true" "---" \
		"MOCK: reply <result>ok</result>" >wf2/START.md &&
	run_fails wf2 &&
	calls 0 &&
	has "force_implicit needs exactly one allowed transition" <err
'

test_expect_success 'allowed_transitions written as a mapping rather than a list is an error' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  tag: goto
	  target: A
	---
	MOCK: reply <result>ok</result>
	EOS
	state A.md <<-\EOS &&
	MOCK: reply <result>a</result>
	EOS
	run_fails wf &&
	calls 0 &&
	has "allowed_transitions must be a list" <err
'

test_expect_success 'a reply without a tag is reminded in the same session, listing the allowed tags' '
	use_fake && next_and_other &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: goto, target: NEXT }
	  - { tag: call, target: OTHER, return: NEXT }
	  - { tag: result }
	---
	I am START
	MOCK: reply I forgot the tag || reply <goto>NEXT.md</goto>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 3 &&
	reminded 2 &&
	eq "2 n_history" "$(log 2 | jnum n_history)" 1 &&
	log 2 | has "\"prompt\":\"I am START\\nMOCK: reply I forgot the tag" &&
	log 2 | has "no transition tag in the output" &&
	log 2 | has "\\n1. <goto>NEXT</goto>\\n" &&
	log 2 | has "\\n2. <call return=\\\"NEXT\\\">OTHER</call>\\n" &&
	log 2 | has "\\n3. <result>...</result>\\n" &&
	has "reminding the model (attempt 2 of 3)" <err &&
	logp "I am NEXT"
'

test_expect_success 'a tag the policy does not allow is reminded' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: A}, {tag: result}]
	---
	I am START
	MOCK: reply <goto>B</goto> || reply <goto>A</goto>
	EOS
	state A.md <<-\EOS &&
	I am A
	MOCK: reply <result>a</result>
	EOS
	state B.md <<-\EOS &&
	I am B
	MOCK: reply <result>b</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" a &&
	calls 3 &&
	reminded 2 &&
	log 2 | has "<goto>B</goto> is not one of the allowed transitions" &&
	not_run "I am B"
'

test_expect_success 'two tags are reminded' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: A}, {tag: result}]
	---
	I am START
	MOCK: reply <goto>A</goto> <result>x</result> || reply <goto>A</goto>
	EOS
	state A.md <<-\EOS &&
	I am A
	MOCK: reply <result>a</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" a &&
	calls 3 &&
	reminded 2 &&
	eq "A runs" "$(logp "I am A" | wc -l)" 1
'

test_expect_success 'after three unacceptable replies the run stops, quoting the last one' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: A}, {tag: result}]
	---
	I am START
	MOCK: reply bad one || reply bad two || reply still bad\nno tag here
	EOS
	state A.md <<-\EOS &&
	MOCK: reply <result>a</result>
	EOS
	run_fails wf &&
	calls 3 &&
	reminded 2 &&
	reminded 3 &&
	has "after 3 attempts" <err &&
	has_line "  | still bad" <err &&
	has_line "  | no tag here" <err &&
	lacks "  | bad one" <err &&
	lacks "  | bad two" <err &&
	eq status "$(run_status)" failed
'

test_expect_success 'without a policy a missing tag stops the run after one invocation' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply no tag at all || reply <result>ok</result>
	EOS
	run_fails wf &&
	calls 1 &&
	has "no transition tag" <err &&
	has_line "  | no tag at all" <err &&
	lacks "REMINDER" <fake/log.jsonl
'

test_expect_success 'without a policy two tags stop the run after one invocation' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <goto>A</goto><goto>A</goto> || reply <goto>A</goto>
	EOS
	state A.md <<-\EOS &&
	I am A
	MOCK: reply <result>a</result>
	EOS
	run_fails wf &&
	calls 1 &&
	not_run "I am A" &&
	eq status "$(run_status)" failed
'

test_expect_success 'a single goto is implicit: no tag takes it, with its input rendered' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: goto, target: NEXT, input: "from {{agent_id}}: {{input}}" }
	---
	I am START
	MOCK: reply just words, no tag
	EOS
	state NEXT.md <<-\EOS &&
	I am NEXT got=[{{input}}]
	MOCK: reply <result>next</result>
	EOS
	raymond wf --input "the payload" >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 2 &&
	lacks "REMINDER" <fake/log.jsonl &&
	logp "I am NEXT got=[from main: the payload]\\n"
'

test_expect_success 'a single result entry is not implicit: no tag is reminded' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: result}]
	---
	I am START
	MOCK: reply no tag || reply <result>fine</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" fine &&
	calls 2 &&
	reminded 2
'

test_expect_success 'force_implicit ignores the reply'\''s tags' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: NEXT}]
	force_implicit: true
	---
	I am START
	MOCK: reply <goto>ELSEWHERE</goto>
	EOS
	state NEXT.md <<-\EOS &&
	I am NEXT
	MOCK: reply <result>next</result>
	EOS
	state ELSEWHERE.md <<-\EOS &&
	I am ELSEWHERE
	MOCK: reply <result>elsewhere</result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 2 &&
	not_run "I am ELSEWHERE" &&
	lacks "REMINDER" <fake/log.jsonl
'

test_expect_success 'result payload entries accept only those payloads (trimmed)' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: result, payload: "YES" }
	  - { tag: result, payload: "NO" }
	---
	I am START
	MOCK: reply <result>MAYBE</result> || reply <result> YES </result>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" YES &&
	calls 2 &&
	reminded 2 &&
	log 2 | has "\\n1. <result>YES</result>\\n2. <result>NO</result>\\n" &&
	mkdir wf2 &&
	cp wf/START.md wf2/START.md &&
	sed -i "s/^MOCK: .*/MOCK: reply <result>NO<\/result>/" wf2/START.md &&
	raymond wf2 >out 2>err &&
	eq stdout "$(cat out)" NO &&
	calls 3
'

test_expect_success 'a policy name without extension matches the resolved name, and the reverse' '
	use_fake && next_and_other &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: NEXT}, {tag: goto, target: OTHER.md}]
	---
	I am START
	MOCK: reply <goto>NEXT.md</goto>
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" next &&
	calls 2 &&
	sed -i "s/^MOCK: .*/MOCK: reply <goto>OTHER<\/goto>/" wf/START.md &&
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" other &&
	calls 4 &&
	lacks "REMINDER" <fake/log.jsonl
'

test_expect_success 'a policy name without extension matches a script state too' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions: [{tag: goto, target: CHECK}, {tag: result}]
	---
	MOCK: reply <goto>CHECK</goto>
	EOS
	state CHECK.sh <<-\EOS &&
	echo "<result>checked</result>"
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" checked &&
	calls 1
'

test_expect_success 'frontmatter timeout beats --timeout' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	timeout: 1
	---
	MOCK: hang 300 || reply <result>ok</result>
	EOS
	raymond wf --timeout 600 >out 2>err &&
	eq stdout "$(cat out)" ok &&
	calls 2 &&
	has "no output for the inactivity limit" <err
'

test_expect_success 'a PreTransition hook'\''s additionalContext is appended to the next prompt only' '
	use_fake &&
	state START.md <<-\EOS &&
	I am START
	MOCK: reply <goto>NEXT</goto>
	EOS
	state NEXT.md <<-\EOS &&
	I am NEXT
	MOCK: reply <goto>LAST</goto>
	EOS
	state LAST.md <<-\EOS &&
	I am LAST
	MOCK: reply <result>last</result>
	EOS
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    if ev.state == "START.md" then return { additionalContext = "EXTRA CONTEXT 42" } end
	  end,
	}
	EOS
	raymond wf >out 2>err &&
	eq stdout "$(cat out)" last &&
	calls 3 &&
	logp "I am NEXT\\nMOCK: reply <goto>LAST</goto>\\n\\n\\nEXTRA CONTEXT 42\"" &&
	eq "context once" "$(grep -c "EXTRA CONTEXT 42" fake/log.jsonl)" 1
'

test_done
