#!/bin/bash
# The default hook guard.lua's patterns before any tool runs: a state
# without deny_commands, allow_commands or protect_paths gets no tool hooks
# at all; a bad pattern is a lint error, and with --no-lint it stops the
# run before the state's turn, resumably.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

jstr() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p"; }
jlit() { sed -n "s/.*\"$1\":\(true\|false\|null\)[,}].*/\1/p"; }

test_expect_success 'a state without tool rules: the turn gets no --settings' '
	use_fake &&
	state START.md <<-\EOS &&
	MOCK: reply <result>done</result>
	EOS
	raymond wf --quiet >out &&
	test "$(cat out)" = done &&
	calls 1 &&
	test "$(jlit settings <fake/log.jsonl)" = null &&
	! grep -F -- "--settings" fake/log.jsonl
'

test_expect_success 'lint: each bad pattern is an error naming its line; the run does not start' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	deny_commands: ["git push*", "make && git push"]
	allow_commands:
	  - make *
	  - a: b
	protect_paths: ["secrets/**", "", "src/*/../x"]
	---
	MOCK: reply <result>done</result>
	EOS
	expect_status 1 raymond lint wf >out &&
	cat out &&
	grep -xF "wf/START.md:2: error: deny_commands pattern \"make && git push\" can never match: a command line is split at ;, &, |, &&, || and line ends, and each command is matched alone; give each its own pattern [invalid-guard-pattern]" out &&
	grep -xF "wf/START.md:3: error: allow_commands holds a mapping, not a pattern (write each pattern as a string, quoted if it holds a colon or starts with * or [) [invalid-guard-pattern]" out &&
	grep -xF "wf/START.md:6: error: protect_paths holds an empty pattern, which matches nothing [invalid-guard-pattern]" out &&
	grep -xF "wf/START.md:6: error: protect_paths pattern \"src/*/../x\" can never match: a .. after a wildcard names no one folder [invalid-guard-pattern]" out &&
	grep -xF "4 errors" out &&
	expect_status 1 raymond wf 2>err &&
	grep -F "[invalid-guard-pattern]" err &&
	grep -F "raymond: error: wf has 4 errors; the run was not started" err &&
	test ! -e fake/log.jsonl
'

test_expect_success 'good patterns: no finding' '
	state START.md <<-\EOS &&
	---
	deny_commands: ["git push*", "git commit -m \"wip; later\"*", "make 2>&1"]
	allow_commands: ["make *", "echo $(date)*"]
	protect_paths: ["secrets/**", "**/*.lock", "/etc", "~/.ssh", "../shared/*.md"]
	---
	<result>done</result>
	EOS
	raymond lint wf >out &&
	grep -xF "No issues found." out
'

test_expect_success 'with --no-lint a bad pattern stops the run before the turn; fixed, --resume runs it' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	deny_commands: ["make; git push"]
	---
	MOCK: reply <result>done</result>
	EOS
	expect_status 1 raymond wf --no-lint 2>err &&
	cat err &&
	grep -F "hook hooks/guard.lua failed in its tools function: START.md: deny_commands pattern \"make; git push\" can never match" err &&
	test ! -e fake/log.jsonl &&
	id=$(sed -n "s/.*continue with: raymond --resume \([^ ]*\).*/\1/p" err) &&
	test -n "$id" &&
	sed -i "s/make; git push/git push*/" wf/START.md &&
	raymond --resume "$id" --quiet >out 2>err &&
	test "$(cat out)" = done &&
	calls 1
'

test_done
