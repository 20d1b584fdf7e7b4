#!/bin/bash
# A crash in the middle of a Claude turn: the session id chosen before the
# launch is on disk, and --resume continues that same conversation.
. "$(dirname "$0")/lib.sh"

use_fake() {
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake
	mkdir -p fake
}

# has_lines FILE N: FILE has N lines or more.
has_lines() { [ -f "$1" ] && [ "$(wc -l <"$1")" -ge "$2" ]; }

# The fake claudes of this test still running (orphans of a killed
# raymond): the processes whose environment names its folder.
fakes() {
	grep -lzx "FAKE_CLAUDE_DIR=$PWD/fake" /proc/[0-9]*/environ 2>/dev/null |
		sed "s|/proc/\([0-9]*\)/environ|\1|"
}

log_session() { sed -n "${1}p" fake/log.jsonl | sed -n 's/.*"session":"\([^"]*\)".*/\1/p'; }

test_expect_success 'kill -9 mid-turn, then --resume continues the same session' '
	use_fake
	state START.md <<-\EOS
	think hard
	MOCK: hang 2 || reply <result>finished</result>
	EOS
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_until 60 has_lines fake/log.jsonl 1 &&
	first=$(log_session 1) &&
	state_json | grep -q "\"turn\":{[^}]*\"id\":\"$first\"" &&
	kill -9 $pid &&
	for p in $(fakes); do wait_for_exit $p || exit 1; done &&
	raymond --resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = finished &&
	test "$(wc -l <fake/log.jsonl)" = 2 &&
	test "$(log_session 2)" = "$first" &&
	sed -n 2p fake/log.jsonl | grep -q "\"resumed\":true" &&
	! grep -q "\"turn\"" "$(state_file)"
'

test_expect_success 'a crash before the CLI got going starts the planned session fresh' '
	use_fake &&
	state START.md <<-\EOS &&
	a plain turn
	MOCK: reply <result>fresh</result>
	EOS
	raymond wf --quiet >/dev/null &&
	id=$(run_id) &&
	f=$(state_file) &&
	uuid=11111111-2222-4333-8444-555555555555 &&
	sed -e "s/\"status\":\"completed\"/\"status\":\"interrupted\"/" \
	    -e "s/\"agents\":{}/\"agents\":[{\"cwd\":\"$(pwd | sed "s/\//\\\\\//g")\",\"id\":\"main\",\"stack\":{},\"state\":\"START.md\",\"turn\":{\"id\":\"$uuid\",\"mode\":\"fresh\",\"planned\":\"fresh\"}}]/" \
	    "$f" >f.new && mv f.new "$f" &&
	grep -q "$uuid" "$f" &&
	raymond --resume "$id" --quiet >out &&
	test "$(cat out)" = fresh &&
	test "$(log_session 2)" = "$uuid" &&
	sed -n 2p fake/log.jsonl | grep -q "\"resumed\":false"
'
test_done
