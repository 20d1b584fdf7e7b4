#!/bin/bash
# raymond diagram --html in a real browser: headless Chromium, driven
# through chromedriver's W3C HTTP API with curl and jq, opens each page
# from a file:// URL with no network and checks that every state's node
# is drawn (its box and its text have a size), that the page draws as
# many edges as the Mermaid text has, that it asked for nothing (no
# resource loaded, no script, no link), that no two nodes overlap, and
# that its text is readable in the light and the dark colour scheme.
#
# Chromium, chromedriver, curl and jq are installed when missing (Debian:
# tools/apt-install.sh).  DIAGRAM_SCREENSHOT=FILE saves a PNG of the
# review-loop page, to look at the layout.
. "$(dirname "$0")/lib.sh"

top=${TESTS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

# apt_idle: no apt or dpkg runs, so the package database is not locked.
apt_idle() {
	local c
	for c in /proc/[0-9]*/comm; do
		case $(cat "$c" 2>/dev/null) in apt | apt-get | dpkg) return 1 ;; esac
	done
}

have_all() {
	command -v chromium >/dev/null && command -v chromedriver >/dev/null &&
		command -v jq >/dev/null && command -v curl >/dev/null
}

# Another test (or person) may be installing packages at the same time,
# and apt refuses to start while the database is locked: then wait until
# it is free and try again.
for _ in 1 2 3; do
	have_all && break
	sh "$top/tools/apt-install.sh" test chromium chromium-driver jq curl && break
	wait_until 600 apt_idle
done
have_all || { echo "FAIL $TEST_NAME: cannot install chromium, chromium-driver, jq and curl"; exit 1; }

driver_pid= port= sid=
stop_driver() {
	if [ -n "$sid" ]; then curl -s -m 30 -X DELETE "http://127.0.0.1:$port/session/$sid" >/dev/null; fi
	if [ -n "$driver_pid" ]; then
		kill "$driver_pid" 2>/dev/null
		wait_for_exit "$driver_pid" 30 >/dev/null || kill -KILL "$driver_pid" 2>/dev/null
	fi
	rm -rf "$TEST_ROOT"
}
trap stop_driver EXIT

driver_ready() { curl -sf -m 5 "http://127.0.0.1:$port/status" 2>/dev/null | jq -e '.value.ready' >/dev/null; }

# Start chromedriver on a free port: a port another program holds makes
# it exit, and the next one is tried.
for _ in 1 2 3 4 5; do
	port=$((20000 + RANDOM % 20000))
	chromedriver --port="$port" >"$TEST_ROOT/chromedriver.log" 2>&1 &
	driver_pid=$!
	wait_until 60 sh -c "! kill -0 $driver_pid 2>/dev/null || curl -sf -m 5 http://127.0.0.1:$port/status | jq -e .value.ready" >/dev/null
	# Ready, and ours: not another program's on the same port.
	if kill -0 "$driver_pid" 2>/dev/null && driver_ready; then break; fi
	driver_pid=
done
if [ -z "$driver_pid" ]; then
	echo "FAIL $TEST_NAME: chromedriver did not start"
	sed 's/^/    /' "$TEST_ROOT/chromedriver.log"
	exit 1
fi

# post PATH JSON: a W3C command; its "value" on stdout.  Fails, saying
# why on stderr, when the request or the command failed.
post() {
	local out
	out=$(curl -sS -m 120 -H 'Content-Type: application/json' -d "$2" "http://127.0.0.1:$port$1") || return 1
	if ! jq -e 'has("value") and ((.value | type) != "object" or (.value | has("error") | not))' <<<"$out" >/dev/null; then
		echo "$1 failed: $(jq -r '.value.message // .' <<<"$out" 2>/dev/null | head -c 300)" >&2
		return 1
	fi
	jq -c .value <<<"$out"
}

args='["--headless=new","--disable-gpu","--disable-dev-shm-usage","--no-first-run",
	"--disable-background-networking","--disable-component-update","--disable-sync",
	"--window-size=1280,1000"]'
[ "$(id -u)" = 0 ] && args=$(jq -c '. + ["--no-sandbox"]' <<<"$args")
args=$(jq -c --arg d "--user-data-dir=$TEST_ROOT/profile" '. + [$d]' <<<"$args")
sid=$(post /session "$(jq -nc --argjson a "$args" \
	'{capabilities: {alwaysMatch: {browserName: "chrome",
	  "goog:chromeOptions": {binary: "/usr/bin/chromium", args: $a}}}}')" | jq -r .sessionId)
if [ -z "$sid" ] || [ "$sid" = null ]; then
	echo "FAIL $TEST_NAME: no browser session"
	sed 's/^/    /' "$TEST_ROOT/chromedriver.log"
	exit 1
fi

