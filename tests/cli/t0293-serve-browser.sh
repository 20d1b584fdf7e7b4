#!/bin/bash
# The web page of raymond serve in a real browser: headless Chromium,
# driven over WebDriver (tests/cli/browser/webdriver.sh), opens the page,
# is told to log in, opens the login link, launches a workflow from the
# page's form, sees its worker appear live under its parent in the agent
# tree with its output, follows the run across a kill -9 of the daemon,
# answers the run's question through the page's form and sees the run
# complete with its cost; then stops and resumes another run with the
# page's buttons, sees an error of the API shown, and checks that every
# text is readable in the light and the dark colour scheme.  No network:
# the workflow's markdown states run the fake Claude Code CLI
# (tests/fake), which reports a cost.  Every wait has a ceiling of 60 s.
#
# The test saves a screenshot of the run page while it waits for the
# answer.  docs/serve.png is that screenshot; to take it again:
#
#   SERVE_SCREENSHOT=$PWD/docs/serve.png RAYMOND=$PWD/build/raymond \
#       TESTS_TOP=$PWD bash tests/cli/t0293-serve-browser.sh
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/browser/webdriver.sh"

P=$TEST_ROOT/project
SHOT=$TEST_ROOT/run-page.png

stop_all() {
	webdriver_stop
	for pid in $(cat "$TEST_ROOT/serve.pids" 2>/dev/null); do kill "$pid" 2>/dev/null; done
	rm -rf "$TEST_ROOT"
}
trap stop_all EXIT

webdriver_start

# The workflow: START.md (a Claude turn with a tool call) forks a worker,
# which prints a line and waits for ./release; main meanwhile asks a
# question, whose answer goes to DONE.md, a second turn.
mkdir -p "$P/flows/fork-ask" "$P/fake"
cd "$P" || exit 1
printf 'Plan the work.\n\nMOCK: bash echo planning => Two jobs.<fork next="ASK.sh">WORKER.sh</fork>\n' \
	>flows/fork-ask/START.md
cat >flows/fork-ask/WORKER.sh <<-\EOS
echo "worker started"
for i in $(seq 600); do test -e release && break; sleep 0.1; done
echo "<result>worker done</result>"
EOS
cat >flows/fork-ask/ASK.sh <<-\EOS
echo "<print>asking</print>"
echo '<ask next="DONE.md">Ship it?</ask>'
EOS
printf 'Finish with the answer {{input}}.\n\nMOCK: reply shipped <result>shipped</result>\n' >flows/fork-ask/DONE.md

# A run to stop and resume: it waits for ./go.
mkdir -p flows/slow
cat >flows/slow/START.sh <<-\EOS
echo "slow started"
for i in $(seq 600); do test -e go && break; sleep 0.1; done
echo "<result>slow done</result>"
EOS

# The runs the daemon starts inherit its environment: the fake CLI.
export RAYMOND_CLAUDE=$FAKE FAKE_CLAUDE_DIR=$P/fake
unset CLAUDECODE

# start_serve [ADDR:PORT]: raymond serve in the project, in the
# background; sets BASE and LINK.
start_serve() {
	(cd "$P" && exec "$RAYMOND" serve --listen "${1:-127.0.0.1:0}" >serve.out 2>serve.err) &
	echo $! >>"$TEST_ROOT/serve.pids"
	echo $! >"$TEST_ROOT/serve.pid"
	# Killed on purpose later: the shell need not report it.
	disown $!
	wait_for_line "$P/serve.out" "^log in once with: " || { cat "$P/serve.out" "$P/serve.err"; return 1; }
	BASE=$(sed -n "s|^raymond serve: listening on \(http://[^ ]*\)/$|\1|p" "$P/serve.out")
	LINK=$(sed -n "s|^log in once with: ||p" "$P/serve.out")
}
start_serve || exit 1
TOKEN=$(cat "$P/.raymond/serve/token")

# api PATH: the daemon's JSON answer, with the token.
api() { curl -sf -H "Authorization: Bearer $TOKEN" "$BASE$1"; }

# The run the page launched (saved by the test that launches it).
run() { cat "$TEST_ROOT/run-id"; }

