#!/bin/bash
# raymond diagram --html in a real browser: headless Chromium, driven
# through chromedriver's W3C HTTP API with curl and jq
# (browser/webdriver.sh), opens each page
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
. "$(dirname "$0")/browser/webdriver.sh"

top=${TESTS_TOP:-$(cd "$(dirname "$0")/../.." && pwd)}

trap 'webdriver_stop; rm -rf "$TEST_ROOT"' EXIT
webdriver_start

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
	wd_go "file://$PWD/page.html" &&
	got=$(wd_exec "$PROBE" "[$names]") &&
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
	wd_post /goog/cdp/execute "$(jq -nc --arg v "$1" \
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
	wd_go "file://$TEST_ROOT/shot.html"
	wd_screenshot "$DIAGRAM_SCREENSHOT"
fi

test_done
