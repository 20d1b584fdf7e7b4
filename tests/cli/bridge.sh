# tests/cli/bridge.sh - helpers for the tests of the hook bridge
# (t0180-t0184), sourced after lib.sh.
#
#   start_server SOCKET [keep]
#                         the test server (tests/fake/bridge) at SOCKET,
#                         its pid in $server; stopped when the test ends
#   bridge [ARGS]         `raymond hook-bridge ARGS` with RAYMOND_BRIDGE
#                         = $SOCK (default ./s.sock) and the test's token
#   peer ARGS             tests/fake/bridge-peer.c, raw frames

TOKEN=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
PEER=$(dirname "$RAYMOND")/tests/bridge-peer

unset RAYMOND_BRIDGE RAYMOND_BRIDGE_TOKEN

start_server() {
	# A log left by an earlier server says "listening" before this one
	# has bound its socket, so it goes first.
	rm -f server.log
	RAYMOND_LUA_DIR="$TESTS_TOP/tests/fake/bridge" "$RAYMOND" "$1" "$TOKEN" ${2:+"$2"} >server.log 2>&1 &
	server=$!
	trap 'kill $server 2>/dev/null || :' EXIT
	wait_for_line server.log "^listening$|bridge server:"
	grep -qx listening server.log || { cat server.log; return 1; }
}

# stop_server: SIGTERM, then the server closes its socket and exits 0.
stop_server() { kill "$server" && wait "$server"; }

bridge() {
	RAYMOND_BRIDGE=${SOCK:-$PWD/s.sock} RAYMOND_BRIDGE_TOKEN=${BRIDGE_TOKEN:-$TOKEN} \
	    "$RAYMOND" hook-bridge "$@"
}

peer() { "$PEER" "$@"; }

# denied WHAT: stderr (./err) is the client's one line for WHAT, denying.
denied() {
	printf "raymond hook-bridge: %s; the tool call is denied\n" "$1" >want &&
	diff want err
}

# warned WHAT: the same line, allowing under --warn; stdout empty.
warned() {
	printf "raymond hook-bridge: %s; allowed because the hook says on_error = \"warn\"\n" "$1" >want &&
	diff want err && test ! -s out
}
