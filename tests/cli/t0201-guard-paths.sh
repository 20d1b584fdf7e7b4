#!/bin/bash
# The default hook guard.lua with the fake Claude Code CLI, whose Write and
# Edit tools act for real: protect_paths refuses a write to a protected
# path, however the path is written, and lets others through; commands are
# not asked about.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

results() { grep -F '"kind":"tool_result"' fake/events.jsonl; }

test_expect_success 'protect_paths: a Write to a protected path is denied and the file untouched; the model reads why' '
	use_fake &&
	mkdir -p secrets && echo old >secrets/key &&
	state START.md <<-EOS &&
	---
	protect_paths: ["secrets/**", ".env"]
	---
	MOCK: tool Write {"file_path":"$PWD/sub/../secrets/key","content":"new"} => <result>done</result>
	EOS
	raymond wf >out 2>err &&
	cat err &&
	test "$(cat out)" = done &&
	test "$(cat secrets/key)" = old &&
	grep -F "\\\"matcher\\\":\\\"Edit|MultiEdit|NotebookEdit|Write\\\"}" fake/log.jsonl &&
	results | grep -F "\"text\":\"protect_paths rule \\\"secrets/**\\\" of START.md forbids Write to: secrets/key\",\"is_error\":true" &&
	grep -F "protect_paths rule \"secrets/**\" of START.md forbids Write to: secrets/key" err
'

test_expect_success 'protect_paths: a relative pattern is placed in the agent'\''s folder and a relative path in the cwd; a path outside the patterns is written' '
	use_fake &&
	echo old >.env &&
	state START.md <<-\EOS &&
	---
	protect_paths: ["secrets/**", ".env"]
	---
	MOCK: tool Edit {"file_path":"./.env","old_string":"old","new_string":"new"} => <goto>NEXT</goto>
	EOS
	state NEXT.md <<-\EOS &&
	---
	protect_paths: ["secrets/**", ".env"]
	---
	MOCK: tool Write {"file_path":"notes/ok.txt","content":"fine"} => <result>done</result>
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat .env)" = old &&
	test "$(cat notes/ok.txt)" = fine &&
	results | grep -F "protect_paths rule \\\".env\\\" of START.md forbids Edit to: .env\",\"is_error\":true" &&
	test "$(results | grep -c "\"is_error\":true")" = 1
'

test_expect_success 'protect_paths: after <reset cd=...> the patterns are placed in the agent'\''s new folder' '
	use_fake &&
	mkdir -p sub && echo old >.env && echo old >sub/.env &&
	state START.md <<-\EOS &&
	MOCK: reply <reset cd="sub">NEXT.md</reset>
	EOS
	state NEXT.md <<-\EOS &&
	---
	protect_paths: [".env"]
	---
	MOCK: tool Write {"file_path":".env","content":"new"} => <goto>LAST.md</goto>
	EOS
	state LAST.md <<-\EOS &&
	---
	protect_paths: [".env"]
	---
	MOCK: tool Write {"file_path":"../.env","content":"new"} => <result>done</result>
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat sub/.env)" = old &&
	test "$(cat .env)" = new &&
	results | grep -F "protect_paths rule \\\".env\\\" of NEXT.md forbids Write to: .env\",\"is_error\":true" &&
	test "$(results | grep -c "\"is_error\":true")" = 1
'

test_expect_success 'protect_paths alone: Bash calls are not asked about' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	protect_paths: [".env"]
	---
	MOCK: bash touch ran => <result>done</result>
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test -e ran &&
	! grep -F "\"kind\":\"hook\"" fake/events.jsonl
'

test_done
