#!/bin/bash
# A turn that reaches max_turns: the CLI ends it with a result of subtype
# error_max_turns; the state fails at once, saying so, and is not retried.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE IS_SANDBOX

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# out-of-turns: a CLI that logs its argv and ends each turn as Claude Code
# 2.1.197 does when --max-turns runs out (exit status STATUS).
out_of_turns() {
	cat >out-of-turns <<-EOS &&
	#!/bin/sh
	cat >/dev/null
	echo "\$*" >>"$PWD/runs"
	echo '{"type":"system","subtype":"init","session_id":"s1"}'
	echo '{"type":"assistant","message":{"content":[{"type":"text","text":"still at work"}]},"session_id":"s1"}'
	echo '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":4,"total_cost_usd":0.25,"session_id":"s1"}'
	exit $1
	EOS
	chmod +x out-of-turns
}

for status in 0 1; do
test_expect_success "the state fails at once, naming max_turns and how to raise it (exit status $status)" '
	out_of_turns '$status' &&
	state START.md <<-\EOS &&
	---
	max_turns: 3
	---
	MOCK: reply <result>never</result>
	EOS
	expect_status 1 raymond --claude "$PWD/out-of-turns" wf >out 2>err &&
	has "raymond: error: wf/START.md (agent main): START.md reached max_turns (3) before it finished: the model was still at work when its turns ran out" <err &&
	has "hint: raise max_turns in START.md (or split the work into smaller states), then: raymond --resume $(run_id)" <err &&
	lacks retrying <err &&
	test "$(wc -l <runs)" -eq 1 &&
	grep -q -- "--max-turns 3 " runs &&
	raymond --status "$(run_id)" --json | grep -q "\"cost\":0.25"
'
done

test_done
