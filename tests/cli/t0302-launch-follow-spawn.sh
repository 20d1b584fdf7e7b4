#!/bin/bash
# The follower as raymond runs it: under raymond.spawn (through the test
# host, build/tests/luarun), an inactivity timeout sends its group
# SIGTERM; the follower cancels the job and waits for the task's TERM
# handler, which takes 1.5 s, so the step ends with the task's own status
# when the spawn's grace (as the executor gives a spool launch) covers it,
# and is cut short by SIGKILL after the default second when it does not.
# Either way the job is gone afterwards: the cancel was sent first.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/slurm-lib.sh"

LUARUN=$(dirname "$RAYMOND")/tests/luarun

# slow_stop NAME: a silent task whose TERM handler takes 1.5 s, then
# exits 3; its working directory is ./work.
slow_stop() {
	mkdir -p work &&
	spool "$1" "$PWD/work" sh -c 'trap "sleep 1.5; echo handled >>term-seen; exit 3" TERM; while :; do sleep 0.05; done'
}

# spawn_follower NAME GRACE: raymond.spawn of NAME's follower with an
# inactivity timeout of 1 s and grace GRACE (0: none given); the result
# in ./result as "exit=N signal=N timed_out=B".
spawn_follower() {
	follow_args "$1" --grace 10 &&
	printf '%s\n' "$RAYMOND" launch-follow "${FARGS[@]}" >argv &&
	cat >spawn.lua <<-EOS &&
	local raymond = require("raymond")
	local argv = {}
	for line in io.lines("argv") do argv[#argv + 1] = line end
	local res = raymond.spawn({ argv = argv, timeout = 1, grace = $2 > 0 and $2 or nil })
	local f = assert(io.open("result", "w"))
	f:write(string.format("exit=%s signal=%s timed_out=%s\n", res.exit, res.signal, res.timed_out))
	f:close()
	EOS
	"$LUARUN" "$TESTS_TOP/tests/lua/testing.lua" spawn.lua
}

test_expect_success 'with the grace a spool launch gets, a timed-out step ends with the task status after its TERM handler' '
	slow_stop g1 &&
	spawn_follower g1 16 &&
	cat result &&
	grep -x "exit=3 signal=nil timed_out=true" result &&
	grep -x handled work/term-seen &&
	grep -x "scancel --name=g1" "$SLURM_FAKE_LOG" &&
	! queued g1
'

test_expect_success 'without it, SIGKILL ends the follower a second after the SIGTERM, and the cancel it sent still ends the job' '
	slow_stop g2 &&
	spawn_follower g2 0 &&
	cat result &&
	grep -x "exit=nil signal=9 timed_out=true" result &&
	grep -x "scancel --name=g2" "$SLURM_FAKE_LOG" &&
	wait_until 60 eval "! queued g2" &&
	wait_for_file work/term-seen
'

test_done
