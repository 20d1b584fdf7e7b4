# tests/cli/browser/webdriver.sh - a real headless Chromium for the
# browser tests (t0156, t0293), driven through chromedriver's W3C HTTP API
# with curl and jq; sourced after lib.sh.
#
#   webdriver_start        install what is missing (Debian: chromium,
#                          chromium-driver, jq, curl; tools/apt-install.sh),
#                          start chromedriver on a free port and a browser
#                          session; exits the test file when it cannot
#   webdriver_stop         end the session and chromedriver (call it from
#                          the test file's EXIT trap)
#   wd_post PATH JSON      a command of the session (PATH after
#                          /session/ID): its "value" on stdout, or a failure
#                          saying why on stderr
#   wd_get PATH            the same for a GET
#   wd_go URL              open URL
#   wd_exec SCRIPT [ARGS]  run SCRIPT (a function body) in the page, ARGS a
#                          JSON array of its arguments: its return value
#   wd_wait SECONDS SCRIPT [ARGS]
#                          until SCRIPT returns true, up to SECONDS; when it
#                          never does, say what the page shows
#   wd_click CSS           click the element CSS selects, as a user does
#   wd_type CSS TEXT       type TEXT into it, key by key
#   wd_screenshot FILE     a PNG of the window
#
# A browser started as root needs --no-sandbox.  The window is 1280x1000,
# with no network services of its own (no updates, no sync).

webdriver_top=${TESTS_TOP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)}

# apt_idle: no apt or dpkg runs, so the package database is not locked.
apt_idle() {
	local c
	for c in /proc/[0-9]*/comm; do
		case $(cat "$c" 2>/dev/null) in apt | apt-get | dpkg) return 1 ;; esac
	done
}

webdriver_have() {
	command -v chromium >/dev/null && command -v chromedriver >/dev/null &&
		command -v jq >/dev/null && command -v curl >/dev/null
}

WD= WD_SID= webdriver_pid=

webdriver_ready() { curl -sf -m 5 "$WD/status" 2>/dev/null | jq -e '.value.ready' >/dev/null; }

webdriver_start() {
	local port args
	# Another test (or person) may be installing packages at the same
	# time, and apt refuses to start while the database is locked: then
	# wait until it is free and try again.
	for _ in 1 2 3; do
		webdriver_have && break
		sh "$webdriver_top/tools/apt-install.sh" test chromium chromium-driver jq curl && break
		wait_until 600 apt_idle
	done
	webdriver_have || { echo "FAIL $TEST_NAME: cannot install chromium, chromium-driver, jq and curl"; exit 1; }

	# A port another program holds makes chromedriver exit, and the next
	# one is tried.
	for _ in 1 2 3 4 5; do
		port=$((20000 + RANDOM % 20000))
		WD=http://127.0.0.1:$port
		chromedriver --port="$port" >"$TEST_ROOT/chromedriver.log" 2>&1 &
		webdriver_pid=$!
		wait_until 60 sh -c "! kill -0 $webdriver_pid 2>/dev/null || curl -sf -m 5 $WD/status | jq -e .value.ready" >/dev/null
		# Ready, and ours: not another program's on the same port.
		if kill -0 "$webdriver_pid" 2>/dev/null && webdriver_ready; then break; fi
		webdriver_pid=
	done
	if [ -z "$webdriver_pid" ]; then
		echo "FAIL $TEST_NAME: chromedriver did not start"
		sed 's/^/    /' "$TEST_ROOT/chromedriver.log"
		exit 1
	fi

	args='["--headless=new","--disable-gpu","--disable-dev-shm-usage","--no-first-run",
		"--disable-background-networking","--disable-component-update","--disable-sync",
		"--window-size=1280,1000"]'
	[ "$(id -u)" = 0 ] && args=$(jq -c '. + ["--no-sandbox"]' <<<"$args")
	args=$(jq -c --arg d "--user-data-dir=$TEST_ROOT/profile" '. + [$d]' <<<"$args")
	WD_SID=$(webdriver_call POST /session "$(jq -nc --argjson a "$args" \
		'{capabilities: {alwaysMatch: {browserName: "chrome",
		  "goog:chromeOptions": {binary: "/usr/bin/chromium", args: $a}}}}')" | jq -r .sessionId)
	if [ -z "$WD_SID" ] || [ "$WD_SID" = null ]; then
		WD_SID=
		echo "FAIL $TEST_NAME: no browser session"
		sed 's/^/    /' "$TEST_ROOT/chromedriver.log"
		exit 1
	fi
}

webdriver_stop() {
	if [ -n "$WD_SID" ]; then curl -s -m 30 -X DELETE "$WD/session/$WD_SID" >/dev/null; fi
	if [ -n "$webdriver_pid" ]; then
		kill "$webdriver_pid" 2>/dev/null
		wait_for_exit "$webdriver_pid" 30 >/dev/null || kill -KILL "$webdriver_pid" 2>/dev/null
	fi
}

# webdriver_call METHOD PATH [JSON]: a W3C command; its "value".
webdriver_call() {
	local out
	if [ "$1" = GET ]; then
		out=$(curl -sS -m 120 "$WD$2") || return 1
	else
		out=$(curl -sS -m 120 -H 'Content-Type: application/json' -d "$3" "$WD$2") || return 1
	fi
	if ! jq -e 'has("value") and ((.value | type) != "object" or (.value | has("error") | not))' <<<"$out" >/dev/null; then
		echo "$2 failed: $(jq -r '.value.message // .' <<<"$out" 2>/dev/null | head -c 300)" >&2
		return 1
	fi
	jq -c .value <<<"$out"
}

wd_post() { webdriver_call POST "/session/$WD_SID$1" "$2"; }
wd_get() { webdriver_call GET "/session/$WD_SID$1"; }

wd_go() { wd_post /url "$(jq -nc --arg u "$1" '{url: $u}')" >/dev/null; }

wd_exec() {
	wd_post /execute/sync "$(jq -nc --arg s "$1" --argjson a "${2:-[]}" '{script: $s, args: $a}')"
}

wd_wait() {
	local limit=$1 end got
	end=$(( ${EPOCHREALTIME//[.,]/} + limit * 1000000 ))
	until got=$(wd_exec "$2" "${3:-[]}") && [ "$got" = true ]; do
		if [ "${EPOCHREALTIME//[.,]/}" -ge "$end" ]; then
			echo "waited ${limit} s in the browser for: $2"
			echo "the page shows:"
			wd_exec 'return location.href + "\n" + document.body.innerText' | jq -r . | sed 's/^/    /'
			return 1
		fi
		sleep 0.1
	done
}

# The id of the element CSS selects (the W3C element reference).
wd_find() {
	local v
	v=$(wd_post /element "$(jq -nc --arg c "$1" '{using: "css selector", value: $c}')") &&
		jq -er '.["element-6066-11e4-a52e-4f735466cecf"]' <<<"$v"
}

wd_click() {
	local e
	e=$(wd_find "$1") && wd_post "/element/$e/click" '{}' >/dev/null
}

wd_type() {
	local e
	e=$(wd_find "$1") && wd_post "/element/$e/value" "$(jq -nc --arg t "$2" '{text: $t}')" >/dev/null
}

wd_screenshot() { wd_get /screenshot | jq -r . | base64 -d >"$1"; }
