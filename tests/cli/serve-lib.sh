# Helpers for the tests of raymond serve, sourced after lib.sh.
#
#   start_serve            raymond serve on a free loopback port, in the
#                          background; sets BASE, TOKEN, LINK, SERVE_PID
#   stop_serve             SIGTERM, and wait until it has exited
#   get PATH [curl opts]   the status in ./code, the body in ./body, the
#                          headers in ./head (names in lower case, no CR)
#   post PATH JSON         the same, a POST with the token and JSON
#   has TEXT [FILE]        FILE (./body) holds TEXT
#   code_is N              the last status was N
#   field NAME             a top-level string field of ./body
#   serve_cleanup          ends the daemons a failed test left; call it
#                          just before test_done

command -v curl >/dev/null 2>&1 || sh "$TESTS_TOP/tools/apt-install.sh" test curl >&2

start_serve() {
	# The shell opens serve.out in the background job: an older daemon's
	# lines must be gone before the wait reads it.
	rm -f serve.out serve.err
	"$RAYMOND" serve --listen 127.0.0.1:0 "$@" >serve.out 2>serve.err &
	SERVE_PID=$!
	echo "$SERVE_PID" >>"$TEST_ROOT/serve.pids"
	wait_for_line serve.out "^log in once with: " || { cat serve.out serve.err; return 1; }
	BASE=$(sed -n "s|^raymond serve: listening on \(http://[^ ]*\)/$|\1|p" serve.out)
	LINK=$(sed -n "s|^log in once with: ||p" serve.out)
	TOKEN=$(cat .raymond/serve/token)
}

stop_serve() {
	kill "$SERVE_PID" && wait_for_exit "$SERVE_PID"
}

get() {
	local path=$1
	shift
	curl -s -D head.raw -o body -w "%{http_code}" "$@" "$BASE$path" >code &&
	tr -d '\r' <head.raw | sed 's/^\([^:]*\):/\L\1:/' >head
}

post() { get "$1" -H "Authorization: Bearer $TOKEN" -H "Content-Type: application/json" --data-binary "$2"; }

has() { grep -qF -e "$1" "${2:-body}" || { echo "no '$1' in:"; cat "${2:-body}"; false; }; }
code_is() { [ "$(cat code)" = "$1" ] || { echo "status $(cat code), expected $1:"; cat body; false; }; }
field() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" body; }

serve_cleanup() {
	for pid in $(cat "$TEST_ROOT/serve.pids" 2>/dev/null); do kill "$pid" 2>/dev/null; done
}
