#!/bin/bash
# raymond serve: a run's events as Server-Sent Events, live and resumed
# with Last-Event-ID (across a restart of the daemon too); stopping a run
# whoever started it; launching under an id of the client's, once; the
# workflows under the roots with lint's findings and the drawing.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve-lib.sh"

# A fan-out whose workers wait for ./go: each worker prints, then ends.
fan_out() {
	mkdir -p flows/fan &&
	cat >flows/fan/START.sh <<-\EOS &&
	echo "<fork word=\"alpha\">WORKER</fork>"
	echo "<fork word=\"beta\">WORKER</fork>"
	echo "<goto>COLLECT</goto>"
	EOS
	cat >flows/fan/WORKER.sh <<-\EOS &&
	echo "working on $word" >&2
	for _ in $(seq 1200); do test -e go && break; sleep 0.05; done
	echo "<print>$RAYMOND_AGENT_ID did $word</print>"
	echo "<result>$word</result>"
	EOS
	printf "echo \"<result>collected</result>\"\n" >flows/fan/COLLECT.sh
}

# stream ID FILE [LAST_ID]: the run's events into FILE, in the background;
# sets CURL_PID.
stream() {
	curl -sN -H "Authorization: Bearer $TOKEN" ${3:+-H "Last-Event-ID: $3"} \
		"$BASE/api/runs/$1/events" >"$2" &
	CURL_PID=$!
	echo "$CURL_PID" >>"$TEST_ROOT/serve.pids"
}

# events FILE: the events of FILE but the run snapshots and keepalives,
# one line each (id, event, data): what a reconnect must give again.
events() {
	awk 'BEGIN { RS = ""; FS = "\n" }
	     /event: run\n/ || /^retry:/ || /^: keepalive/ { next }
	     { line = ""; for (i = 1; i <= NF; i++) if ($i !~ /^id: /) line = line $i " "; print line }' "$1"
}

test_expect_success 'a run is streamed live: steps, output, prints, transitions, the end' '
	fan_out &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/fan\",\"id\":\"fan1\"}" && code_is 201 &&
	stream fan1 live &&
	wait_for_line live "\"agent\":\"main_worker2\".*\"state\":\"WORKER.sh\"" &&
	wait_for_line live "working on beta" &&
	grep -q "^event: run$" live &&
	! grep -q "did alpha" live &&
	touch go &&
	wait_for_line live "^data: \\{\"agent\":\"main_worker1\",\"step\":[0-9]+,\"text\":\"main_worker1 did alpha\"\\}" &&
	wait_for_line live "\"from\":\"COLLECT.sh\",\"to\":\"result \\(agent done\\)\"" &&
	wait_for_line live "\"status\":\"completed\"" &&
	grep -q "^event: step_end$" live &&
	grep -q "\"agents\":\\[\\]" live &&
	kill $CURL_PID &&
	stop_serve
'

test_expect_success 'a reconnect with Last-Event-ID misses nothing, even after kill -9 of the daemon' '
	fan_out && touch go &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/fan\",\"id\":\"fan1\"}" && code_is 201 &&
	stream fan1 whole &&
	wait_for_line whole "\"from\":\"COLLECT.sh\"" && kill $CURL_PID &&
	mid=$(grep "^id: " whole | sed -n "5s/id: //p") && test -n "$mid" &&
	kill -9 "$SERVE_PID" && wait_for_exit "$SERVE_PID" &&
	start_serve &&
	stream fan1 rest "$mid" &&
	wait_for_line rest "\"from\":\"COLLECT.sh\"" && kill $CURL_PID &&
	events whole >whole.ev && events rest >rest.ev &&
	n=$(wc -l <rest.ev) && test "$n" -gt 3 &&
	tail -n "$n" whole.ev >tail.ev &&
	diff tail.ev rest.ev &&
	! grep -q "\"state\":\"START.sh\"" rest.ev &&
	grep -q "^event: run$" rest &&
	stop_serve
'

test_expect_success 'a stop ends a running run as interrupted; it resumes; a finished run cannot be stopped' '
	mkdir -p flows/slow &&
	printf "for i in \$(seq 1200); do test -e go2 && break; sleep 0.05; done\necho \"<result>slow done</result>\"\n" \
		>flows/slow/START.sh &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/slow\",\"id\":\"slow1\"}" && code_is 201 &&
	wait_until 60 sh -c "curl -s -H \"Authorization: Bearer $TOKEN\" $BASE/api/runs/slow1 | grep -q \"\\\"running\\\":true\"" &&
	post /api/runs/slow1/stop "" && code_is 202 &&
	wait_until 60 sh -c "curl -s -H \"Authorization: Bearer $TOKEN\" $BASE/api/runs/slow1 | grep -q \"\\\"status\\\":\\\"interrupted\\\"\"" &&
	post /api/runs/slow1/stop "" && code_is 409 && has "is not running (it is interrupted)" && has "resume" &&
	touch go2 &&
	post /api/runs/slow1/resume "" && code_is 202 &&
	wait_until 60 sh -c "grep -q \"slow done\" .raymond/state/slow1.json" &&
	post /api/runs/slow1/stop "" && code_is 409 && has "it is completed" &&
	post /api/runs/nope/stop "" && code_is 404 &&
	stop_serve
