#!/bin/bash
# The hook bridge end to end: `raymond hook-bridge` hands the event on
# its stdin and the turn's token to a raymond.bridge_listen server, whose
# Lua handler answers; (0, TEXT) comes out on stdout with exit 0, (2, TEXT)
# on stderr with exit 2.  The socket: mode 0600, any path length, a stale
# socket replaced, removed when the server closes.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/bridge.sh"

test_expect_success 'round trip: the event reaches the handler whole, its answer comes back on stdout' '
	start_server "$PWD/s.sock" &&
	echo "{\"tool_name\":\"Bash\",\"tool_input\":{\"command\":\"ls\"}}" >ev &&
	bridge --timeout 60 <ev >out 2>err &&
	test ! -s err &&
	printf "{\"seen\":%s\n}" "$(cat ev)" >want &&
	cmp want out
'

test_expect_success 'a large event (6 MB) goes through intact' '
	start_server "$PWD/s.sock" &&
	head -c 3000000 /dev/urandom | od -An -tx1 | tr -d " \n" >blob &&
	printf "{\"blob\":\"%s\"}" "$(cat blob)" >ev &&
	bridge <ev >out 2>err &&
	printf "{\"seen\":%s}" "$(cat ev)" >want &&
	cmp want out
'

test_expect_success 'an answer with code 2: its text on stderr, exit 2' '
	start_server "$PWD/s.sock" &&
	echo "{\"test\":\"deny\"}" | expect_status 2 bridge >out 2>err &&
	test ! -s out &&
	printf "denied by the test" >want && cmp want err
'

test_expect_success 'a forged token: the handler refuses it, and --warn does not turn that into an allow' '
	start_server "$PWD/s.sock" &&
	BRIDGE_TOKEN=$(echo $TOKEN | tr 0 f) &&
	export BRIDGE_TOKEN &&
	echo "{}" | expect_status 2 bridge >out 2>err &&
	test ! -s out && printf "unknown token" >want && cmp want err &&
	echo "{}" | expect_status 2 bridge --warn >out 2>err &&
	cmp want err
'

test_expect_success 'requests from many clients at once each get their own answer' '
	start_server "$PWD/s.sock" &&
	pids= &&
	for i in $(seq 20); do
		echo "{\"n\":$i}" | bridge >out.$i 2>err.$i &
		pids="$pids $!"
	done &&
	wait $pids &&
	for i in $(seq 20); do
		printf "{\"seen\":{\"n\":%s}\n}" $i >want && cmp want out.$i || return 1
	done
'

test_expect_success 'the socket is mode 0600 and is removed when the server closes it' '
	start_server "$PWD/s.sock" &&
	test -S s.sock &&
	test "$(stat -c %a s.sock)" = 600 &&
	stop_server &&
	test ! -e s.sock
'

test_expect_success 'the socket is 0600 whatever the umask' '
	(umask 000 && start_server "$PWD/s.sock" &&
	test "$(stat -c %a s.sock)" = 600 && stop_server)
'

test_expect_success 'a socket path longer than 108 bytes works for server and client' '
	long=$PWD/$(printf "d%.0s" $(seq 60))/$(printf "e%.0s" $(seq 60)) &&
	mkdir -p "$long" &&
	SOCK=$long/bridge.sock &&
	test ${#SOCK} -gt 108 &&
	start_server "$SOCK" &&
	test -S "$SOCK" && test "$(stat -c %a "$SOCK")" = 600 &&
	echo "{\"long\":true}" | SOCK=$SOCK bridge >out &&
	printf "{\"seen\":{\"long\":true}\n}" >want && cmp want out &&
	stop_server && test ! -e "$SOCK"
'

test_expect_success 'a stale socket left by a killed server is replaced' '
	start_server "$PWD/s.sock" &&
	kill -9 $server && { wait $server || :; } &&
	test -S s.sock &&
	echo "{}" | expect_status 2 bridge 2>err &&
	denied "the bridge at '\''$PWD/s.sock'\'' refused the connection" &&
	start_server "$PWD/s.sock" &&
	echo "{}" | bridge >out &&
	grep -q seen out
'

test_expect_success 'a file that is not a socket at the path is left alone, with an error' '
	echo precious >s.sock &&
	RAYMOND_LUA_DIR="$TESTS_TOP/tests/fake/bridge" expect_status 1 "$RAYMOND" "$PWD/s.sock" "$TOKEN" >out 2>err &&
	grep -q "^bridge server: cannot make the bridge socket '\''$PWD/s.sock'\'': something that is not a socket is in the way (remove it)$" err &&
	test "$(cat s.sock)" = precious
'

test_done
