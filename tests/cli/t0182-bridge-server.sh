#!/bin/bash
# The hook bridge's server (src/bridge.c, src/lua_bridge.c) against peers
# that do not play by the rules: a request over 16 MiB is answered at once
# without being read, a malformed one is answered code 2, one that does
# not arrive whole within 30 s is closed, and so is one that does not read
# its answer within 30 s, at most 64 connections are
# served at once (more wait), one the Lua state has no memory for is
# answered code 2, a stopping raymond answers until Lua closes the server,
# and a peer of another uid is refused even where the socket's mode would
# let it connect.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bridge.sh"

tokhex=$(printf %s "$TOKEN" | od -An -v -tx1 | tr -d " \n")

test_expect_success 'a request declaring over 16 MiB is answered (2, "hook input over 16 MiB") at once' '
	start_server "$PWD/s.sock" &&
	peer send "$PWD/s.sock" 5241594201000000${tokhex}01000001 >out &&
	echo "2 hook input over 16 MiB" >want && diff want out &&
	echo "{}" | bridge >out && grep -q seen out
'

test_expect_success 'malformed requests are answered code 2, saying what is wrong' '
	start_server "$PWD/s.sock" &&
	peer send "$PWD/s.sock" 474554202f20485454502f312e300d0a0d0a${tokhex}00000000 >out &&
	echo "2 not a bridge frame" >want && diff want out &&
	peer send "$PWD/s.sock" 5241594202000000${tokhex}00000000 >out &&
	echo "2 a bridge frame of another version" >want && diff want out &&
	peer send "$PWD/s.sock" 5241594201000000${tokhex%??}7a00000000 >out &&
	echo "2 a token that is not 64 hexadecimal digits" >want && diff want out
'

test_expect_success 'a request not whole within 30 s is closed' '
	start_server "$PWD/s.sock" &&
	t0=$(now_ms) &&
	peer hold "$PWD/s.sock" 1 >held &&
	took=$(( $(now_ms) - t0 )) &&
	grep -qx closed held &&
	test $took -ge 29000 || { echo "closed after $took ms"; return 1; }
'

test_expect_success 'a peer that never reads its answer is closed after 30 s, and others are served meanwhile' '
	start_server "$PWD/s.sock" &&
	t0=$(now_ms) &&
	{ "$PEER" noread "$PWD/s.sock" "$TOKEN" 4000000 >noread & } &&
	peer_pid=$! &&
	wait_for_line noread "^sent$" &&
	echo "{}" | bridge --timeout 60 >out &&
	grep -q seen out &&
	wait_for_line noread "^closed$" 90 &&
	took=$(( $(now_ms) - t0 )) &&
	wait_for_exit $peer_pid &&
	test $took -ge 29000 || { echo "closed after $took ms"; return 1; }
'

test_expect_success 'at most 64 connections at once: the 65th waits until one closes' '
	start_server "$PWD/s.sock" &&
	{ "$PEER" hold "$PWD/s.sock" 64 >held & } &&
	holder=$! &&
	wait_for_line held "^held$" &&
	echo "{}" | expect_status 2 bridge --timeout 2 >out 2>err &&
	denied "no answer from the bridge within 2 seconds" &&
	kill $holder && { wait $holder || :; } &&
	echo "{}" | bridge --timeout 60 >out &&
	grep -q seen out
'

test_expect_success 'an event the Lua state has no memory for is denied, and the server goes on' '
	export RAYMOND_LUA_MEMORY_MB=8 &&
	start_server "$PWD/s.sock" &&
	head -c 12000000 /dev/zero | tr "\0" x >ev &&
	expect_status 2 bridge <ev >out 2>err &&
	printf "raymond could not take the hook input: not enough memory" >want &&
	cmp want err &&
	echo "{}" | bridge >out && grep -q seen out &&
	stop_server
'

test_expect_success 'a stopping raymond answers until Lua closes its server' '
	start_server "$PWD/s.sock" keep &&
	{ "$PEER" slow "$PWD/s.sock" 5241594201000000${tokhex}000000027b7d "$PWD/flag" >slow & } &&
	peer_pid=$! &&
	wait_for_line slow "^connected$" &&
	kill -TERM $server &&
	wait_for_line server.log "^stopping$" &&
	: >flag &&
	wait_for_exit $peer_pid &&
	printf "connected\n0 {\"seen\":{}}\n" >want && diff want slow &&
	wait $server &&
	test ! -e s.sock
'

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null && id nobody >/dev/null 2>&1; then
test_expect_success 'a peer of another uid: no access to the 0600 socket, and refused when the mode would let it in' '
	chmod 711 "$TEST_ROOT" . &&
	start_server "$PWD/s.sock" &&
	as_nobody() { setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"; } &&
	echo "{}" | expect_status 2 as_nobody env RAYMOND_BRIDGE=$PWD/s.sock RAYMOND_BRIDGE_TOKEN=$TOKEN "$RAYMOND" hook-bridge >out 2>err &&
	denied "cannot connect to the bridge at '\''$PWD/s.sock'\'': Permission denied" &&
	chmod 666 s.sock &&
	echo "{}" | expect_status 2 as_nobody env RAYMOND_BRIDGE=$PWD/s.sock RAYMOND_BRIDGE_TOKEN=$TOKEN "$RAYMOND" hook-bridge >out 2>err &&
	denied "the bridge closed the connection without an answer" &&
	echo "{}" | bridge >out && grep -q seen out
'
else
	echo "SKIP $TEST_NAME: a peer of another uid (needs root, setpriv and the user nobody)"
fi

test_done
