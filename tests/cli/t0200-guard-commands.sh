#!/bin/bash
# The default hook guard.lua with the fake Claude Code CLI, whose Bash tool
# runs for real: deny_commands and allow_commands refuse a command before
# it runs, the model reads the rule as the tool's result and the turn goes
# on; a command the rules let through runs.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# A `git` first on PATH that writes its arguments to ./git-ran, so a test
# can tell whether it ran.
fake_git() {
	mkdir -p bin &&
	printf '#!/bin/sh\necho "$*" >>"%s/git-ran"\n' "$PWD" >bin/git &&
	chmod +x bin/git
}

# The text and error flag of the fake's tool results, one a line.
results() { grep -F '"kind":"tool_result"' fake/events.jsonl; }

test_expect_success 'deny_commands: git push is denied and never runs; the model reads the rule; the turn goes on' '
	use_fake && fake_git &&
	state START.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	MOCK: bash git push origin main => <result>done</result>
	EOS
	PATH=$PWD/bin:$PATH raymond wf >out 2>err &&
	cat err &&
	test "$(cat out)" = done &&
	test ! -e git-ran &&
	results | grep -F "\"text\":\"deny_commands rule \\\"git push*\\\" of START.md forbids: git push origin main\",\"is_error\":true" &&
	grep -F "Bash \"git push origin main\" denied by hooks/guard.lua:" err &&
	grep -F "deny_commands rule \"git push*\" of START.md forbids: git push origin main" err &&
	grep -F "\\\"matcher\\\":\\\"Bash\\\"}" fake/log.jsonl
'

test_expect_success 'deny_commands: a command the rules do not name runs, also beside a denied one on another turn' '
	use_fake && fake_git &&
	state START.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	MOCK: bash git status => <goto>NEXT</goto>
	EOS
	state NEXT.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	MOCK: bash git commit -m x && FOO=1 git push => <result>done</result>
	EOS
	PATH=$PWD/bin:$PATH raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat git-ran)" = status &&
	results | grep -F "deny_commands rule \\\"git push*\\\" of NEXT.md forbids: FOO=1 git push\",\"is_error\":true"
'

test_expect_success 'allow_commands: a command outside the list is denied with the list; one inside runs' '
	use_fake && fake_git &&
	state START.md <<-\EOS &&
	---
	allow_commands: ["git status", "touch made*"]
	---
	MOCK: bash touch made && git status => <goto>NEXT</goto>
	EOS
	state NEXT.md <<-\EOS &&
	---
	allow_commands: ["git status", "touch made*"]
	---
	MOCK: bash git status; sh -c "touch other" => <result>done</result>
	EOS
	PATH=$PWD/bin:$PATH raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test -e made &&
	test "$(cat git-ran)" = status &&
	test ! -e other &&
	results | grep -F "allow_commands of NEXT.md do not include: sh -c \\\"touch other\\\"; allowed: \\\"git status\\\", \\\"touch made*\\\"\",\"is_error\":true"
'

test_expect_success 'the rules are per state: the same command runs where its state has none' '
	use_fake && fake_git &&
	state START.md <<-\EOS &&
	---
	deny_commands: ["git push*"]
	---
	MOCK: bash git push => <goto>RELEASE</goto>
	EOS
	state RELEASE.md <<-\EOS &&
	MOCK: bash git push => <result>done</result>
	EOS
	PATH=$PWD/bin:$PATH raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	test "$(cat git-ran)" = push &&
	test "$(results | grep -c "\"is_error\":true")" = 1
'

test_done
