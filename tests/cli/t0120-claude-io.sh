#!/bin/bash
# The Claude Code invocation with the fake CLI: prompts of any size go on
# stdin, a usage limit or a session error is only the CLI's own error, a
# stream-json line over the cap is an error that keeps memory bounded, and
# refusals that cannot succeed are not retried.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05 RAYMOND_LIMIT_MARGIN=0
unset CLAUDECODE IS_SANDBOX

run_fails() {
	expect_status 1 "$RAYMOND" "$@" >out 2>err ||
		{ echo "expected exit status 1: raymond $*"; sed "s/^/err: /" err; return 1; }
}

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }

# A prompt of 1 MiB: the text of a state, or a payload rendered into it.
big() { head -c "$1" /dev/zero | tr '\0' a; }

# model_saw C N: the prompts the fake logged hold at least N bytes C.
model_saw() {
	n=$(tr -cd "$1" <fake/log.jsonl | wc -c) &&
	{ [ "$n" -ge "$2" ] || { echo "the model saw $n of $2 $1"; false; }; }
}

# call_payload RET: START calls SUB.sh, whose <result> of $N bytes "b"
# returns to RET.
call_payload() {
	state START.sh <<-EOS &&
	echo "<call return=\"$1\">SUB.sh</call>"
	EOS
	state SUB.sh <<-\EOS
	echo "<result>$(head -c "$N" /dev/zero | tr "\000" b)</result>"
	EOS
}

test_expect_success 'a 1 MiB prompt reaches the CLI whole, on stdin' '
	use_fake &&
	{ big 1048576 && printf "\nMOCK: reply <result>big ok</result>\n"; } >wf.md &&
	mkdir wf && mv wf.md wf/START.md &&
	raymond wf >out 2>err &&
	grep -qx "big ok" out &&
	calls 1 &&
	grep -q "\"stdin_is_devnull\":false" fake/log.jsonl &&
	model_saw a 1048576
'

test_expect_success 'a 1 MiB <result> payload rendered into a prompt works' '
	use_fake &&
	call_payload B.md &&
	state B.md <<-\EOS &&
	{{result}}
	MOCK: reply <result>payload ok</result>
	EOS
	N=1048576 raymond wf >out 2>err &&
	grep -qx "payload ok" out &&
	model_saw b 1048576
'

test_expect_success 'a script gets a payload of any size: in RAYMOND_INPUT_FILE, and in RAYMOND_INPUT when it fits' '
	call_payload B.sh &&
	state B.sh <<-\EOS &&
	echo "$RAYMOND_INPUT_FILE" >>input-files
	echo "<result>${#RAYMOND_INPUT} ${RAYMOND_RESULT+result} $(wc -c <"$RAYMOND_INPUT_FILE") $(tr -cd b <"$RAYMOND_INPUT_FILE" | wc -c)</result>"
	EOS
	N=131056 raymond wf >out 2>err &&
	grep -qx "131056 result 131056 131056" out &&
	lacks warning <err &&
	N=1048576 raymond wf >out 2>err &&
	grep -qx "0  1048576 1048576" out &&
	has "raymond: warning: [main] B.sh: the payload is 1048576 bytes, more than an environment variable holds (131056); it is only in \$RAYMOND_INPUT_FILE" <err &&
	test "$(wc -l <input-files)" -eq 2 &&
	while read -r f; do
		case $f in /*/raymond-input-*/main) ;; *) echo "odd path $f"; false ;; esac &&
		{ ! test -e "$(dirname "$f")" || { echo "left behind: $f"; false; }; }
	done <input-files
'

test_expect_success 'a reply that merely says "hit your limit" is a reply, not a usage limit' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply You have hit your session limit · resets 4am (UTC). <result>words only</result>
	EOS
	raymond wf --no-wait >out 2>err &&
	grep -qx "words only" out &&
	calls 1 &&
	lacks "usage limit" <err
'

