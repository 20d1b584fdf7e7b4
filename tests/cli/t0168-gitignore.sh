#!/bin/bash
# .raymond/ ignores itself but for the project's config: raymond gives it
# a .gitignore holding "*" and "!/config.yaml", so runs never end up in the
# project's commits while config.yaml can be shared; a user's own is kept,
# and the "*" an earlier raymond wrote is brought up to date.
. "$(dirname "$0")/lib.sh"

# project: cd into a new git repository holding the workflow wf/, with a
# script state; what a test writes itself goes in the folder above.
project() {
	mkdir repo && cd repo && git init -q . &&
	state START.sh <<-\EOS
	echo "<result>ok</result>"
	EOS
}

# ignore_after_run TEXT AFTER: a run in a .raymond whose .gitignore holds
# TEXT (printf's format) leaves it holding AFTER.
ignore_after_run() {
	mkdir -p .raymond && printf "$1" >.raymond/.gitignore &&
	raymond wf --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "$2"
}

# What raymond writes in .raymond/.gitignore.
IGNORE=$(printf "*\n!/config.yaml")

test_expect_success 'the .raymond a run makes holds a .gitignore, and git status shows no run file' '
	project &&
	raymond wf --quiet >../out &&
	test "$(cat .raymond/.gitignore)" = "$IGNORE" &&
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
	test "$(cat .raymond/.gitignore)" = "$IGNORE" &&
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
	test "$(cat .raymond/.gitignore)" = "$IGNORE"
'''

test_expect_success 'the project config shows in git status and can be committed; the runs and the .gitignore stay ignored' '
	project &&
	raymond init-config >../out &&
	raymond wf --quiet >../out &&
	mkdir -p .raymond/extract/x && touch .raymond/extract/x/config.yaml .raymond/state/config.yaml &&
	git status --porcelain --untracked-files=all >../st &&
	cat ../st &&
	test "$(cat ../st)" = "$(printf "?? .raymond/config.yaml\n?? wf/START.sh")" &&
	for f in .gitignore state debug extract/x/config.yaml state/config.yaml; do
		git check-ignore -q .raymond/$f || { echo "not ignored: $f"; return 1; }
	done &&
	! git check-ignore -q .raymond/config.yaml &&
	git add .raymond/config.yaml && git -c user.name=u -c user.email=u@x commit -qm c &&
	test "$(git ls-files .raymond)" = ".raymond/config.yaml"
'

test_expect_success 'the "*" an earlier raymond wrote is brought up to date; a longer file is not' '
	project &&
	ignore_after_run "*\n" "$IGNORE" &&
	ignore_after_run "*\n# mine\n" "$(printf "*\n# mine")"
'

test_expect_success 'a .gitignore of the user in .raymond is left as it is' '
	project &&
	ignore_after_run "debug/\n" "debug/" &&
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