'

test_expect_success 'a run started from the command line is stopped through the API too' '
	mkdir -p flows/cli &&
	printf "touch started\nfor i in \$(seq 1200); do sleep 0.05; done\necho \"<result>never</result>\"\n" \
		>flows/cli/START.sh &&
	raymond flows/cli --workflow-id cli1 --quiet >cli.out 2>&1 &
	cli=$! &&
	wait_for_file started &&
	start_serve &&
	post /api/runs/cli1/stop "" && code_is 202 &&
	wait_for_exit $cli &&
	get /api/runs/cli1 -H "Authorization: Bearer $TOKEN" && has "\"status\":\"interrupted\"" &&
	stop_serve
'

test_expect_success 'a launch under an id of the client, retried, starts one run' '
	fan_out && touch go &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/fan\",\"id\":\"once\"}" && code_is 201 &&
	post /api/runs "{\"workflow\":\"flows/fan\",\"id\":\"once\"}" && code_is 409 && has "exists already" &&
	post /api/runs "{\"workflow\":\"flows/fan\",\"id\":\"../x\"}" && code_is 400 && has "field '"'"'id'"'"'" &&
	test "$(ls .raymond/state/once*.json | wc -l)" = 1 &&
	wait_until 60 sh -c "grep -q collected .raymond/state/once.json" &&
	stop_serve
'

test_expect_success 'the workflows under the roots, with lint and the drawing' '
	mkdir -p flows/empty &&
	echo "# nothing" >flows/empty/notes.txt && echo "<goto>NOWHERE</goto>" >flows/empty/START.md &&
	fan_out && touch go &&
	raymond flows/fan --workflow-id fan1 --quiet >/dev/null &&
	start_serve &&
	get /api/workflows -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	has "\"path\":\"$PWD/flows/fan\"" && has "\"kind\":\"folder\"" &&
	get "/api/workflow?path=flows/fan" -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	has "\"errors\":0" && has "data-state=\\\"WORKER.sh\\\"" && has "\"mermaid\":\"flowchart TD" &&
	get "/api/workflow?path=flows/empty" -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	has "\"errors\":1" && has "NOWHERE" &&
	get "/api/workflow?path=/etc" -H "Authorization: Bearer $TOKEN" && code_is 400 && has "not under the daemon" &&
	get "/api/workflow" -H "Authorization: Bearer $TOKEN" && code_is 400 && has "path=WORKFLOW" &&
	get /api/runs/fan1/diagram -H "Authorization: Bearer $TOKEN" && code_is 200 && has "data-state=\\\"COLLECT.sh\\\"" &&
	stop_serve
'

test_expect_success 'an ask comes as an event, and its answer through the API shows in the stream' '
	mkdir -p flows && cp -r "$TESTS_TOP/workflows/approval" flows/ &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/approval\",\"input\":\"bump\",\"on_ask\":\"pause\",\"id\":\"ask1\"}" &&
	code_is 201 &&
	stream ask1 asks &&
	wait_for_line asks "^event: ask$" &&
	ask=$(sed -n "s/^data: {\"agent\":\"main\",\"ask_id\":\"\([^\"]*\)\".*/\1/p" asks) && test -n "$ask" &&
	post "/api/runs/ask1/answer" "{\"ask_id\":\"$ask\",\"text\":\"yes\"}" && code_is 202 &&
	wait_for_line asks "approved and applied: bump" &&
	wait_for_line asks "\"status\":\"completed\"" &&
	test "$(grep -c "^event: ask$" asks)" = 1 &&
	kill $CURL_PID &&
	stop_serve
'

test_expect_success 'a client that does not read cannot make the daemon buffer a run without bound' '
	mkdir -p flows/loud &&
	printf "head -c 60000000 /dev/zero | tr \"\\\\000\" x | fold -w 1000\necho \"<result>loud</result>\"\n" \
		>flows/loud/START.sh &&
	# Under AddressSanitizer (make check) freed memory is held back a
	# while; a small quarantine keeps that apart from what the daemon holds.
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4" start_serve &&
	get /api/runs -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	base=$(awk "/^VmRSS/ { print \$2 }" /proc/$SERVE_PID/status) &&
	post /api/runs "{\"workflow\":\"flows/loud\",\"id\":\"loud1\"}" && code_is 201 &&
	exec 7<>"/dev/tcp/127.0.0.1/${BASE##*:}" &&
	printf "GET /api/runs/loud1/events HTTP/1.1\r\nHost: ${BASE#http://}\r\nAuthorization: Bearer $TOKEN\r\n\r\n" >&7 &&
	wait_until 120 grep -q "\"result\":\"loud\"" .raymond/state/loud1.json &&
	test "$(stat -c %s .raymond/debug/loud1.record)" -gt 60000000 &&
	rss=$(awk "/^VmHWM/ { print \$2 }" /proc/$SERVE_PID/status) &&
	echo "daemon RSS at start $base kB, peak $rss kB, for a record of 60 MB" &&
	test $((rss - base)) -lt 24576 &&
	exec 7>&- &&
	get /api/runs/loud1 -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	stop_serve
'

serve_cleanup
test_done
