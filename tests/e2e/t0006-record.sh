#!/bin/bash
# --record with the real Claude Code CLI against the mock API: the
# cassette holds the CLI's own stream-json (a Bash tool call through the
# tool hooks, a loop with two visits of a state), and replaying it offline
# (no CLI to be found) takes the same path to the same result.  The
# workflow is tests/cli/cassettes/review, whose cassette recorded this way
# is checked in and replayed by tests/cli/t0281-replay-real.sh.  With
# RAYMOND_E2E_SAVE_CASSETTE=FILE the recording is also copied to FILE,
# the test's directories written as /project and /tmp/test (to record it
# again).
. "$(dirname "$0")/lib.sh"
e2e_setup || exit 1
. "$E2E_DIR/../cli/replay-lib.sh"

test_expect_success 'a recording of the real CLI replays offline to the same path and result' '
	cp -r "$TOP/tests/cli/cassettes/review" wf &&
	raymond run wf --input "the parser" --dangerously-skip-permissions --record rec.cassette --quiet >out 2>err &&
	same "$(cat out)" "approved after one fix" &&
	same "$(grep -c "\"ev\":\"turn\"" rec.cassette)" 4 &&
	grep "\"state\":\"START.md\"" rec.cassette | has "tool_use" &&
	grep "\"state\":\"START.md\"" rec.cassette | has "looked at the parser" &&
	tail -1 rec.cassette | has "\"paths\":{\"main\":[\"START.md\",\"REVIEW.md\",\"FIX.md\",\"REVIEW.md\"]}" &&
	lacks "$ANTHROPIC_BASE_URL" <rec.cassette &&
	before=$(mock_requests) &&
	replay rec.cassette &&
	same "$(cat status)" 0 &&
	same "$(cat rout)" "approved after one fix" &&
	same "$(mock_requests)" "$before" &&
	! grep -q "\"ev\":\"diverge\"" S/.raymond/test/trace.jsonl &&
	same "$(helper compare rec.cassette)" same &&
	if [ -n "$RAYMOND_E2E_SAVE_CASSETTE" ]; then
		sed -e "s|$PWD|/project|g" -e "s|$TEST_ROOT|/tmp/test|g" -e "s|$(printf %s "$PWD" | tr /. --)|-project|g" \
			rec.cassette >"$RAYMOND_E2E_SAVE_CASSETTE"
	fi
'

test_done
