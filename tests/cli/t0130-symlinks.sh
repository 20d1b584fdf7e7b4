#!/bin/bash
# Nothing under .raymond/ is written through a symbolic link.  A link
# planted at .raymond itself, at one of its folders or at one of a run's
# files (pointing at a file or folder outside the test's project) makes
# raymond refuse with a message naming the link, and what the link points
# at is left exactly as it was: not written, not created, not removed.
. "$(dirname "$0")/lib.sh"

MKZIP="$(dirname "$RAYMOND")/tests/mkzip"

# The project is ./proj; what links point at lives in ./outside.
setup() {
	mkdir -p proj/.git outside/dir &&
	echo precious >outside/file &&
	cp outside/file outside/file.orig &&
	cd proj &&
	two_step
}

# untouched: the outside file and folder are as they were, and nothing
# was created next to them.
untouched() {
	cmp ../outside/file ../outside/file.orig &&
	test -z "$(ls -A ../outside/dir)" &&
	test "$(ls ../outside | sort | tr "\n" " ")" = "dir file file.orig "
}

# refused LINK: raymond's output names LINK as a symbolic link.
refused() {
	cat err &&
	grep -qF "raymond: error: '$PWD/$1' is a symbolic link, and raymond does not write through links" err &&
	grep -qF "hint: raymond keeps its runs only in real folders and files under .raymond; remove the link and run again" err
}

test_expect_success '.raymond itself a link to a folder outside: refused, nothing written there' '
	setup &&
	ln -s ../outside/dir .raymond &&
	expect_status 1 raymond wf 2>err &&
	refused .raymond &&
	untouched && test ! -e b-ran
'

for sub in state debug extract; do
	test_expect_success ".raymond/$sub a link to a folder outside: refused, nothing written there" '
		setup &&
		mkdir .raymond &&
		ln -s ../../outside/dir .raymond/'$sub' &&
		expect_status 1 raymond wf 2>err &&
		refused .raymond/'$sub' &&
		untouched && test ! -e b-ran
	'
done

# resume_refused PATH TARGET: a run stopped by a failing step, ready for
# --resume, gets a link at .raymond/PATH (ID in PATH is the run's id)
# pointing at TARGET; the resume refuses and TARGET is untouched.
resume_refused() {
	setup &&
	state B.sh <<-\EOS &&
	if [ -e fixed ]; then echo "<result>b</result>"; else exit 3; fi
	EOS
	expect_status 1 raymond wf --quiet 2>/dev/null &&
	link=.raymond/$(echo "$1" | sed "s/ID/$(run_id)/") &&
	id=$(run_id) &&
	rm -rf "$link" && mkdir -p "$(dirname "$link")" &&
	ln -s "$2" "$link" &&
	touch fixed &&
	expect_status 1 raymond --resume "$id" --quiet 2>err &&
	refused "$link" &&
	untouched
}

for f in ID.json ID.journal ID.lock ID.json.lock; do
	test_expect_success "the run's .raymond/state/$f a link to a file outside: --resume refuses" '
		resume_refused "state/'$f'" "$PWD/outside/file"
	'
done

test_expect_success "the run's debug record a link to a file outside: --resume refuses" '
	resume_refused debug/ID.record "$PWD/outside/file"
'

test_expect_success "the run's extract folder a link to a folder outside: --resume refuses" '
	resume_refused extract/ID "$PWD/outside/dir"
'

test_expect_success "the run's children folder a link to a folder outside: --resume refuses and removes nothing there" '
	mkdir -p kept &&
	echo notes >kept/notes &&
	echo "1 1" >kept/0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9 &&
	resume_refused state/ID.children "$PWD/kept" &&
	test "$(cat ../kept/notes)" = notes &&
	test "$(cat ../kept/0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9)" = "1 1"
'

test_expect_success 'a dangling link at a new run'"'"'s lock is refused and creates nothing' '
	setup &&
	mkdir -p .raymond/state &&
	ln -s ../../../outside/new .raymond/state/fixed-id.lock &&
	expect_status 1 raymond wf --workflow-id fixed-id 2>err &&
	refused .raymond/state/fixed-id.lock &&
	untouched && test ! -e b-ran
'

test_expect_success ".raymond/extract planted as a link mid-run (by a model's tool call) is refused before unpacking" '
	setup &&
	export RAYMOND_CLAUDE="$(dirname "$RAYMOND")/tests/fake-claude" FAKE_CLAUDE_DIR=$PWD/fake &&
	mkdir -p fake zipped &&
	printf "%s\n" "plant a link" \
		"MOCK: bash ln -s ../../outside/dir .raymond/extract => <goto>B.sh</goto>" >zipped/START.md &&
	cp wf/B.sh zipped/B.sh &&
	"$(dirname "$RAYMOND")/tests/mkzip" flow.zip START.md=zipped/START.md B.sh=zipped/B.sh &&
	expect_status 1 raymond flow.zip --quiet 2>err &&
	test -L .raymond/extract &&
	cat err &&
	grep -qF "cannot unpack the workflow archive: '"'"'$PWD/.raymond/extract'"'"' is a symbolic link, and raymond does not write through links" err &&
	untouched && test ! -e b-ran
'

test_done
