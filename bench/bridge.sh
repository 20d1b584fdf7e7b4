#!/bin/bash
# The hook bridge's round trip: the Claude Code CLI runs its command hook
# as `/bin/sh -c CMD` with the event on stdin, once per tool call.  This
# times N such hooks running `raymond hook-bridge` against a raymond whose
# Lua handler decodes the event and answers (tests/fake/bridge), and N
# hooks running `echo {}`, a hook that answers at once; the difference
# per call is what the bridge adds to a tool call: the binary's start, the
# event out over the socket, the Lua handler, the decision back.
#
#   bench/bridge.sh BUILD_DIR        N=500 by default; median of REPEAT (5)
set -eu
build=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
ray="$build/raymond"
n=${N:-500}
repeat=${REPEAT:-5}
work=$(mktemp -d)
server=
trap '[ -z "$server" ] || kill "$server" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"

token=$(printf '%064d' 0)
printf '%s' '{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"ls -la","description":"list"},"tool_use_id":"toolu_1"}' >ev

RAYMOND_LUA_DIR="$top/tests/fake/bridge" "$ray" "$work/b.sock" "$token" >server.log 2>&1 &
server=$!
until grep -qx listening server.log 2>/dev/null; do sleep 0.01; done
export RAYMOND_BRIDGE=$work/b.sock RAYMOND_BRIDGE_TOKEN=$token

now() { date +%s%N; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# loop CMD: N hooks running CMD as the CLI does, in nanoseconds.
loop() {
	local t0 t1 i
	t0=$(now)
	for ((i = 0; i < n; i++)); do /bin/sh -c "$1" <ev >/dev/null; done
	t1=$(now)
	echo $((t1 - t0))
}

hook="'$ray' hook-bridge --timeout 615 || exit 2"
/bin/sh -c "$hook" <ev | grep -q '"seen"' || { echo "bench/bridge.sh: the bridge did not answer" >&2; exit 1; }
base=$(for ((r = 0; r < repeat; r++)); do loop 'echo {}'; done | median)
bridge=$(for ((r = 0; r < repeat; r++)); do loop "$hook"; done | median)
awk -v b="$base" -v r="$bridge" -v n="$n" 'BEGIN {
	printf "hook echo {}          %6.2f ms a call\n", b / n / 1e6
	printf "hook raymond bridge   %6.2f ms a call\n", r / n / 1e6
	printf "bridge adds           %6.2f ms a call (target: 5)\n", (r - b) / n / 1e6
}'
