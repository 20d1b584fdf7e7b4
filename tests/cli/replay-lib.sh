# tests/cli/replay-lib.sh - helpers for the record and replay tests
# (t0280, t0281, e2e/t0006), sourced after lib.sh.  They do the part of
# `raymond test --replay` around the child run with tests/cli/cassette.lua.
#
#   helper MODE CASSETTE [WF]   cassette.lua for sandbox ./S: MODE case
#                               writes S/.raymond/test/case.json and argv;
#                               MODE compare prints how the finished run
#                               differs from the recording, or "same"
#   replay CASSETTE [WF]        the recording played back in a fresh
#                               sandbox ./S with no Claude Code CLI to be
#                               found, each recorded answer given with
#                               resume --input while it pauses (exit 2):
#                               the last exit status in ./status, output
#                               in ./rout and ./rerr
#   has TEXT / lacks TEXT       stdin holds TEXT, or not
#   eq WHAT GOT WANT

TOP=${TESTS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
LUARUN="$(dirname "$RAYMOND")/tests/luarun"

has() { _in=$(cat) && { printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "no '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
lacks() { _in=$(cat) && { ! printf "%s\n" "$_in" | grep -qF -e "$1" || { echo "unexpected '$1' in:"; printf "%s\n" "$_in"; false; }; }; }
eq() { [ "$2" = "$3" ] || { echo "$1: expected '$3', got '$2'"; return 1; }; }

helper() {
	CASSETTE=$2 WF=$3 SANDBOX=$PWD/S MODE=$1 "$LUARUN" "$TOP/tests/lua/testing.lua" "$TOP/tests/cli/cassette.lua"
}

replay() {
	rm -rf S && mkdir -p S/.raymond &&
	helper case "$@" >herr || { cat herr; return 1; }
	mapfile -t args <S/.raymond/test/argv &&
	mapfile -t answers <S/.raymond/test/answers &&
	set +e
	child run "${args[@]}"
	local st=$? i=0
	while [ $st = 2 ] && [ $i -lt ${#answers[@]} ]; do
		child resume test --input "${answers[$i]}"
		st=$? i=$((i + 1))
	done
	echo $st >status
	set -e
}

# child ARGS...: raymond ARGS in the sandbox, as the runner starts it.
child() {
	(cd S && env -u FAKE_CLAUDE_DIR RAYMOND_CLAUDE=/nonexistent/claude PATH=/usr/bin:/bin \
		RAYMOND_TEST_CASE="$PWD/.raymond/test/case.json" RAYMOND_RETRY_DELAY=0 \
		"$RAYMOND" "$@" >../rout 2>../rerr)
}
