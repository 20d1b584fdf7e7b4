#!/bin/bash
# The files of raymond serve's web page, over HTTP with curl: served
# without the token, with their Content-Type and the security headers
# (a Content-Security-Policy that allows nothing but the daemon itself),
# still behind the Host check, and referring to nothing outside the
# daemon.  The API stays behind the token.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve-lib.sh"

CSP="default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

# header NAME VALUE: ./head has that header with exactly that value.
header() { grep -qxF "$1: $2" head || { echo "no '$1: $2' in:"; cat head; false; }; }

# secure: the headers every file of the page carries.
secure() {
	header content-security-policy "$CSP" &&
	header x-content-type-options nosniff &&
	header referrer-policy no-referrer
}

test_expect_success 'the page and its assets are served without a token, with their types and headers' '
	start_serve &&
	get / && code_is 200 && header content-type "text/html; charset=utf-8" && secure &&
	grep -q "<!DOCTYPE html>" body &&
	get /assets/app.js && code_is 200 && header content-type "text/javascript; charset=utf-8" && secure &&
	grep -q "EventSource" body &&
	get /assets/app.css && code_is 200 && header content-type "text/css; charset=utf-8" && secure &&
	get /assets/nothing.js && code_is 404 && secure && grep -q "no such file: /assets/nothing.js" body &&
	get / -X POST && code_is 405 &&
	stop_serve
'

test_expect_success 'everything the page refers to is served by the daemon itself' '
	start_serve &&
	get / && cp body index.html &&
	refs=$(grep -oE "(src|href)=\"[^\"]*\"" index.html | sed "s/^[a-z]*=\"//; s/\"$//" | grep -v "^#") &&
	test -n "$refs" &&
	for r in $refs; do
		case $r in /assets/*) ;; *) echo "refers to $r"; false ;; esac &&
		get "$r" && code_is 200 || return 1
	done &&
	for f in / /assets/app.js /assets/app.css /assets/diagram.css; do
		get "$f" &&
		if grep -nE "https?://|//[a-z0-9.-]+\.[a-z]{2,}/|@import|url\([^#]" body; then
			echo "$f refers to something outside the daemon"; false
		fi || return 1
	done &&
	stop_serve
'

test_expect_success 'the Host check still applies to the page, and the API still needs the token' '
	start_serve &&
	get / -H "Host: attacker.example" && code_is 403 &&
	get /assets/app.js -H "Host: attacker.example" && code_is 403 &&
	get /api/runs && code_is 401 &&
	get /assets/../api/runs --path-as-is && code_is 401 &&
	get /assets/x/y && code_is 401 &&
	stop_serve
'

serve_cleanup
test_done
