#!/bin/bash
# Hook data that was saved always loads: a table JSON cannot hold
# faithfully (a list with a hole, 1 and "1" both as keys) stops the run at
# the save that would have written it, naming its path, with the hint to
# fix the hook; the state on disk is the last good one, and once the hook
# is fixed --resume carries on.  Data nested as deep as a save allows is
# read back by --resume.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

# hook BODY: wf/hooks.lua whose PreTransition runs BODY.
hook() {
	printf 'return {\n  PreTransition = function(ev)\n%s\n  end,\n}\n' "$1" >wf/hooks.lua
}

# refused BODY MESSAGE: BODY in a hook stops the run with MESSAGE; fixed,
# the run resumes and finishes.
refused() {
	two_step &&
	hook "$1" &&
	expect_status 1 raymond wf --quiet 2>err &&
	cat err &&
	grep -qF "cannot save the run state: cannot encode the run state: $2" err &&
	grep -qF "hint: a hook stored a value JSON cannot hold in run.data or agent.data; fix the hook, then run: raymond --resume $(run_id)" err &&
	test ! -e b-ran &&
	raymond --status "$(run_id)" --json >/dev/null &&
	hook "    ev.run.data.fixed = true" &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = b
}

test_expect_success 'a list with a hole in run.data is refused at save, naming its path' '
	refused "    ev.run.data.a = { b = { 1, nil, 3 } }" \
		"data.a.b is a list with a hole: [2] is nil but [3] is not, which JSON cannot hold"
'

test_expect_success 'a table with both 1 and "1" as keys in agent.data is refused at save' '
	refused "    ev.agent.data.t = { [1] = \"n\", [\"1\"] = \"s\" }" \
		"agents[1].data.t has both 1 and \"1\" as keys, which JSON cannot tell apart"
'

test_expect_success 'a list mixed with named keys is refused at save' '
	refused "    ev.run.data.m = { \"x\", name = \"y\" }" \
		"data.m mixes list entries (whole-number keys) with named keys, which JSON cannot hold"
'

test_expect_success 'data nested as deep as a save allows is read back by --resume' '
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	exit 3
	EOS
	# run.data is the second level of the record, so it holds 62 more.
	hook "    local t = ev.run.data
    for i = 1, 62 do t.a = {}; t = t.a end
    t.leaf = 1" &&
	expect_status 1 raymond wf --quiet 2>err &&
	grep -q "script exited with status 3" err &&
	state B.sh <<-\EOS &&
	echo "<result>b</result>"
	EOS
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = b &&
	grep -q "\"leaf\":1" "$(state_file)"
'

test_done
