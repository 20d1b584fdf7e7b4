#!/bin/bash
# Regenerate the seed corpora in fuzz/corpus/ (they are checked in; run this
# only to refresh them, then review the change).
#
# usage: fuzz/make-corpus.sh [BUILD]     from the top of the tree; BUILD
#        (default build) holds raymond, tests/fake-claude and tests/mkzip
#
# Seeds are small and cover valid and tricky input: tags cut in odd places,
# <print>, attributes and every error of the tag grammar; stream-json as the
# fake CLI prints it (replies, tools, API errors, limits, sessions) and as
# the real Claude Code CLI prints it, broken lines too; the
# frontmatter of workflows/ and YAML corner cases; state files written by
# raymond itself (completed, failed inside a call, forks, markdown turns,
# hook data) and damaged ones; journals a killed run left, whole, cut and
# with a flipped bit; zip archives made by mkzip in both layouts
# and every refused shape, plus damaged ones; HTTP requests to raymond
# serve, good and bad, whole, cut, pipelined and over its caps.
set -eu

top=$(pwd)
B=$(cd "${1:-build}" && pwd)
C=$top/fuzz/corpus
RAYMOND=$B/raymond
FAKE=$B/tests/fake-claude
MKZIP=$B/tests/mkzip
for x in "$RAYMOND" "$FAKE" "$MKZIP"; do
	[ -x "$x" ] || { echo "make-corpus: $x is missing; run make first" >&2; exit 1; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/raymond-corpus.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
rm -rf "$C"
mkdir -p "$C"/{tagparse,claude,frontmatter,runstate,archive,journal,termsafe,bridge,http}

# ---- tagparse: HEADER (printf format) then the payload ------------------
# Header byte 0: chunk-size count n (low 3 bits), r (high 5 bits; 31
# repeats the payload's last byte up to 68 KiB); then n chunk sizes.  See fuzz/fuzz_tagparse.c.
tp() { { printf "%b" "$2"; printf '%s' "$3"; } >"$C/tagparse/$1"; }
tpf() { { printf "%b" "$2"; printf "%b" "$3"; } >"$C/tagparse/$1"; }

tp goto-bytewise '\x00' '<goto>NEXT</goto>'
tp print-call '\x01\x03' $'some prose <print>hello, world</print>\n<call return="DONE">SHOUT</call>\n'
tp reset-attrs '\x02\x05\x01' $'<reset cd="dir" input=\'x y\'>B</reset>'
tp forks-goto '\x03\x07\x00\x02' '<fork next="N" item="x" extra_1='"'"'v'"'"'>WORKER</fork><fork next="N" item="y">WORKER</fork><goto>N</goto>'
tp result-raw '\x01\x04' 'done: <result>payload with <goto>X</goto> and </resul inside</result> after'
tp rescan-unclosed '\x00' 'use <result> when done, then <goto>X</goto>'
tp malformed-attr '\x01\x02' '<goto a=b>X</goto>'
tp malformed-space '\x00' '<call return = "A">S</call>'
tp duplicate-attr '\x01\x06' '<call return="A" return="B">S</call>'
tp not-tags '\x01\x01' '<results>B</results> <gotoX>B</gotoX> <Goto>B</Goto> < goto>B</goto>'
tp print-held-back '\x02\x01\x02' '<print>a</</pri</print </print><print>b</print'
tp unknown-names '\x01\x05' '<ask>q</ask><await>x</await><call-workflow>w</call-workflow><function-workflow>f</function-workflow><fork-workflow>k</fork-workflow><reset-workflow>r</reset-workflow>'
tp function '\x01\x0b' '<function return="R" input="{{x}}">S</function>'
tpf nul-crlf '\x01\x03' '<print>x\000y</print>\r\n<result>a\000b\r\n</result>\r\n'
tp open-too-long '\xf8' '<goto a="x'
tp attr-spaces-too-long '\xf9\x40' '<fork next="N" '
tp print-unclosed '\x01\x07' '<print>never closed </prin'
tp ws-in-tag $'\x01\x04' $'<goto\tinput=\'\'\n>X</goto>'
tp print-nested '\x00' '<print><goto>X</goto></print>'
tp lt-runs '\x02\x01\x00' '<<goto>X</goto><go<goto>Y</goto></goto>>'
tp many-tags '\x01\x09' '<goto>A</goto><goto>B</goto><goto>C</goto><goto>D</goto><goto>E</goto><goto>F</goto><goto>G</goto><goto>H</goto><goto>I</goto>'
tp quoted-gt '\x02\x0d\x01' $'<fork next="a>b" x=\'he said "hi"\' y="it\'s" _z9="">W</fork>'
tp attr-at-end '\x00' '<goto key='
tp close-alone '\x01\x02' '</goto><goto/>X</goto>'
tp long-print '\xf9\x07' 'line <print>tick</print><print>x'
tp long-body '\xfa\x30\x01' '<result>x'
tp name-too-long '\x00' '<reset-workflowxxxxxxxxxxxxxxxxxxxxxxxxxxxx>X</reset-workflowxxxxxxxxxxxxxxxxxxxxxxxxxxxx>'
tp script-output '\x03\x10\x20\x40' $'Running tests...\nok 1 - parses\nok 2 - prints\n<print>2 of 2 passed</print>\n<goto input="all green">REVIEW.md</goto>\n'
tp empty-chunks '\x03\x00\x00\x01' '<result></result>'

# ---- claude: stream-json as the CLI prints it ----------------------------
U1=11111111-1111-4111-8111-111111111111
U2=22222222-2222-4222-8222-222222222222
U3=33333333-3333-4333-8333-333333333333
export FAKE_CLAUDE_DIR=$tmp/fc
mkdir -p "$tmp/cwd"
fake() { # NAME ARGS... -- PROMPT
	name=$1; shift
	(cd "$tmp/cwd" && "$FAKE" -p --output-format stream-json --verbose \
	    --permission-mode acceptEdits "$@" </dev/null >"$C/claude/$name" 2>/dev/null) || true
}
fake reply --session-id $U1 -- 'MOCK: reply <result>done</result>'
fake tool-then-goto --resume $U1 -- 'MOCK: bash echo hi => <goto>NEXT</goto>'
fake branch --resume $U1 --fork-session --session-id $U2 -- 'MOCK: reply <call return="R">S</call>'
fake escapes --session-id $U3 -- $'MOCK: reply q"b\\s\\nnext\tT\001E \303\251 \377!'
for s in 429 500 529 401; do
	fake "error-$s" --session-id "$(printf '4444444%s-4444-4444-8444-444444444444' "$s" | cut -c1-8)-4444-4444-8444-44444444444$((s % 10))" -- "MOCK: error $s"
done
fake limit --session-id 55555555-5555-4555-8555-555555555555 -- 'MOCK: limit 3600'
fake no-conversation --resume 66666666-6666-4666-8666-666666666666 -- 'MOCK: reply x'
fake no-output --session-id $U1 -- 'MOCK: reply x'
fake multi-text --session-id 77777777-7777-4777-8777-777777777777 -- 'MOCK: reply line one\nline two <print>p</print>\n<goto>B</goto>'
# Lines of the kinds the real Claude Code CLI 2.1.197 prints.
cl() { printf '%s\n' "$@" >"$C/claude/$1.tmp"; tail -n +2 "$C/claude/$1.tmp" >"$C/claude/$1"; rm "$C/claude/$1.tmp"; }
cl doc-success \
 '{"type":"system","subtype":"init","cwd":"/tmp/wk/p2","session_id":"70d5a1","tools":["Task","Bash","Write"],"mcp_servers":[],"model":"claude-opus-4-8[1m]","permissionMode":"bypassPermissions","apiKeySource":"ANTHROPIC_API_KEY","claude_code_version":"2.1.197"}' \
 '{"type":"assistant","message":{"id":"msg_mock_1","model":"claude-opus-4-8","role":"assistant","content":[{"type":"tool_use","id":"toolu_mock_1","name":"Bash","input":{"command":"echo made > made.txt","description":"x"}}],"usage":{}},"parent_tool_use_id":null,"session_id":"0a71","uuid":"u1"}' \
 '{"type":"user","message":{"role":"user","content":[{"tool_use_id":"toolu_mock_1","type":"tool_result","content":"(Bash completed with no output)","is_error":false}]},"parent_tool_use_id":null,"session_id":"0a71","tool_use_result":{"stdout":"","stderr":"","interrupted":false}}' \
 '{"type":"assistant","message":{"content":[{"type":"text","text":"<result>done</result>"}]},"session_id":"0a71"}' \
 '{"type":"result","subtype":"success","is_error":false,"api_error_status":null,"duration_ms":267,"num_turns":2,"result":"<result>done</result>","stop_reason":"end_turn","session_id":"0a71","total_cost_usd":0.015,"usage":{"input_tokens":2000,"output_tokens":200},"permission_denials":[],"terminal_reason":"completed"}'
cl doc-retry-then-limit \
 '{"type":"system","subtype":"api_retry","attempt":1,"max_retries":3,"retry_delay_ms":509.7,"error_status":429,"error":"rate_limit","session_id":"s","uuid":"u"}' \
 '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1795322551,"rateLimitType":"five_hour","isUsingOverage":false}}' \
 '{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"You'"'"'ve hit your session limit · resets 4:42am (UTC)"}]},"error":"rate_limit","session_id":"s"}' \
 '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your session limit · resets 4:42am (UTC)","session_id":"s","total_cost_usd":0}'
cl doc-no-conversation \
 '{"type":"result","subtype":"error_during_execution","is_error":true,"num_turns":0,"session_id":"00000000-0000-4000-8000-000000000000","total_cost_usd":0,"errors":["No conversation found with session ID: 00000000-0000-4000-8000-000000000000"]}'
cl budget \
 '{"type":"result","subtype":"error_max_budget_usd","is_error":true,"session_id":"s","total_cost_usd":0.51,"errors":[]}'
cl auth \
 '{"type":"assistant","message":{"model":"<synthetic>","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"error":"authentication_failed","session_id":"s"}' \
 '{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key","session_id":"s","total_cost_usd":0}'
cl not-logged-in \
 '{"type":"result","subtype":"success","is_error":true,"result":"Not logged in · Please run /login","session_id":"s","total_cost_usd":0}'
cl connection \
 '{"type":"result","subtype":"success","is_error":true,"api_error_status":null,"result":"API Error: Unable to connect to API (ECONNRESET)","session_id":"s","total_cost_usd":0}'
cl killed-no-result \
 '{"type":"system","subtype":"init","session_id":"s"}' \
 '{"type":"assistant","message":{"content":[{"type":"text","text":"half a rep"}]},"session_id":"s"}'
cl extra-usage \
 '{"type":"result","subtype":"success","is_error":true,"result":"You are out of extra usage · resets 5pm (UTC)","session_id":"s"}'
cl broken-lines \
 'not json at all' '{"type":"assistant",' '[1,2,3]' '"a string"' '42' 'null' '{}' \
 '{"type":"assistant","message":"not a table"}' \
 '{"type":"assistant","message":{"content":"text"}}' \
 '{"type":"assistant","message":{"content":[1,"x",{"type":"text"},{"type":"text","text":7}]}}' \
 '{"type":"result","result":17,"errors":"x","api_error_status":"429","total_cost_usd":"0.1"}' \
 '{"type":"result","errors":[1,true,{"a":1},null],"session_id":""}' \
 '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":"soon"}}'
cl weird-numbers \
 '{"type":"result","subtype":"success","is_error":false,"result":"<result>x</result>","api_error_status":5.5,"total_cost_usd":1e-7}' \
 '{"type":"result","api_error_status":1e400,"total_cost_usd":-0.0}' \
 '{"type":"result","api_error_status":0x1f5,"total_cost_usd":12}'
cl nested \
 '{"type":"assistant","message":{"content":[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]}}' \
 '{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{}}}}}}}}}'
printf '%s\r\n' '{"type":"system","subtype":"init","session_id":"crlf"}' \
 '{"type":"result","subtype":"success","is_error":false,"result":"<result>ok</result>","session_id":"crlf","total_cost_usd":0.001}' >"$C/claude/crlf"
printf '%s\n\n\n%s' '{"type":"assistant","message":{"content":[{"type":"text","text":"a\u0000b\ud800"}]}}' \
 '{"type":"result","subtype":"success","is_error":false,"result":"no newline at the end"}' >"$C/claude/no-final-newline"
# Bugs the fuzzers found, fixed in bbde52c: kept as regression seeds.
cl regress-reset-out-of-range \
 '{"type":"system","subtype":"init","session_id":"11111111-1111-1111-1111-111111111111"}' \
 '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1e300}}' \
 '{"type":"result","subtype":"success","is_error":true,"result":"You'"'"'ve hit your session limit · resets 4:42am (UTC)","session_id":"11111111-1111-1111-1111-111111111111","total_cost_usd":0}'
cl regress-cost-not-finite \
 '{"type":"system","subtype":"init","session_id":"11111111-1111-4111-8111-111111111111"}' \
 '{"type":"assistant","message":{"content":[{"type":"text","text":"<result>ok</result>"}]},"session_id":"11111111-1111-4111-8111-111111111111"}' \
 '{"type":"result","subtype":"success","is_error":false,"result":"<result>ok</result>","session_id":"11111111-1111-4111-8111-111111111111","total_cost_usd":NaN}'

# ---- frontmatter: prompt files ------------------------------------------
for f in "$top"/workflows/*/1_START.md "$top"/workflows/classify/CLASSIFY.md \
    "$top"/workflows/review-loop/REVIEW.md; do
	head -n 1 "$f" | grep -qx -- '---' || continue
	cp "$f" "$C/frontmatter/$(basename "$(dirname "$f")")-$(basename "$f" .md)"
done
fm() { printf '%s' "$2" >"$C/frontmatter/$1"; }
fmf() { printf "%b" "$2" >"$C/frontmatter/$1"; }
# A bug the fuzzers found, fixed: a lone CR made errors name a later line.
fm regress-cr-line $'---\nmodel: a\rb: c\rx: [1\n---\nbody\n'
fm none $'Just a prompt.\n---\nnot frontmatter\n---\n'
fm unclosed $'---\nmodel: sonnet\nNo closing fence.\n'
fm bad-yaml $'---\nmodel: sonnet\nallowed_transitions: [ {tag: goto\n---\nbody\n'
fm not-mapping $'---\n- a\n- b\n---\nbody\n'
fm scalar-root $'---\njust text\n---\n'
fm duplicate-key $'---\nmodel: a\n# comment\nmodel: b\n---\n'
# Aliases of aliases (6561 values; the limit of 100000 is left to the
# fuzzer: every input near it costs 100000 values to read).
fm alias-nested $'---\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n---\n'
fm alias-undefined $'---\na: *nope\n---\n'
fm anchors-merge $'---\nbase: &base {tag: goto, target: B}\nallowed_transitions:\n  - <<: *base\n    input: x\n  - *base\n  - &k key: value\n---\n'
fm types $'---\nt: [true, False, YES, no, On, off, ~, null, Null, "", \'\', 1, -2, +3, 0x10, 1.5, .5, 5., 1e3, -1.5E-3, 99999999999999999999, "1", !!str 2, ! 3, !!int 4, 1_000, .inf, .nan]\nempty:\nnull_key: null\n1: integer key\n---\n'
fm wrong-types $'---\nmodel: [a, b]\neffort: extreme\ntimeout: soon\nforce_implicit: "yes"\nallowed_transitions: {tag: goto}\nunknown_field: 1\n---\n'
fm block-scalars $'---\nprompt: |\n  line one\n  line two\nfolded: >-\n  a\n  b\nkeep: |+\n  x\n\n---\nbody\n'
fm crlf $'---\r\nmodel: haiku\r\nallowed_transitions:\r\n  - tag: result\r\n---\r\nbody\r\n'
fmf bom '\xef\xbb\xbf---\nmodel: opus\n---\nbody\n'
fm fence-spaces $'--- \t\nmodel: x\n---  \nbody'
fm fence-at-end $'---\nmodel: x\n---'
fm empty $'---\n---\n'
fm comments-only $'---\n# nothing\n\n---\nbody\n'
fm deep "---
a: $(printf '[%.0s' $(seq 1 70))x$(printf ']%.0s' $(seq 1 70))
---
"
fm complex-key $'---\n? [a, b]\n: c\n---\n'
fm two-docs $'---\na: 1\n...\n--- \nb: 2\n---\n'
fm directives $'---\n%YAML 1.2\n%TAG !e! tag:example.com,2000:\n--- !e!x\na: 1\n---\n'
fmf bad-utf8 '---\nmodel: "\xff\xfe"\n---\n'
fm tabs $'---\nmodel:\tsonnet\n\tbad: indent\n---\n'
fm flow-style $'---\nallowed_transitions: [{tag: call, target: S.md, return: R}, {tag: fork, target: W, next: N, item: x}, {tag: result, payload: "a, b"}]\nmodel: \'claude-opus-4-1\'\ntimeout: 1.5e2\nforce_implicit: yes\n---\nbody {{input}}\n'
fm allowed-mapping $'---\nallowed_transitions:\n  tag: goto\n  target: B\n---\n'

# ---- runstate: state files written by raymond ----------------------------
run_wf() { # NAME DIR ARGS...: run a workflow in a fresh project, keep its state file
	name=$1; dir=$2; shift 2
	p=$tmp/proj-$name
	rm -rf "$p"; mkdir -p "$p"; (cd "$p" && git init -q . 2>/dev/null || mkdir .git)
	cp -r "$dir" "$p/wf"
	(cd "$p" && "$RAYMOND" wf --quiet "$@" >/dev/null 2>&1) || true
	cp "$p"/.raymond/state/*.json "$C/runstate/$name"
}
run_wf hello "$top/workflows/hello" --input you
run_wf fanout "$top/workflows/fanout" --input "one three fifteen"
mkdir -p "$tmp/wf-call"
printf '%s\n' 'echo "<call return=\"BACK\" input=\"x y\">SUB</call>"' >"$tmp/wf-call/START.sh"
printf '%s\n' 'echo "<fork next=\"WAIT\" item=\"a\">W</fork><fork next=\"WAIT\" item=\"b\">W</fork>"' >"$tmp/wf-call/SUB.sh"
printf '%s\n' 'sleep 2; echo "<result>w</result>"' >"$tmp/wf-call/W.sh"
printf '%s\n' 'sleep 0.2; exit 3' >"$tmp/wf-call/WAIT.sh"
printf '%s\n' 'echo "<result>back</result>"' >"$tmp/wf-call/BACK.sh"
run_wf failed-in-call "$tmp/wf-call"
mkdir -p "$tmp/wf-data"
printf '%s\n' 'echo "<goto>B</goto>"' >"$tmp/wf-data/START.sh"
printf '%s\n' 'echo "<result>$RAYMOND_INPUT</result>"' >"$tmp/wf-data/B.sh"
cat >"$tmp/wf-data/hooks.lua" <<'EOF'
return {
  PostTransition = function(e)
    e.run.data.n = (e.run.data.n or 0) + 1
    e.run.data.big = 2^53
    e.run.data.frac = 0.1
    e.run.data.list = { 1, "two", { three = 3 } }
    e.agent.data.seen = e.state
  end,
  PreTransition = function(e)
    if e.state == "START.sh" then return { continue = false, stopReason = "stopped for the seeds" } end
  end,
}
EOF
run_wf hook-data-stopped "$tmp/wf-data"
cp -r "$top/workflows/classify" "$tmp/classify"
printf '\n%s\n' 'MOCK: reply noted' >>"$tmp/classify/1_START.md"
printf '\n%s\n' 'MOCK: reply <result>NEGATIVE</result>' >>"$tmp/classify/CLASSIFY.md"
printf '\n%s\n' 'MOCK: error 401' >>"$tmp/classify/APOLOGISE.md"
run_wf markdown-failed "$tmp/classify" --claude "$FAKE" --input "my order broke"
rs() { printf '%s' "$2" >"$C/runstate/$1"; }
good=$(cat "$C/runstate/failed-in-call")
rs truncated "${good:0:$(( ${#good} / 2 ))}"
rs empty ''
rs not-object '[1, 2, 3]'
rs wrong-format '{"format": 2, "id": "x"}'
rs format-string '{"format": "1", "id": "x"}'
rs minimal '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{},"steps":0,"agents":[]}'
rs wrong-shape '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{"timeout":"600","max_parallel":2.5},"steps":1.5,"agents":[{"id":"main","state":"S.sh","cwd":"/","stack":[{"state":7}]}]}'
rs agents-object '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{"timeout":null},"steps":1e3,"agents":{"a":1},"fork_counters":{"main":2,"x":1e20},"data":{"a":[{},[],null,true,-0.0,1e308]}}'
rs empty-lists '{"format":1.0,"id":"r","workflow":"/w","entry":"START.sh","status":"completed","launch":{"timeout":600,"max_parallel":32,"debug":true,"cwd":"/"},"steps":3,"agents":{},"fork_counters":{},"data":{},"result":"x","cost":0.0075,"paused_until":1795322551}'
rs agent-fields '{"format":1,"id":"r","workflow":"/w","status":"failed","error":"e","launch":{},"steps":2,"agents":[{"id":"main","state":"A.md","cwd":"/tmp","input":"i","session":"s","branch":true,"turn":{"mode":"fresh","id":"u","from":"f"},"cost":0.5,"context":"c","vars":{"item":"x"},"data":{"k":[1,2.5,"3"]},"stack":[{"state":"R.md","session":"s0","cwd":"/"}]}]}'
open=$(printf '[%.0s' $(seq 1 70)); close=$(printf ']%.0s' $(seq 1 70))
rs deep '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{},"steps":0,"agents":[],"data":{"a":'"${open}1${close}"'}}'
rs deep-ok '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{},"steps":0,"agents":[],"data":{"a":[[[[[[[[[[{"b":[[[[[[[[[[1]]]]]]]]]]}]]]]]]]]]]}}'
# Bugs the fuzzers found, fixed in bbde52c and 10f72a7: kept as seeds.
rs regress-deep-data '{"format":1,"id":"r","workflow":"/w","status":"running","launch":{},"steps":0,"agents":[],"data":{"a":'"$(printf '[%.0s' $(seq 1 65))$(printf ']%.0s' $(seq 1 65))"'}}'
rs regress-nul-key '{"format":1,"id":"r","workflow":"/w","status":"failed","launch":{},"steps":1,"agents":[],"fork_counters":{"ma\u0000in":2},"data":{"a\u0000b":"lost"}}'
rs regress-not-finite '{"format":1,"id":"r","workflow":"/w","status":"failed","launch":{},"steps":1,"agents":[],"data":{"n":1e400}}'

# ---- archive: zip files --------------------------------------------------
z=$tmp/z
mkdir -p "$z"
printf 'Say hi.\n' >"$z/START.md"
printf 'echo "<result>ok</result>"\n' >"$z/DONE.sh"
printf 'return {}\n' >"$z/hooks.lua"
: >"$z/empty"
mk() { name=$1; shift; (cd "$z" && "$MKZIP" "$C/archive/$name" "$@"); }
mk flat START.md=START.md DONE.sh=DONE.sh hooks.lua=hooks.lua
mk folder flow/ flow/START.md=START.md flow/DONE.sh=DONE.sh
mk folder-no-dir-entry flow/START.md=START.md flow/empty=empty
mk one-file START.md=START.md
mk dot-segment ./START.md=START.md
mk dotdot ../START.md=START.md
mk absolute /START.md=START.md
mk drive C:START.md=START.md
mk backslash 'flow\START.md=START.md'
mk control "$(printf 'a\001b')=START.md"
mk empty-segment flow//START.md=START.md
mk too-deep a/b/START.md=START.md
mk dir-too-deep flow/ flow/sub/
mk two-folders a/x=START.md b/y=START.md
mk mixed START.md=START.md flow/
mk mixed-files START.md=START.md flow/B.md=START.md
mk no-files flow/
mk same-name-two-folders flow/START.md=START.md flow/x/../START.md=START.md
mk long-name "$(printf 'n%.0s' $(seq 1 300)).md=START.md"
: >"$C/archive/zero-bytes"
printf 'PK\005\006\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000\000' >"$C/archive/empty-archive"
f=$C/archive/flat
head -c $(( $(wc -c <"$f") - 10 )) "$f" >"$C/archive/truncated"
cp "$f" "$C/archive/bad-crc"
off=$(grep -obUa 'Say hi' "$f" | head -n 1 | cut -d: -f1 || true)
[ -n "$off" ] || off=40
printf 'X' | dd of="$C/archive/bad-crc" bs=1 seek="$off" conv=notrunc 2>/dev/null
# A NUL byte in a name, in the local and the central header alike.
cp "$C/archive/one-file" "$C/archive/nul-name"
for o in $(grep -obUa 'START.md' "$C/archive/nul-name" | cut -d: -f1); do
	printf '\000' | dd of="$C/archive/nul-name" bs=1 seek=$((o + 2)) conv=notrunc 2>/dev/null
done
# Two entries with the same name (mkzip refuses; rename one afterwards).
mk dup-name START.md=START.md STARX.md=START.md
for o in $(grep -obUa 'STARX.md' "$C/archive/dup-name" | cut -d: -f1); do
	printf 'T' | dd of="$C/archive/dup-name" bs=1 seek=$((o + 4)) conv=notrunc 2>/dev/null
done
# ---- journal: what a killed run leaves ------------------------------------
p=$tmp/proj-journal
mkdir -p "$p/wf" "$p/.git"
printf '%s\n' 'n=$RAYMOND_INPUT' 'if [ "$n" -ge 6 ]; then sleep 30; fi' \
	'echo "<goto input=\"$((n + 1))\">STEP</goto>"' >"$p/wf/STEP.sh"
(cd "$p" && exec "$RAYMOND" wf/STEP.sh --input 1 --quiet --no-debug >/dev/null 2>&1) &
pid=$!
for _ in $(seq 1 100); do
	j=$(ls "$p"/.raymond/state/*.journal 2>/dev/null || true)
	[ -n "$j" ] && [ "$(tr -d '\000' <"$j" | grep -c RAYR || true)" -ge 1 ] && sleep 0.3 && break
	sleep 0.05
done
kids=$(cat /proc/"$pid"/task/*/children 2>/dev/null || true)
kill -9 "$pid"; wait "$pid" 2>/dev/null || true
# The sleeping state leads a process group of its own; end it too.
for k in $kids; do kill -9 -- "-$k" 2>/dev/null || true; done
# The records sit at the start; the zeros after them add nothing.
head -c 4096 "$j" >"$C/journal/killed"
head -c 32 "$j" >"$C/journal/header-only"
head -c 300 "$j" >"$C/journal/cut"
cp "$C/journal/killed" "$C/journal/bit-flip"
printf '\001' | dd of="$C/journal/bit-flip" bs=1 seek=100 conv=notrunc 2>/dev/null
: >"$C/journal/empty"

