#!/bin/bash
# .raymond/ ignores itself: raymond gives it a .gitignore holding "*", so
# runs never end up in the project's commits; a user's own is kept.
. "$(dirname "$0")/lib.sh"

# project: cd into a new git repository holding the workflow wf/, with a
# script state; what a test writes itself goes in the folder above.
project() {
	mkdir repo && cd repo && git init -q . &&
	state START.sh <<-\EOS
	echo "<result>ok</result>"
	EOS
}

test_expect_success 'the .raymond a run makes holds a .gitignore, and git status shows no run file' '
	project &&
	raymond wf --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "*" &&
	git status --porcelain --untracked-files=all >../st &&
	cat ../st &&
	test "$(cat ../st)" = "?? wf/START.sh" &&
	git add -A && test -z "$(git diff --cached --name-only | grep raymond)"
'

test_expect_success 'a .raymond made without one gets it on the next run' '
	project &&
	mkdir -p .raymond/state .raymond/debug &&
	echo old >.raymond/debug/old.record &&
	git status --porcelain --untracked-files=all | grep -q "^?? .raymond/debug/old.record$" &&
	raymond wf --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "*" &&
	test "$(git status --porcelain --untracked-files=all)" = "?? wf/START.sh"
'

test_expect_success 'a resumed run gives it to a .raymond that lost it' '''
	project &&
	state START.sh <<-\EOS &&
	[ -e ../fixed ] || exit 2
	echo "<result>ok</result>"
	EOS
	expect_status 1 raymond wf --workflow-id r1 --quiet 2>/dev/null &&
	rm .raymond/.gitignore &&
	touch ../fixed &&
	raymond resume r1 --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "*"
'''

test_expect_success 'a .gitignore of the user in .raymond is left as it is' '
	project &&
	mkdir -p .raymond &&
	printf "debug/\n" >.raymond/.gitignore &&
	raymond wf --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "debug/" &&
	git status --porcelain --untracked-files=all | grep -q "^?? .raymond/state/"
'

test_expect_success 'a .gitignore that is a link is neither followed nor replaced' '
	project &&
	mkdir -p .raymond &&
	ln -s ../elsewhere .raymond/.gitignore &&
	raymond wf --quiet >../out &&
	test -L .raymond/.gitignore && test ! -e elsewhere && test ! -e ../elsewhere
'

test_done