test_expect_success 'before logging in, the page says how to' '
	wd_go "$BASE/" &&
	wd_wait 60 "return !document.getElementById(\"notice\").hidden &&
		document.getElementById(\"notice\").innerText.includes(\"You are not logged in\") &&
		document.getElementById(\"notice\").innerText.includes(\"login link\")"
'

test_expect_success 'the login link opens the runs page, with the workflows to launch' '
	wd_go "$LINK" &&
	wd_wait 60 "return location.href === arguments[0] + \"/\" &&
		[...document.querySelectorAll(\"#launch-workflow option\")].some(o => o.value.endsWith(\"/flows/fork-ask\"))" \
		"$(jq -nc --arg b "$BASE" "[\$b]")" &&
	wd_exec "return document.getElementById(\"notice\").hidden" | grep -qx true
'

test_expect_success 'the form launches the workflow and opens its run page' '
	wd_click "#launch-workflow option[value\$=\"/flows/fork-ask\"]" &&
	wd_type "#launch-input" "release 2" &&
	wd_type "#launch-budget" "1" &&
	wd_type "#launch-name" "from the page" &&
	wd_click "#launch button[type=submit]" &&
	wd_wait 60 "return /^#\\/runs\\/./.test(location.hash)" &&
	id=$(wd_exec "return decodeURIComponent(location.hash.slice(7))" | jq -r .) &&
	echo "$id" >"$TEST_ROOT/run-id" &&
	api "/api/runs/$id" >run.json &&
	jq -e ".launch.budget == 1 and .launch.name == \"from the page\" and .launch.on_ask == \"pause\"" run.json
'

test_expect_success 'the worker appears live under main in the agent tree, with its output' '
	wd_wait 60 "return !!document.querySelector(
		\"#agents > li[data-agent=main] > ul > li[data-agent=main_worker1]\")" &&
	wd_wait 60 "const w = document.querySelector(\"#agents li[data-agent=main_worker1] .agent-state\");
		return !!w && w.textContent === \"WORKER.sh\"" &&
	wd_wait 60 "const log = document.querySelector(\"#output section[data-agent=main_worker1] pre\");
		return !!log && log.textContent.includes(\"worker started\")" &&
	wd_wait 60 "const log = document.querySelector(\"#output section[data-agent=main] pre\");
		return !!log && log.textContent.includes(\"tool Bash \") && log.textContent.includes(\"echo planning\")" &&
	wd_exec "return document.getElementById(\"run-status\").textContent" | grep -qx "\"running\""
'

test_expect_success 'after a kill -9 of the daemon, a new one on the same port: the page follows the run on, no line twice' '
	pid=$(cat "$TEST_ROOT/serve.pid") &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	start_serve "${BASE#http://}" &&
	touch "$P/release" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"asking\"" &&
	wd_wait 60 "const w = document.querySelector(\"#agents li[data-agent=main_worker1]\");
		return !!w && w.classList.contains(\"ended\")" &&
	wd_wait 60 "const log = document.querySelector(\"#output section[data-agent=main_worker1] pre\");
		return log.textContent.includes(\"result (agent done)\")" &&
	lines=$(wd_exec "const count = (agent, text) =>
			document.querySelector(\"#output section[data-agent=\" + agent + \"] pre\").textContent.split(text).length - 1;
		return [count(\"main\", \"step START.md\"), count(\"main\", \"step ASK.sh\"),
			count(\"main_worker1\", \"worker started\"), count(\"main_worker1\", \"result (agent done)\")]") &&
	echo "lines: $lines" &&
	test "$lines" = "[1,1,1,1]"
'

test_expect_success 'the question is shown with a form, its state highlighted in the diagram' '
	wd_wait 60 "const f = document.querySelector(\"#asks form.ask\");
		return !document.getElementById(\"asks-box\").hidden && !!f &&
		f.querySelector(\".prompt\").textContent === \"Ship it?\" &&
		f.querySelector(\"label\").textContent === \"Answer for main\"" &&
	wd_wait 60 "const n = document.querySelector(\"#diagram svg g.node.current\");
		return !!n && n.dataset.state === \"ASK.sh\" &&
		document.querySelectorAll(\"#diagram svg g.node.current\").length === 1" &&
	wd_post /window/rect "{\"width\": 1280, \"height\": 1500}" >/dev/null &&
	wd_screenshot "$SHOT" &&
	wd_post /window/rect "{\"width\": 1280, \"height\": 1000}" >/dev/null &&
	test "$(head -c 8 "$SHOT" | od -An -tx1 | tr -d " \n")" = 89504e470d0a1a0a &&
	test "$(stat -c %s "$SHOT")" -gt 10000
'

test_expect_success 'the answer typed into the form completes the run; the page shows its cost' '
	wd_type "#asks form.ask textarea" "yes" &&
	wd_click "#asks form.ask button[type=submit]" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"completed\"" &&
	api "/api/runs/$(run)" >run.json &&
	jq -e ".status == \"completed\" and .result == \"shipped\" and .cost > 0" run.json &&
	cost=$(jq .cost run.json) &&
	want=$(printf "\$%.4f of \$1.0000" "$cost") &&
	echo "cost: $want" &&
	wd_wait 60 "return document.getElementById(\"run-cost\").textContent === arguments[0] &&
		Math.abs(document.getElementById(\"run-cost-meter\").value - arguments[1]) < 1e-9" \
		"$(jq -nc --arg w "$want" --argjson c "$cost" "[\$w, \$c]")" &&
	wd_wait 60 "return document.getElementById(\"asks-box\").hidden &&
		document.querySelectorAll(\"#diagram svg g.node.current\").length === 0"
'

test_expect_success 'the runs list shows the run completed, with its name and cost' '
	api "/api/runs/$(run)" >run.json &&
	cost=$(printf "\$%.4f" "$(jq .cost run.json)") &&
	wd_click "header nav a" &&
	wd_wait 60 "const row = [...document.querySelectorAll(\"#runs tbody tr\")]
			.find(r => r.cells[0].textContent === arguments[0]);
		return !!row && row.cells[1].textContent === \"from the page\" &&
			row.cells[2].textContent === \"completed\" && row.cells[3].textContent === arguments[1]" \
		"$(jq -nc --arg id "$(run)" --arg c "$cost" "[\$id, \$c]")"
'

test_expect_success 'with hundreds of runs, the table shows the newest 200 and says so' '
	id=$(run) &&
	for i in $(seq 1 250); do
		sed "s/\"id\":\"$id\"/\"id\":\"copy$i\"/" "$P/.raymond/state/$id.json" >"$P/.raymond/state/copy$i.json" || return 1
	done &&
	total=$(api /api/runs | jq length) &&
	test "$total" -gt 250 &&
	wd_wait 60 "return document.querySelectorAll(\"#runs tbody tr\").length === 200 &&
		document.getElementById(\"runs-count\").textContent === \"The newest 200 of \" + arguments[0] + \" runs.\"" \
		"[$total]"
'

test_expect_success 'the page loaded nothing from anywhere but the daemon' '
	wd_exec "return performance.getEntriesByType(\"resource\").map(e => e.name)
		.filter(u => !u.startsWith(arguments[0] + \"/\"))" "[\"$BASE\"]" >elsewhere &&
	test "$(cat elsewhere)" = "[]"
'

# contrast: the smallest contrast, in the page as it is shown now, of a
# text against its background (a button's own, else the page's), and
# where it is.
read -r -d '' CONTRAST <<'EOS'
const rgb = c => (c.match(/[\d.]+/g) || [0, 0, 0]).slice(0, 4).map(Number);
const lum = c => {
  const [r, g, b] = rgb(c).slice(0, 3).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
};
const ratio = (a, b) => { const x = lum(a), y = lum(b); return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05); };
const page = getComputedStyle(document.body).backgroundColor;
let worst = { ratio: 99, where: "" };
for (const e of document.querySelectorAll("main *")) {
  if (e.closest("[hidden], svg") || ![...e.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
  const s = getComputedStyle(e);
  let bg = page;
  for (let p = e; p && p !== document.body; p = p.parentElement) {
    const b = getComputedStyle(p).backgroundColor;
    if (rgb(b).length < 4 || rgb(b)[3] > 0) { bg = b; break; }
  }
  const r = ratio(s.color, bg);
  if (r < worst.ratio) worst = { ratio: r, where: e.tagName + "." + e.className + ": " + e.textContent.slice(0, 40) };
}
return worst;
EOS

test_expect_success 'a run stopped from the page is interrupted, and resumed from it completes' '
	id=$(curl -sf -H "Authorization: Bearer $TOKEN" -d "{\"workflow\":\"flows/slow\"}" "$BASE/api/runs" | jq -r .id) &&
	wd_go "$BASE/#/runs/$id" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"running\" &&
		!document.getElementById(\"run-stop\").disabled && document.getElementById(\"run-resume\").disabled" &&
	wd_click "#run-stop" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"interrupted\" &&
		document.getElementById(\"run-stop\").disabled && !document.getElementById(\"run-resume\").disabled" &&
	wd_click "#run-resume" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"running\"" &&
	touch "$P/go" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"completed\" &&
		document.getElementById(\"run-stop\").disabled && document.getElementById(\"run-resume\").disabled" &&
	api "/api/runs/$id" | jq -e ".result == \"slow done\""
'

test_expect_success 'errors of the API are shown: a stop of a run that has ended, a run that does not exist' '
	wd_exec "document.getElementById(\"run-stop\").disabled = false" >/dev/null &&
	wd_click "#run-stop" &&
	wd_wait 60 "const n = document.getElementById(\"notice\");
		return !n.hidden && /is not running/.test(n.textContent)" &&
	wd_go "$BASE/#/runs/nope" &&
	wd_wait 60 "const n = document.getElementById(\"notice\");
		return !n.hidden && n.textContent.includes(\"no run nope\") &&
		document.getElementById(\"diagram\").textContent.includes(\"No diagram\")"
'

test_expect_success 'every text is readable, in the light and the dark colour scheme' '
	for scheme in light dark; do
		wd_post /goog/cdp/execute "$(jq -nc --arg v "$scheme" \
			"{cmd: \"Emulation.setEmulatedMedia\", params: {features: [{name: \"prefers-color-scheme\", value: \$v}]}}")" \
			>/dev/null &&
		worst=$(wd_exec "$CONTRAST") &&
		echo "$scheme: $worst" &&
		jq -e ".ratio >= 4.5" <<<"$worst" >/dev/null || return 1
	done
'

# unlabelled: the form controls of the page shown now that have no label
# a screen reader would read, or that the keyboard cannot reach.
read -r -d '' UNLABELLED <<'EOS'
return [...document.querySelectorAll("main input, main select, main textarea, main button, main a")]
  .filter(e => !e.closest("[hidden]"))
  .filter(e => e.tabIndex < 0 || !((e.labels && e.labels.length) || e.textContent.trim() || e.getAttribute("aria-label")))
  .map(e => e.outerHTML.slice(0, 80));
EOS

# key NAME...: press and release each key, Tab or Enter.
key() {
	local k acts=()
	for k in "$@"; do
		acts+=("$(jq -nc --arg k "$k" '{Tab: "\uE004", Enter: "\uE007"}[$k] as $v |
			[{type: "keyDown", value: $v}, {type: "keyUp", value: $v}]')")
	done
	wd_post /actions "$(printf '%s\n' "${acts[@]}" | jq -sc '{actions: [{type: "key", id: "keys", actions: add}]}')" >/dev/null
}

test_expect_success 'every control is labelled and reached with the keyboard, the skip link first' '
	wd_go "$BASE/#/runs/$(run)" &&
	wd_wait 60 "return document.getElementById(\"run-status\").textContent === \"completed\"" &&
	got=$(wd_exec "$UNLABELLED") && echo "run page, unlabelled: $got" && test "$got" = "[]" &&
	wd_go "$BASE/#/" &&
	wd_post /refresh "{}" >/dev/null &&
	wd_wait 60 "return document.querySelectorAll(\"#runs tbody tr\").length > 0" &&
	got=$(wd_exec "$UNLABELLED") && echo "runs page, unlabelled: $got" && test "$got" = "[]" &&
	key Tab &&
	focused=$(wd_exec "return document.activeElement.className") && echo "first Tab: $focused" &&
	test "$focused" = "\"skip\"" &&
	key Enter Tab &&
	focused=$(wd_exec "return location.hash + \" \" + document.activeElement.id") && echo "then Enter, Tab: $focused" &&
	test "$focused" = "\"#/ launch-workflow\""
'

if [ -n "${SERVE_SCREENSHOT:-}" ] && [ -s "$SHOT" ]; then cp "$SHOT" "$SERVE_SCREENSHOT"; fi

test_done
