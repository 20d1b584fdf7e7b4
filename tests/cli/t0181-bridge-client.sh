#!/bin/bash
# `raymond hook-bridge` when anything goes wrong: one line on stderr
# saying what, "; the tool call is denied" and exit 2, since the Claude
# Code CLI runs the tool on any other status; with --warn the same line
# ends "; allowed because the hook says on_error = "warn"" and the exit
# status is 0, with nothing on stdout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bridge.sh"

# both WHAT CMD...: CMD (a bridge call, stdin from ./ev) denies with WHAT;
# with --warn added it allows with WHAT.
both() {
	what=$1; shift
	expect_status 2 "$@" <ev >out 2>err && test ! -s out && denied "$what" &&
	expect_status 0 "$@" --warn <ev >out 2>err && warned "$what"
}

# serve_raw HEX: a peer at ./s.sock that answers any request with the
# bytes HEX, or closes without a word for -.
serve_raw() {
	"$PEER" serve "$PWD/s.sock" "$1" >peer.log 2>&1 &
	wait_for_line peer.log "^listening$"
}

test_expect_success 'RAYMOND_BRIDGE or RAYMOND_BRIDGE_TOKEN unset, or the token not 64 hex digits' '
	echo "{}" >ev &&
	both "RAYMOND_BRIDGE is not set" "$RAYMOND" hook-bridge &&
	both "RAYMOND_BRIDGE_TOKEN is not set" env RAYMOND_BRIDGE=$PWD/s.sock "$RAYMOND" hook-bridge &&
	BRIDGE_TOKEN=abc both "RAYMOND_BRIDGE_TOKEN is not 64 hexadecimal digits" bridge &&
	BRIDGE_TOKEN=${TOKEN%?}g both "RAYMOND_BRIDGE_TOKEN is not 64 hexadecimal digits" bridge
'

test_expect_success 'no socket at RAYMOND_BRIDGE, or no folder for it' '
	echo "{}" >ev &&
	both "no bridge at '\''$PWD/s.sock'\''" bridge &&
	SOCK=$PWD/nowhere/s.sock both "no folder for the bridge socket '\''$PWD/nowhere/s.sock'\''" bridge
'

test_expect_success 'the handler gives no answer: the connection closes, the call is denied' '
	start_server "$PWD/s.sock" &&
	echo "{\"test\":\"drop\"}" >ev &&
	both "the bridge closed the connection without an answer" bridge
'

test_expect_success 'a server that closes without answering' '
	echo "{}" >ev &&
	serve_raw - &&
	expect_status 2 bridge <ev >out 2>err &&
	denied "the bridge closed the connection without an answer" &&
	serve_raw - &&
	expect_status 0 bridge --warn <ev >out 2>err &&
	warned "the bridge closed the connection without an answer"
'

# answer HEX WHAT: the peer answers HEX; the client denies, then allows
# under --warn, saying WHAT.
answer() {
	serve_raw "$1" &&
	expect_status 2 bridge <ev >out 2>err && test ! -s out && denied "$2" &&
	serve_raw "$1" &&
	expect_status 0 bridge --warn <ev >out 2>err && warned "$2"
}

test_expect_success 'malformed answers: not a frame, another version, a code but 0 and 2, too long, cut short' '
	echo "{}" >ev &&
	answer 68656c6c6f20776f726c6421 "malformed answer from the bridge: not a bridge frame" &&
	answer 524159420900000000000000 "malformed answer from the bridge: a bridge frame of another version" &&
	answer 524159420107000000000000 "malformed answer from the bridge: an answer code other than 0 or 2" &&
	answer 524159420100000001000001 "malformed answer from the bridge: an answer over 16 MiB" &&
	answer 5241594201000000000000107b7d "the bridge closed the connection in the middle of its answer" &&
	answer 52415942 "the bridge closed the connection in the middle of its answer"
'

test_expect_success 'a well-formed raw answer is relayed as it is' '
	echo "{}" >ev &&
	serve_raw 5241594201000000000000027b7d &&
	bridge <ev >out 2>err &&
	printf "{}" >want && cmp want out && test ! -s err
'

test_expect_success 'no answer within --timeout S seconds' '
	start_server "$PWD/s.sock" &&
	echo "{\"test\":\"sleep\",\"seconds\":300}" >ev &&
	both "no answer from the bridge within 1.5 seconds" bridge --timeout 1.5
'

test_expect_success 'an input that never ends counts against the same deadline' '
	mkfifo in &&
	exec 3<>in &&
	expect_status 2 bridge --timeout 1 <in >out 2>err &&
	denied "the hook input did not end within 1 seconds" &&
	exec 3>&-
'

test_expect_success 'an input over 16 MiB is refused without connecting; 16 MiB exactly goes through' '
	start_server "$PWD/s.sock" &&
	head -c 16777217 /dev/zero >ev &&
	both "hook input over 16 MiB" bridge &&
	pad=$(head -c $((16777216 - 24)) /dev/zero | tr "\0" x) &&
	printf "{\"test\":\"deny\",\"pad\":\"%s\"}" "$pad" >ev &&
	test $(wc -c <ev) -eq 16777216 &&
	expect_status 2 bridge <ev >out 2>err &&
	printf "denied by the test" >want && cmp want err
'

test_expect_success 'arguments it does not know' '
	echo "{}" >ev &&
	both "unknown argument '\''--bogus'\'' (usage: raymond hook-bridge [--warn] [--timeout S])" bridge --bogus &&
	both "--timeout wants a number of seconds above 0, not '\''0'\''" bridge --timeout 0 &&
	both "--timeout wants a number of seconds above 0, not '\''soon'\''" bridge --timeout soon &&
	expect_status 2 bridge --timeout <ev >out 2>err && denied "--timeout wants a number of seconds"
'

test_done
