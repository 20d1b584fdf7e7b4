#!/bin/bash
# A markdown state's reply as text: its <print> tags reach stdout as a
# script's do, and every text operation on it (tags, the reminder and
# policy path, PostState hooks, error quotes, templates) is linear, so
# 100,000 spaces in a reply take milliseconds.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# within SECONDS CMD...: CMD ends within SECONDS (a wide ceiling: the work
# takes milliseconds; quadratic code would take minutes).
within() {
	limit=$1; shift
	t0=$(date +%s)
	"$@" || return 1
	took=$(($(date +%s) - t0))
	[ "$took" -le "$limit" ] || { echo "took ${took}s, more than ${limit}s: $*"; return 1; }
}

# sp N: N spaces.
sp() { head -c "$1" /dev/zero | tr '\0' ' '; }

test_expect_success '<print> in a markdown reply is shown once, in order, before the transition' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply one <print>first</print> two <print>second\nline</print> <goto>B.sh</goto>
	EOS
	state B.sh <<-\EOS &&
	echo "<print>from B</print><result>done</result>"
	EOS
	raymond wf >out 2>err &&
	printf "first\nsecond\nline\nfrom B\ndone\n" >want &&
	cmp want out || { echo "stdout:"; cat out; false; }
'

test_expect_success 'a reminded reply prints too; a reply whose tags do not parse prints nothing' '
	use_fake &&
	cat >wf.md <<-\EOS &&
	---
	allowed_transitions:
	  - { tag: result }
	---
	MOCK: reply <print>try 1</print> no tag || reply <print>try 2</print> <goto a=b>X</goto> || reply <print>try 3</print><result>ok</result>
	EOS
	mkdir wf && mv wf.md wf/START.md &&
	# The MOCK line (the replies) is in the prompt, where lint reads <goto>X</goto>.
	raymond wf --no-lint >out 2>err &&
	printf "try 1\ntry 3\nok\n" >want &&
	cmp want out || { echo "stdout:"; cat out; false; }
'

test_expect_success '100,000 spaces in a markdown reply, its tags, payloads, reminders and hooks take milliseconds' '
	# (an opening tag holds at most 64 KiB, so the input= attribute has 50,000)
	use_fake &&
	s=$(sp 100000) &&
	mkdir wf &&
	printf "MOCK: reply w%sw <print>p%sq%s</print> <goto>B.md%s</goto>%s\n" "$s" "$s" "$s" "$s" "$s" >wf/START.md &&
	printf -- "---\nallowed_transitions:\n  - { tag: goto, target: C }\n  - { tag: result }\n---\n{{input}}%s{{input}}\nMOCK: reply no tag%s || reply <goto input=\"a%s\">C.md%s</goto>%s\n" \
		"$s" "$s" "$(sp 50000)" "$s" "$s" >wf/B.md &&
	printf "{{input}}%s\nMOCK: reply <result>%sx%s</result>%s\n" "$s" "$s" "$s" "$s" >wf/C.md &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostState = function(ev)
	    local t = raymond.trim(ev.output or "")
	    raymond.log("reply of " .. #t .. " bytes after trimming")
	  end,
	}
	EOS
	within 20 raymond wf >out 2>err &&
	grep -qx x out &&
	grep -q "reminding the model" err &&
	grep -c "^p *q *$" out
'

test_expect_success '100,000 spaces in a reply without a usable tag: the error quotes it quickly' '
	use_fake &&
	mkdir wf &&
	printf "MOCK: reply %sprose%s and more%s\n" "$(sp 100000)" "$(sp 100000)" "$(sp 100000)" >wf/START.md &&
	expect_status 1 within 20 "$RAYMOND" wf >out 2>err &&
	grep -q "no transition tag in the output" err
'

test_done
