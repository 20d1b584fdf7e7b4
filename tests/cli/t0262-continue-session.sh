#!/bin/bash
# --continue-session, which the original passes on as `claude -c
# --fork-session` for the main agent's first turn, is refused with its
# reason before anything starts (docs/cli.md, "--continue-session").
. "$(dirname "$0")/lib.sh"

test_expect_success '--continue-session is refused, saying why and what to do, and nothing starts' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>ok</result>
	EOS
	for form in "wf --continue-session" "run wf --continue-session" "wf --continue-session=true" \
		"resume some-run --continue-session"; do
		expect_status 1 raymond $form >out 2>err &&
		grep -F "raymond: error: --continue-session is not supported: it would start the main agent from whichever Claude session is the latest in this directory (claude -c), which a resume after a crash cannot pin down" err &&
		grep -F "hint: give the context the run needs through --input or the first state'"'"'s prompt" err &&
		test ! -s out || return 1
	done &&
	test ! -e .raymond &&
	calls 0
'

test_done
