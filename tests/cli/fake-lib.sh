# tests/cli/fake-lib.sh - helpers for the tests that run the fake Claude
# Code CLI directly (t0100, t0185-t0189), sourced after lib.sh.  JSON is
# read with grep and sed only.
#
#   fake ARGS... -- PROMPT   the fake as raymond runs it (stdin /dev/null),
#                            its state in $FAKE_CLAUDE_DIR, by default ./fc
#   jline TYPE FILE          the stream-json lines of that type
#   jstr KEY / jnum KEY / jlit KEY
#                            the value of the last "KEY" on each input line:
#                            a string without escaped quotes, a number, or
#                            true/false/null
#   lastlog                  the last line of log.jsonl
#   events KIND              the lines of events.jsonl of that kind (hook,
#                            tool_result, context)
#   hooks_json EVENT MATCHER COMMAND [SECONDS]
#                            a --settings document with one command hook
#                            (MATCHER - for none); COMMAND holds no " or \

fake() {
	FAKE_CLAUDE_DIR=${FAKE_CLAUDE_DIR:-$PWD/fc} \
		"$FAKE" -p --output-format stream-json --verbose "$@" </dev/null
}

jline() { grep "^{\"type\":\"$1\"" "$2"; }
jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jnum() { sed -n "s/.*\"$1\":\(-\{0,1\}[0-9][0-9.e+-]*\)[,}].*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }
lastlog() { tail -n 1 "${FAKE_CLAUDE_DIR:-$PWD/fc}/log.jsonl"; }
events() { grep -F "\"kind\":\"$1\"" "${FAKE_CLAUDE_DIR:-$PWD/fc}/events.jsonl"; }

hooks_json() {
	local m=
	[ "$2" = - ] || m="\"matcher\":\"$2\","
	printf '{"hooks":{"%s":[{%s"hooks":[{"type":"command","command":"%s","timeout":%s}]}]}}' \
		"$1" "$m" "$3" "${4:-60}"
}
