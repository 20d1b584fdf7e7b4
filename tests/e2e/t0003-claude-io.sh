#!/bin/bash
# The Claude Code invocation with the real CLI against the mock API: a
# 1 MiB prompt goes on stdin, words about a limit in a reply are a reply,
# and refusals the CLI makes before it starts are not retried.
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1
export RAYMOND_RETRY_DELAY=0.1

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

test_expect_success 'a 1 MiB prompt reaches the model whole' '
	{ head -c 1048576 /dev/zero | tr "\000" a && printf "\nMOCK: reply <result>big io1</result>\n"; } >START.md &&
	mkdir wf && mv START.md wf/ &&
	raymond wf --quiet >out 2>err &&
	same "$(cat out)" "big io1" &&
	n=$(jsonl "$(mock_log)" "d.prompt && d.prompt.includes(\"big io1\") && String(d.prompt.split(\"a\").length - 1)" | tail -1) &&
	{ [ "$n" -ge 1048576 ] || { echo "the model saw $n of 1048576 a"; false; }; }
'

test_expect_success 'a reply saying "hit your limit" is a reply, not a usage limit' '
	state START.md <<-\EOS &&
	MOCK: reply You have hit your session limit · resets 4am (UTC). <result>words io2</result>
	EOS
	raymond wf --no-wait >out 2>err &&
	same "$(cat out)" "words io2" &&
	lacks "usage limit" <err
'

test_expect_success '--dangerously-skip-permissions as root: the refusal is not retried' '
	if [ "$(id -u)" != 0 ]; then echo "not root: nothing to refuse"; exit 0; fi &&
	state START.md <<-\EOS &&
	MOCK: reply <result>never io3</result>
	EOS
	before=$(mock_requests) &&
	expect_status 1 env -u IS_SANDBOX "$RAYMOND" wf --dangerously-skip-permissions >out 2>err &&
	has "raymond: error: wf/START.md (agent main): the Claude Code CLI refused to start: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" <err &&
	lacks retrying <err &&
	same "$(mock_requests)" "$before"
'

test_expect_success 'an unknown option: the refusal is not retried' '
	cat >claude-wrapper <<-EOS &&
	#!/bin/sh
	echo run >>"$PWD/runs"
	exec "$RAYMOND_CLAUDE" --bogus-flag "\$@"
	EOS
	chmod +x claude-wrapper &&
	state START.md <<-\EOS &&
	MOCK: reply <result>never io4</result>
	EOS
	expect_status 1 "$RAYMOND" wf --claude "$PWD/claude-wrapper" >out 2>err &&
	has "raymond: error: wf/START.md (agent main): the Claude Code CLI refused to start: error: unknown option '"'"'--bogus-flag'"'"'" <err &&
	lacks retrying <err &&
	same "$(wc -l <runs)" 1
'

test_done