test_expect_success 'a reply that says "already in use" or "No conversation found" is a reply, not a session error' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply Port 8080 is already in use; No conversation found in the log. <result>both said</result>
	EOS
	raymond wf >out 2>err &&
	grep -qx "both said" out &&
	calls 1 &&
	lacks "session id" <err
'

test_expect_success 'a stream-json line over the 8 MiB cap fails the state at once, with bounded memory' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: long 64000000
	EOS
	if [ -x /usr/bin/time ]; then
		expect_status 1 /usr/bin/time -f "maxrss %M" -o rss "$RAYMOND" wf >out 2>err
	else
		run_fails wf
	fi &&
	has "raymond: error: wf/START.md (agent main): the Claude Code CLI printed a stream-json line longer than 8 MiB, raymond'"'"'s cap on one line; the turn was stopped" <err &&
	lacks retrying <err &&
	lacks "internal error" <err &&
	calls 1 &&
	if [ -f rss ]; then
		kb=$(sed -n "s/^maxrss //p" rss) &&
		{ [ "$kb" -lt 102400 ] || { echo "raymond peaked at $kb KiB"; false; }; }
	fi
'

test_expect_success 'output cut off in the middle of a line is named as such' '
	cat >cut-claude <<-\EOS &&
	#!/bin/sh
	echo "{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s1\"}"
	printf "{\"type\":\"assistant\",\"message\":{\"content\":[{\"type\":\"text\",\"text\":\"xxxx"
	EOS
	chmod +x cut-claude &&
	state START.md <<-\EOS &&
	hi
	EOS
	run_fails wf --claude ./cut-claude &&
	has "Claude Code failed 3 times: the Claude Code CLI'"'"'s output ended in the middle of a stream-json line (after 69 bytes of it), without a result" <err
'

test_expect_success 'the CLI refusing --dangerously-skip-permissions as root is not retried' '
	if [ "$(id -u)" != 0 ]; then echo "not root: nothing to refuse"; exit 0; fi &&
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>never</result>
	EOS
	run_fails wf --dangerously-skip-permissions &&
	has "raymond: error: wf/START.md (agent main): the Claude Code CLI refused to start: --dangerously-skip-permissions cannot be used with root/sudo privileges for security reasons" <err &&
	has "hint: run raymond as a user other than root, or without --dangerously-skip-permissions and a state'"'"'s permission_mode: bypassPermissions (inside a container or sandbox, set IS_SANDBOX=1)" <err &&
	lacks retrying <err &&
	IS_SANDBOX=1 raymond --resume "$(run_id)" --dangerously-skip-permissions >out &&
	grep -qx never out
'

test_expect_success 'an option the CLI does not know, or a value it does not accept, is not retried' '
	cat >claude-wrapper <<-EOS &&
	#!/bin/sh
	echo run >>"$PWD/runs"
	exec "$FAKE" \$EXTRA "\$@"
	EOS
	chmod +x claude-wrapper &&
	state START.md <<-\EOS &&
	MOCK: reply <result>never</result>
	EOS
	EXTRA=--bogus-flag RAYMOND_CLAUDE=$PWD/claude-wrapper run_fails wf &&
	has "raymond: error: wf/START.md (agent main): the Claude Code CLI refused to start: error: unknown option '"'"'--bogus-flag'"'"'" <err &&
	has "hint: the Claude Code CLI is older or newer than raymond expects; install a current one (npm install -g @anthropic-ai/claude-code)" <err &&
	lacks retrying <err &&
	test "$(wc -l <runs)" -eq 1 &&
	EXTRA=--output-format=bogus RAYMOND_CLAUDE=$PWD/claude-wrapper run_fails wf &&
	has "the Claude Code CLI refused to start: error: option '"'"'--output-format <format>'"'"' argument '"'"'bogus'"'"' is invalid. Allowed choices are text, json, stream-json." <err &&
	has "hint: an option raymond gave the Claude Code CLI has a value it does not accept; check the model and effort (command line and frontmatter) and the CLI'"'"'s version" <err &&
	lacks retrying <err &&
	test "$(wc -l <runs)" -eq 2
'

test_done