# ---- termsafe: a feed size byte, then the text --------------------------
printf '\003a\033[2Jb\033]52;c;aGk=\007 x\by over\rwrite\r\n' >"$C/termsafe/controls"
printf '\002caf\303\251 \342\202\254 \360\237\230\200 \302\233 \233 \342\202' >"$C/termsafe/utf8"
# ---- bridge: a feed size byte, a request (even) or answer (odd) byte,
# then the stream (src/bridge.h) -----------------------------------------
tok=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
printf '\000\000RAYB\001\000\000\000%s\000\000\000\002{}' $tok >"$C/bridge/request"
printf '\005\000RAYB\001\000\000\000%s\000\000\000\010{"a":1}xtra' $tok >"$C/bridge/request-split"
printf '\000\000RAYB\001\000\000\000%s\001\000\000\001' $tok >"$C/bridge/request-too-big"
printf '\000\000RAYB\001\000\000\000%sg\000\000\000\000' ${tok%?} >"$C/bridge/request-bad-token"
printf '\000\000GET / HTTP/1.0\r\n\r\n' >"$C/bridge/not-a-frame"
printf '\003\001RAYB\001\000\000\000\000\000\000\002{}' >"$C/bridge/answer"
printf '\000\001RAYB\001\002\000\000\000\000\000\004deny' >"$C/bridge/answer-deny"
printf '\000\001RAYB\002\007\000\000\000\000\000\000' >"$C/bridge/answer-bad"
# ---- http: a byte of cuts (bits 0-1: how many, bit 2: the client leaves
# without reading), the cuts, then the bytes a client sends
# (fuzz/fuzz_http.c; its server knows this token, login code and Host) ----
T=f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0
CODE=c0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0dec0de
H='Host: 127.0.0.1:8420\r\n'
A="Authorization: Bearer $T\r\n"
ht() { printf '%b' "$2" >"$C/http/$1"; }
ht runs "\000GET /api/runs HTTP/1.1\r\n$H$A\r\n"
ht runs-no-token "\000GET /api/runs HTTP/1.1\r\n$H\r\n"
ht runs-bad-token "\000GET /api/runs HTTP/1.1\r\n${H}Authorization: Bearer 0000\r\n\r\n"
ht runs-cookie "\000GET /api/runs HTTP/1.1\r\n${H}Cookie: a=b; raymond_token=$T\r\n\r\n"
ht run-missing "\000GET /api/runs/nope HTTP/1.1\r\n$H$A\r\n"
ht run-bad-id "\000GET /api/runs/..%2f..%2fx%00y%ff HTTP/1.1\r\n$H$A\r\n"
ht login "\000GET /login?code=$CODE HTTP/1.1\r\n$H\r\n"
ht login-twice "\000GET /login?code=$CODE HTTP/1.1\r\n$H\r\nGET /login?code=$CODE HTTP/1.1\r\n$H\r\n"
ht other-host "\000GET /api/runs HTTP/1.1\r\nHost: attacker.example\r\n$A\r\n"
ht localhost "\000GET /api/runs HTTP/1.1\r\nHost: localhost:8420\r\n$A\r\n"
ht other-origin "\000POST /api/runs HTTP/1.1\r\n${H}Origin: http://attacker.example\r\n$A\r\n"
ht no-host-1.0 "\000GET /api/runs HTTP/1.0\r\n\r\n"
ht not-allowed "\000DELETE /api/runs HTTP/1.1\r\n$H$A\r\n"
ht no-route "\000GET /api/elsewhere?x=%zz HTTP/1.1\r\n$H$A\r\n"
ht launch-outside "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Type: application/json\r\nContent-Length: 39\r\n\r\n{\"workflow\":\"wf\",\"input\":\"x\",\"budget\":1}"
ht launch-bad-json "\002\100\240POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 14\r\n\r\n{\"workflow\":1,"
ht launch-unknown "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 21\r\n\r\n{\"workflow\":\"a\",\"x\":1}"
ht launch-type "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 14\r\n\r\n{\"workflow\":1}"
ht launch-array "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 2\r\n\r\n[]"
ht launch-deep "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 40\r\n\r\n[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
ht resume "\000POST /api/runs/nope/resume HTTP/1.1\r\n$H${A}Content-Length: 2\r\n\r\n{}"
ht answer "\000POST /api/runs/nope/answer HTTP/1.1\r\n$H${A}Content-Length: 27\r\n\r\n{\"ask_id\":\"a\",\"text\":\"yes\"}"
ht chunked "\003\120\170\230POST /api/runs HTTP/1.1\r\n$H${A}Transfer-Encoding: chunked\r\n\r\n5;x=1\r\n{\"wor\r\na\r\nkflow\":\"w\"\r\n1\r\n}\r\n0\r\nX-Trailer: 1\r\n\r\n"
ht chunked-bad "\000POST /api/runs HTTP/1.1\r\n$H${A}Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n"
ht chunked-huge "\000POST /api/runs HTTP/1.1\r\n$H${A}Transfer-Encoding: chunked\r\n\r\nffffffffffffffffff\r\n{}\r\n0\r\n\r\n"
ht both-lengths "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"
ht length-huge "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 99999999999999999999\r\n\r\n{}"
ht length-over "\000POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 2000\r\n\r\n{\"workflow\":\"$(printf 'a%.0s' $(seq 1 1985))\"}"
ht chunked-over "\001\200POST /api/runs HTTP/1.1\r\n$H${A}Transfer-Encoding: chunked\r\n\r\n$(for _ in 1 2 3; do printf '190\\r\\n%s\\r\\n' "$(printf 'b%.0s' $(seq 1 400))"; done)0\r\n\r\n"
ht header-over "\000GET /api/runs HTTP/1.1\r\n${H}X-Big: $(printf 'x%.0s' $(seq 1 4200))\r\n$A\r\n"
ht pipelined "\002\060\220GET /api/runs HTTP/1.1\r\n$H$A\r\nPOST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 2\r\n\r\n{}GET /login?code=x HTTP/1.1\r\n$H\r\n"
ht pipelined-head "\000HEAD /api/runs HTTP/1.1\r\n$H$A\r\nGET /api/runs/x HTTP/1.1\r\n$H$A\r\n"
ht expect-continue "\000POST /api/runs/x/answer HTTP/1.1\r\n$H${A}Expect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"
ht cut-headers "\004GET /api/runs HTTP/1.1\r\n${H}Authori"
ht cut-body "\005\200POST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 100\r\n\r\n{\"workflow\":"
ht bare-lf "\000GET /api/runs HTTP/1.1\nHost: 127.0.0.1:8420\nAuthorization: Bearer $T\n\n"
ht folded "\000GET /api/runs HTTP/1.1\r\n$H$A X-Folded: a\r\n b\r\n\r\n"
ht http2 "\000PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
ht garbage "\000\001\002\377 \r\n\r\n"
# A bug the fuzzer found, fixed: errors quoting the request's bytes were
# not UTF-8.
ht regress-not-utf8 "\000GET /api/%ff%fe HTTP/1.1\r\n$H$A\r\nGET /api/runs HTTP/1.1\r\n${H}Origin: http://\355\240\200\r\n\r\nPOST /api/runs HTTP/1.1\r\n$H${A}Content-Length: 22\r\n\r\n{\"workflow\":\"a\",\"\377\":1}"
ls "$C"/* | sed -n '$='; for d in "$C"/*; do echo "$(basename "$d"): $(ls "$d" | wc -l) seeds"; done
