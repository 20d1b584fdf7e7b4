#!/bin/bash
# raymond test --replay: the recording of a real Claude Code CLI run
# (tests/cli/cassettes/review.cassette) played back offline as a case,
# which fails where the workflow now parts from it.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE
export RAYMOND_CLAUDE=/nonexistent/claude
CASSETTE="$TESTS_TOP/tests/cli/cassettes/review.cassette"

replay() { expect_status "$1" raymond test --replay "$CASSETTE" "${@:2}" >out 2>err || { cat out err; false; }; }

test_expect_success 'an unchanged workflow replays clean, without the CLI' '
	cp -r "$TESTS_TOP/tests/cli/cassettes/review" wf &&
	replay 0 wf &&
	grep -E "^ok   .*review.cassette:1: replay of review \([0-9]+ ms\)$" out &&
	grep -F "1 passed, 0 failed" out
'

test_expect_success 'an edited prompt fails the replay at each visit, naming the line' '
	cp -r "$TESTS_TOP/tests/cli/cassettes/review" wf &&
	sed -i "s/^Review the work\.$/Review the work carefully./" wf/REVIEW.md &&
	replay 1 wf --junit j.xml &&
	grep -F "[main] REVIEW.md (visit 1): prompt changed at line 1: recorded \"Review the work.\", now \"Review the work carefully.\"" out &&
	grep -F "[main] REVIEW.md (visit 2): prompt changed" out &&
	grep -F "changed since the recording: REVIEW.md" out &&
	grep -F "failures=\"1\"" j.xml
'

test_expect_success 'another transition is reported where the paths part' '
	cp -r "$TESTS_TOP/tests/cli/cassettes/review" wf &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PostState = function(ev)
	    if ev.state == "REVIEW.md" then return { transition = { tag = "result", payload = "cut short" } } end
	  end,
	}
	EOS
	replay 1 wf &&
	grep -F "main: recorded REVIEW.md -> FIX.md, now REVIEW.md -> (end)" out &&
	grep -F "result: recorded \"approved after one fix\", now \"cut short\"" out &&
	grep -F "0 passed, 1 failed" out
'

test_expect_success 'a cassette for another workflow is an error naming its line' '
	mkdir wf && printf "<result>x</result>\n" >wf/START.md &&
	replay 1 wf &&
	grep -F "review.cassette:" err &&
	grep -F "which the workflow" err
'

test_done
