#!/bin/bash
# raymond serve: the runs under .raymond/ over HTTP, with a token made on
# first start (0600), the one-time login link, and requests for another
# Host or from another Origin refused; each error a JSON answer with its
# status.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve-lib.sh"

test_expect_success 'the token is made once, readable by its owner alone' '
	start_serve &&
	test "$(stat -c %a .raymond/serve/token)" = 600 &&
	grep -Eq "^[0-9a-f]{64}$" .raymond/serve/token &&
	first=$(cat .raymond/serve/token) &&
	stop_serve &&
	start_serve &&
	test "$(cat .raymond/serve/token)" = "$first" &&
	stop_serve
'

test_expect_success 'runs are listed and shown with the token, and refused without it' '
	mkdir wf && printf "echo \"<result>served</result>\"\n" >wf/START.sh &&
	raymond wf --workflow-id r1 --quiet >/dev/null &&
	start_serve &&
	get /api/runs && code_is 401 && has "\"error\":\"a token is needed\"" &&
	get /api/runs -H "Authorization: Bearer 0000" && code_is 401 &&
	get /api/runs -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	has "\"id\":\"r1\"" && has "\"status\":\"completed\"" &&
	get /api/runs/r1 -H "Authorization: Bearer $TOKEN" && code_is 200 &&
	has "\"result\":\"served\"" &&
	get /api/runs/nope -H "Authorization: Bearer $TOKEN" && code_is 404 && has "no run nope" &&
	get /api/elsewhere -H "Authorization: Bearer $TOKEN" && code_is 404 &&
	get /api/runs -X DELETE -H "Authorization: Bearer $TOKEN" && code_is 405 &&
	stop_serve
'

test_expect_success 'another Host or another Origin is refused, even with the token' '
	start_serve &&
	get /api/runs -H "Authorization: Bearer $TOKEN" -H "Host: attacker.example" && code_is 403 &&
	has "the Host header names another server" &&
	get /api/runs -H "Authorization: Bearer $TOKEN" -H "Origin: http://attacker.example" && code_is 403 &&
	port=${BASE##*:} &&
	get /api/runs -H "Authorization: Bearer $TOKEN" -H "Host: localhost:$port" && code_is 200 &&
	stop_serve
'

test_expect_success 'the login link sets an HttpOnly, SameSite=Strict cookie, once' '
	start_serve &&
	curl -s -D head -o /dev/null "$LINK" &&
	grep -q "^HTTP/1.1 303" head &&
	grep -iq "^set-cookie: raymond_token=$TOKEN; HttpOnly; SameSite=Strict; Path=/" head &&
	get /api/runs -H "Cookie: raymond_token=$TOKEN" && code_is 200 &&
	curl -s -o body -w "%{http_code}" "$LINK" >code && code_is 401 && has "used or unknown" &&
	stop_serve
'

test_expect_success 'a bad --listen, or a port in use, is a clear error' '
	expect_status 1 raymond serve --listen nowhere >out 2>err &&
	grep -F "give ADDR:PORT" err &&
	start_serve &&
	expect_status 1 raymond serve --listen "${BASE#http://}" >out 2>err &&
	grep -F "cannot listen" err &&
	stop_serve
'

test_expect_success 'a body over the limit is refused with 413' '
	start_serve &&
	head -c 2000000 /dev/zero | tr "\000" a >big &&
	get /api/runs -H "Authorization: Bearer $TOKEN" --data-binary @big && code_is 413 &&
	stop_serve
'

# run_status ID: the run's status, as the daemon reads it.
run_status() { get "/api/runs/$1" -H "Authorization: Bearer $TOKEN" && field status; }

test_expect_success 'a launched run asks, is answered through the API, and completes' '
	mkdir -p flows && cp -r "$TESTS_TOP/workflows/approval" flows/ &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/approval\",\"input\":\"bump\",\"on_ask\":\"pause\"}" &&
	code_is 201 && id=$(field id) && test -n "$id" &&
	wait_until 60 sh -c "test \"\$(curl -s -H \"Authorization: Bearer $TOKEN\" $BASE/api/runs/$id | grep -c asking)\" != 0" &&
	ask=$(curl -s -H "Authorization: Bearer $TOKEN" "$BASE/api/runs/$id" | grep -o "ask_main_[0-9]*" | head -1) &&
	post "/api/runs/$id/answer" "{\"ask_id\":\"nope\",\"text\":\"yes\"}" && code_is 409 && has "no pending ask nope" &&
	post "/api/runs/$id/answer" "{\"ask_id\":\"$ask\",\"text\":\"yes\"}" && code_is 202 &&
	wait_until 60 sh -c "curl -s -H \"Authorization: Bearer $TOKEN\" $BASE/api/runs/$id | grep -q \"\\\"status\\\":\\\"completed\\\"\"" &&
	get "/api/runs/$id" -H "Authorization: Bearer $TOKEN" && has "approved and applied: bump" &&
	post "/api/runs/$id/resume" "" && code_is 409 && has "nothing to resume" &&
	post "/api/runs/$id/answer" "{\"ask_id\":\"$ask\",\"text\":\"again\"}" && code_is 409 &&
	stop_serve
'

test_expect_success 'bad launches change nothing: a path outside the roots, unknown fields, wrong types' '
	mkdir -p flows && cp -r "$TESTS_TOP/workflows/hello" flows/ &&
	start_serve &&
	post /api/runs "{\"workflow\":\"/etc\"}" && code_is 400 && has "not under the daemon" &&
	post /api/runs "{\"workflow\":\"flows/hello\",\"bogus\":1}" && code_is 400 && has "unknown field" &&
	post /api/runs "{\"workflow\":7}" && code_is 400 && has "must be a string" &&
	post /api/runs "not json" && code_is 400 && has "must be a JSON object" &&
	post /api/runs "{\"input\":\"x\"}" && code_is 400 && has "workflow" &&
	test ! -d .raymond/state || test -z "$(ls .raymond/state)" &&
	stop_serve
'

test_expect_success 'a run goes on when the daemon is killed, and the next daemon shows it' '
	mkdir -p flows/slow &&
	printf "for i in \$(seq 600); do test -e go && break; sleep 0.1; done\necho \"<result>after the crash</result>\"\n" >flows/slow/START.sh &&
	start_serve &&
	post /api/runs "{\"workflow\":\"flows/slow\"}" && code_is 201 && id=$(field id) &&
	kill -9 "$SERVE_PID" && wait_for_exit "$SERVE_PID" &&
	touch go &&
	wait_until 60 sh -c "grep -q completed .raymond/state/$id.json" &&
	start_serve &&
	get "/api/runs/$id" -H "Authorization: Bearer $TOKEN" && code_is 200 && has "after the crash" &&
	test "$(ls .raymond/state/*.json | wc -l)" = 1 &&
	stop_serve
'

test_expect_success 'an error quoting bytes of the request that are not UTF-8 is still UTF-8 JSON' '
	start_serve &&
	get "/api/%ff%fe" -H "Authorization: Bearer $TOKEN" && code_is 404 &&
	iconv -f UTF-8 -t UTF-8 body >/dev/null && has "no such path: /api/" &&
	get /api/runs -H "Authorization: Bearer $TOKEN" -H "$(printf "Origin: http://\\355\\240\\200")" && code_is 403 &&
	iconv -f UTF-8 -t UTF-8 body >/dev/null && has "another origin" &&
	post /api/runs "$(printf "{\"workflow\":\"a\",\"\\377\":1}")" && code_is 400 &&
	iconv -f UTF-8 -t UTF-8 body >/dev/null && has "unknown field" &&
	stop_serve
'

serve_cleanup
test_done