# What the page shows, as one JSON object: for each state name given,
# the width of its node, its box and its text (-1 when missing); the number of
# edges, resources loaded, elements that could load something and style
# rules with a url(); pairs of nodes that overlap; the contrast of the
# text against the page.
read -r -d '' PROBE <<'EOS'
const names = arguments[0];
const nodes = [...document.querySelectorAll("svg g.node")];
const sizes = {};
for (const n of names) {
  const g = nodes.find(e => e.dataset.state === n);
  const t = g && g.querySelector("text");
  const shape = g && g.querySelector("rect, polygon");
  sizes[n] = g ? { box: g.getBBox().width, text: t ? t.getBBox().width : -1,
                   shape: shape ? shape.getBBox().width : -1,
                   said: t ? t.textContent : null } : { box: -1, text: -1 };
}
const boxes = nodes.map(g => g.getBoundingClientRect());
let overlaps = 0;
for (let i = 0; i < boxes.length; i++)
  for (let j = i + 1; j < boxes.length; j++) {
    const a = boxes[i], b = boxes[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps++;
  }
let urls = 0;
for (const sheet of document.styleSheets) {
  let rules;
  try { rules = sheet.cssRules; } catch (e) { urls++; continue; }  // a sheet from elsewhere
  for (const rule of rules) if (/url\(|@import/.test(rule.cssText)) urls++;
}
const rgb = c => c.match(/\d+(\.\d+)?/g).slice(0, 3).map(Number);
const lum = c => {
  const [r, g, b] = rgb(c).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const contrast = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
const bg = getComputedStyle(document.body).backgroundColor;
const text = document.querySelector("svg g.node text");
const svg = document.querySelector("svg[role=img]");
return { sizes, edges: document.querySelectorAll("svg g.edge").length,
  resources: performance.getEntriesByType("resource").length,
  loaders: document.querySelectorAll("script,link,img,iframe,object,embed,[src]").length, urls, overlaps,
  contrast: text ? contrast(getComputedStyle(text).fill, bg) : 0,
  label: svg && svg.getAttribute("aria-label"), title: document.title };
EOS

# check_page WF: draw WF as HTML, open it, and check what it shows.
check_page() {
	local wf=$1 names want got
	raymond diagram "$wf" --html --output page.html &&
	raymond diagram "$wf" >mermaid.txt &&
	want=$(grep -cE -- '-->|==>|-\.->' mermaid.txt) &&
	names=$(cd "$wf" && ls | grep -E '\.(md|sh)$' | jq -Rsc 'split("\n") | map(select(. != ""))') &&
	post "/session/$sid/url" "$(jq -nc --arg u "file://$PWD/page.html" '{url: $u}')" >/dev/null &&
	got=$(post "/session/$sid/execute/sync" "$(jq -nc --arg s "$PROBE" --argjson n "$names" \
		'{script: $s, args: [$n]}')") &&
	test -n "$got" &&
	echo "$got" | jq . >probe.json &&
	jq -e --argjson n "$names" '$n | length > 0' <<<"$got" >/dev/null &&
	jq -e --argjson n "$names" '[$n[] as $k | .sizes[$k] | select(.box > 0 and .text > 0)] | length == ($n | length)' \
		<<<"$got" >/dev/null || { echo "a state is not drawn:"; cat probe.json; return 1; }
	jq -e --argjson n "$names" '[$n[] as $k | select(.sizes[$k].said == $k)] | length == ($n | length)' \
		<<<"$got" >/dev/null || { echo "a node does not say its state name:"; cat probe.json; return 1; }
	jq -e --argjson n "$names" '[$n[] as $k | .sizes[$k] | select(.text < .shape)] | length == ($n | length)' \
		<<<"$got" >/dev/null || { echo "a name does not fit in its box:"; cat probe.json; return 1; }
	jq -e --argjson w "$want" '.edges == $w' <<<"$got" >/dev/null ||
		{ echo "expected $want edges:"; cat probe.json; return 1; }
	jq -e '.resources == 0 and .loaders == 0 and .urls == 0' <<<"$got" >/dev/null ||
		{ echo "the page loads something:"; cat probe.json; return 1; }
	jq -e '.overlaps == 0' <<<"$got" >/dev/null || { echo "nodes overlap:"; cat probe.json; return 1; }
	jq -e '.contrast >= 4.5 and (.label | startswith("Diagram of workflow "))' <<<"$got" >/dev/null ||
		{ echo "unreadable or unlabelled:"; cat probe.json; return 1; }
}

# scheme light|dark: the colour scheme the page is shown in.
scheme() {
	post "/session/$sid/goog/cdp/execute" "$(jq -nc --arg v "$1" \
		'{cmd: "Emulation.setEmulatedMedia", params: {features: [{name: "prefers-color-scheme", value: $v}]}}')" \
		>/dev/null
}

for wf in "$top"/workflows/*/; do
	name=$(basename "$wf")
	test_expect_success "$name: every state drawn, every edge, nothing loaded, readable" '
		check_page "$wf"
	'
done

test_expect_success 'the dark colour scheme changes the colours and stays readable' '
	scheme dark &&
	check_page "$top/workflows/review-loop" &&
	dark=$(jq -c .contrast probe.json) &&
	scheme light &&
	check_page "$top/workflows/review-loop" &&
	light=$(jq -c .contrast probe.json) &&
	echo "contrast light $light, dark $dark" &&
	test "$dark" != "$light"
'

test_expect_success 'state names with quotes, tags and spaces are drawn as written' '
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	echo "<result>x</result>" >"wf/a \"b\" & c.md" &&
	echo "<result>x</result>" >"wf/<x> y.md" &&
	check_page wf &&
	jq -e ".title == \"wf - raymond diagram\"" probe.json
'

if [ -n "${DIAGRAM_SCREENSHOT:-}" ]; then
	raymond diagram "$top/workflows/review-loop" --html --output "$TEST_ROOT/shot.html"
	post "/session/$sid/url" "$(jq -nc --arg u "file://$TEST_ROOT/shot.html" '{url: $u}')" >/dev/null
	curl -sf "http://127.0.0.1:$port/session/$sid/screenshot" | jq -r .value | base64 -d >"$DIAGRAM_SCREENSHOT"
fi

test_done
