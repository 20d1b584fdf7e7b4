#!/bin/bash
# worktree="NAME" on <fork> and <reset>: the agent works in a git worktree
# of its own under .raymond/worktrees/, removed when the agent ends unless
# it holds uncommitted changes (then kept and reported); outside a git
# repository a clear error leaves the run as it was; a kill -9 around
# `git worktree add` is resumed without a second worktree.
. "$(dirname "$0")/lib.sh"

# git is what worktrees are made with; a bare machine gets it here.
command -v git >/dev/null || sh "$TESTS_TOP/tools/apt-install.sh" test git

export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
# A test folder is never taken for part of a repository further up.
export GIT_CEILING_DIRECTORIES=$TEST_ROOT

# repo: the test folder becomes a git repository with one commit; the
# workflow lives outside it, in ../wf-<n>, so `git status` sees only
# what the states do.
repo() {
	git init -q . &&
	echo base >base.txt &&
	git add base.txt &&
	git commit -qm base
}

# worktrees: the worktrees git lists besides the main one, one path a line.
worktrees() { git worktree list --porcelain | sed -n 's/^worktree //p' | sed 1d; }

test_expect_success 'a fork of two workers in worktrees: the clean one is removed, the dirty one kept and reported' '
	repo &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE.sh\" worktree=\"one\">CLEAN.sh</fork><fork worktree=\"two\">DIRTY.sh</fork>"
	EOS
	state CLEAN.sh <<-\EOS &&
	pwd -P >"$OUT/clean-dir"
	echo work >clean.txt && git add clean.txt && git commit -qm clean
	echo "<result>clean</result>"
	EOS
	state DIRTY.sh <<-\EOS &&
	pwd -P >"$OUT/dirty-dir"
	echo half >dirty.txt
	echo "<result>dirty</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	raymond wf >out 2>err &&
	id=$(run_id) &&
	root=$(pwd -P)/.raymond/worktrees/$id &&
	test "$(cat clean-dir)" = "$root/main_clean1-one" &&
	test "$(cat dirty-dir)" = "$root/main_dirty2-two" &&
	# The clean worktree is gone; its commit stays on its branch.
	test ! -e "$root/main_clean1-one" &&
	git log --format=%s "raymond/$id/main_clean1-one" | grep -x clean &&
	grep -F "[main_clean1] removed worktree .raymond/worktrees/$id/main_clean1-one; its commits stay on branch raymond/$id/main_clean1-one" err &&
	# The dirty one is kept with its file, and said so everywhere.
	test "$(worktrees)" = "$root/main_dirty2-two" &&
	test "$(cat "$root/main_dirty2-two/dirty.txt")" = half &&
	grep -F "[main_dirty2] kept worktree .raymond/worktrees/$id/main_dirty2-two (branch raymond/$id/main_dirty2-two): 1 uncommitted change" err &&
	raymond status "$id" >status &&
	grep -F "Kept:      $root/main_dirty2-two (branch raymond/$id/main_dirty2-two, agent main_dirty2): 1 uncommitted change" status &&
	grep -aF "kept worktree .raymond/worktrees/$id/main_dirty2-two" ".raymond/debug/$id.record" &&
	# The main checkout saw none of it.
	test -z "$(git status --porcelain --untracked-files=no)" &&
	test ! -e clean.txt && test ! -e dirty.txt
'

test_expect_success 'a worktree left clean without commits goes with its branch; <reset worktree=> moves the agent itself, cd= within it' '
	repo &&
	state START.sh <<-\EOS &&
	echo "<reset worktree=\"solo\">WORK.sh</reset>"
	EOS
	state WORK.sh <<-\EOS &&
	pwd -P >"$OUT/work-dir"
	mkdir sub
	echo "<reset cd=\"sub\">END.sh</reset>"
	EOS
	state END.sh <<-\EOS &&
	pwd -P >"$OUT/end-dir"
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD &&
	raymond wf >out 2>err &&
	id=$(run_id) &&
	wt=$(pwd -P)/.raymond/worktrees/$id/main-solo &&
	test "$(cat work-dir)" = "$wt" &&
	test "$(cat end-dir)" = "$wt/sub" &&
	test ! -e "$wt" &&
	test -z "$(worktrees)" &&
	test -z "$(git branch --list "raymond/*")" &&
	grep -F "[main] removed worktree .raymond/worktrees/$id/main-solo and its branch" err
'

test_expect_success 'a markdown worker runs its Claude turns in its worktree' '
	repo &&
	use_fake &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE.sh\" worktree=\"md\">W.md</fork>"
	EOS
	state W.md <<-\EOS &&
	Work in {{task_folder}}.
	MOCK: reply <result>ok</result>
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	raymond wf >out 2>err &&
	wt=$(pwd -P)/.raymond/worktrees/$(run_id)/main_w1-md &&
	grep -F "\"cwd\":\"$wt\"" fake/log.jsonl &&
	grep -F "[main_w1] removed worktree" err
'

test_expect_success 'outside a git repository: a clear error, and the run is as it was' '
	state START.sh <<-\EOS &&
	echo "start" >>"$OUT/start-ran"
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf >out 2>err &&
	grep -F "raymond: error: wf/START.sh (agent main): <fork worktree=\"w\">: $(pwd -P) is not in a git repository with a commit" err &&
	state_json >state &&
	grep -q "\"state\":\"START.sh\"" state &&
	! grep -q W.sh state &&
	! grep -q "\"fork_counters\":{\"main\"" state &&
	test ! -e .raymond/worktrees &&
	# Once it is one, the same run goes on from START.
	repo &&
	raymond resume "$(run_id)" >out 2>err &&
	test "$(cat out)" = done &&
	test "$(wc -l <start-ran)" -eq 2
'

test_expect_success 'a bad worktree name fails the state naming the tag, changing nothing' '
	repo &&
	state START.sh <<-\EOS &&
	echo "<reset worktree=\"../../x\">START.sh</reset>"
	EOS
	# raymond lint sees it first ...
	expect_status 1 raymond wf >out 2>err &&
	grep -F "wf/START.sh:1: error: <reset worktree=\"../../x\">: '"'"'../../x'"'"' is not a worktree name" err &&
	grep -F "[invalid-worktree-name]" err &&
	test -z "$(ls .raymond/state 2>/dev/null)" &&
	# ... and a run started anyway fails at the tag.
	expect_status 1 raymond wf --no-lint >out 2>err &&
	grep -F "raymond: error: wf/START.sh (agent main): <reset worktree=\"../../x\">: '"'"'../../x'"'"' is not a worktree name" err &&
	test ! -e .raymond/worktrees && test -z "$(worktrees)" &&
	state_json | grep -q "\"state\":\"START.sh\""
'

test_expect_success 'an agent has one worktree: the same name goes on in it, another is an error' '
	repo &&
	state START.sh <<-\EOS &&
	echo "<reset worktree=\"a\">AGAIN.sh</reset>"
	EOS
	state AGAIN.sh <<-\EOS &&
	pwd -P >>"$OUT/dirs"
	if [ -e "$OUT/second" ]; then echo "<reset worktree=\"b\">AGAIN.sh</reset>"; exit 0; fi
	touch "$OUT/second"
	echo "<reset worktree=\"a\">AGAIN.sh</reset>"
	EOS
	export OUT=$PWD &&
	expect_status 1 raymond wf >out 2>err &&
	wt=$(pwd -P)/.raymond/worktrees/$(run_id)/main-a &&
	printf "%s\n" "$wt" "$wt" >want && diff want dirs &&
	grep -F "<reset worktree=\"b\">: agent main already works in worktree \"a\", and an agent has one worktree at a time" err &&
	test "$(worktrees)" = "$wt"
'

# A git on PATH that holds `git worktree add` until ./go exists: before
# the real git runs (MODE=before) or after (MODE=after), so raymond can
# be killed at either moment; MODE=remove holds `git worktree remove`
# before it runs.
slow_git() {
	mkdir -p bin &&
	real=$(command -v git) &&
	cat >bin/git <<-EOS &&
	#!/bin/bash
	case " \$* " in
	*" worktree add "*)
		if [ "\$MODE" = before ]; then touch "$PWD/adding"; while [ ! -e "$PWD/go" ]; do sleep 0.05; done; fi
		"$real" "\$@" || exit
		if [ "\$MODE" = after ]; then touch "$PWD/adding"; while [ ! -e "$PWD/go" ]; do sleep 0.05; done; fi
		exit 0 ;;
	*" worktree remove "*)
		if [ "\$MODE" = remove ]; then touch "$PWD/adding"; while [ ! -e "$PWD/go" ]; do sleep 0.05; done; fi ;;
	esac
	exec "$real" "\$@"
	EOS
	chmod +x bin/git
}

crash_flow() {
	repo
	slow_git
	state START.sh <<-\EOS
	echo "start" >>"$OUT/start-ran"
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS
	pwd -P >>"$OUT/w-dirs"
	echo x >>made.txt
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
	PATH=$PWD/bin:$PATH MODE=$1 "$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file adding &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	# The plan was saved before git ran.
	id=$(run_id) &&
	wt=$(pwd -P)/.raymond/worktrees/$id/main_w1-w &&
	state_json >state &&
	grep -qF "\"path\":\"$wt\"" state &&
	grep -qF "\"branch\":\"raymond/$id/main_w1-w\"" state &&
	if [ "$1" = before ]; then test ! -e "$wt"; else test -d "$wt"; fi &&
	raymond status "$id" | grep -F "    in worktree $wt (branch raymond/$id/main_w1-w)" &&
	touch go &&
	raymond resume "$id" >out 2>err &&
	test "$(cat out)" = done &&
	test "$(wc -l <start-ran)" -eq 1 &&
	test "$(cat w-dirs)" = "$wt" &&
	# One worktree, kept for the change W made, with that one change.
	test "$(worktrees)" = "$wt" &&
	test "$(cat "$wt/made.txt")" = x
}

test_expect_success 'kill -9 while git adds the worktree: the resume adds it from the saved plan' '
	crash_flow before
'

test_expect_success 'kill -9 after git added the worktree: the resume reuses it' '
	crash_flow after
'

test_expect_success 'Ctrl-C while git adds the worktree: the run is interrupted, not failed, and the resume adds it' '
	repo
	slow_git
	state START.sh <<-\EOS
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS
	echo "<result>done</result>"
	EOS
	PATH=$PWD/bin:$PATH MODE=before "$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file adding &&
	kill -INT "$pid" &&
	{ wait "$pid"; code=$?; } || code=$?
	test "$code" = 130 &&
	state_json | grep -q "\"status\":\"interrupted\"" &&
	raymond resume "$(run_id)" >out 2>err &&
	test "$(cat out)" = done &&
	grep -F "[main_w1] removed worktree" err &&
	test -z "$(worktrees)"
'

test_expect_success 'kill -9 while git removes the worktree of an ending agent: the resume ends it again, nothing lost' '
	repo
	slow_git
	state START.sh <<-\EOS
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS
	pwd -P >>"$OUT/w-dirs"
	echo x >>made.txt && git add made.txt && git commit -qm "made $(wc -l <made.txt)"
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
	PATH=$PWD/bin:$PATH MODE=remove "$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file adding &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	id=$(run_id) &&
	wt=$(pwd -P)/.raymond/worktrees/$id/main_w1-w &&
	# The agent was out of the worktree, on disk, before git touched it.
	state_json >state &&
	grep -qF "\"cwd\":\"$(pwd -P)\",\"data\":{},\"id\":\"main_w1\"" state &&
	touch go &&
	raymond resume "$id" >out 2>err &&
	test "$(cat out)" = done &&
	# W ran again in the same worktree (its transition was not saved), and
	# both its commits are on the branch; the worktree is gone.
	printf "%s\n" "$wt" "$wt" >want && diff want w-dirs &&
	test -z "$(worktrees)" &&
	test "$(git log --format=%s "raymond/$id/main_w1-w" | head -2 | tr "\n" " ")" = "made 2 made 1 "
'

test_expect_success 'a run started below the project root: its worktrees are among the cd roots, also on resume' '
	repo
	mkdir -p sub
	cd sub
	state START.sh <<-\EOS
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS
	pwd -P >>"$OUT/w-dirs"
	touch "$OUT/in-w"
	for _ in $(seq 1200); do [ -e "$OUT/go" ] && break; sleep 0.05; done
	echo "<reset cd=\"..\">END.sh</reset>"
	EOS
	state END.sh <<-\EOS
	pwd -P >>"$OUT/w-dirs"
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file in-w &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	id=$(cd .. && run_id) &&
	wt=$(cd .. && pwd -P)/.raymond/worktrees/$id/main_w1-w &&
	test -d "$wt" &&
	touch go &&
	raymond resume "$id" >out 2>err &&
	test "$(cat out)" = done &&
	# W ran again in the worktree; its cd=".." led out of the worktree
	# to the worktrees folder, inside the cd roots.
	printf "%s\n" "$wt" "$wt" "$(dirname "$wt")" >want && diff want w-dirs &&
	test -z "$(cd .. && worktrees)"
'

test_expect_success 'a worktree removed by hand while the run was killed is added again from its branch' '
	repo
	state START.sh <<-\EOS
	echo "<fork next=\"DONE.sh\" worktree=\"w\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS
	if [ ! -e kept.txt ]; then echo kept >kept.txt && git add kept.txt && git commit -qm kept; fi
	ls >>"$OUT/w-files"
	touch "$OUT/in-w"
	for _ in $(seq 1200); do [ -e "$OUT/go" ] && break; sleep 0.05; done
	git rm -q kept.txt && git commit -qm unkept
	echo "<result>w</result>"
	EOS
	state DONE.sh <<-\EOS
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
	"$RAYMOND" wf --quiet >out 2>err &
	pid=$!
	wait_for_file in-w &&
	kill -9 "$pid" && wait_for_exit "$pid" &&
	id=$(run_id) &&
	wt=$(pwd -P)/.raymond/worktrees/$id/main_w1-w &&
	rm -rf "$wt" &&
	# The killed run left W waiting; the resume stops it before anything
	# runs and starts W again, so go comes only then.
	rm in-w &&
	{ "$RAYMOND" resume "$id" >out 2>err & } &&
	pid=$! &&
	wait_for_file in-w &&
	touch go &&
	wait $pid &&
	test "$(cat out)" = done &&
	# The second W found the commit of the first on the branch.
	test "$(grep -c kept.txt w-files)" = 2 &&
	test -z "$(worktrees)" &&
	git log --format=%s "raymond/$id/main_w1-w" | head -1 | grep -x unkept
'

test_expect_success 'a join worker in a worktree that fails or is cancelled leaves it kept and reported' '
	repo &&
	export OUT=$PWD &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"DONE.sh\" join=\"SUM.sh\" wait=\"first\" worktree=\"a\" job=\"fail\">W.sh</fork>"
	echo "<fork next=\"DONE.sh\" join=\"SUM.sh\" wait=\"first\" worktree=\"b\" job=\"win\">W.sh</fork>"
	echo "<fork next=\"DONE.sh\" join=\"SUM.sh\" wait=\"first\" worktree=\"c\" job=\"slow\">W.sh</fork>"
	EOS
	state W.sh <<-\EOS &&
	case $job in
	fail) exit 3 ;;
	win) for _ in $(seq 1200); do test -e "$OUT/failed" && break; sleep 0.05; done ;;
	slow) touch "$OUT/slow-started"; sleep 300 ;;
	esac
	echo "<result>$job</result>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	state SUM.sh <<-\EOS &&
	echo "<result>summary</result>"
	EOS
	# The winner waits until the failure is in and the slow one runs.
	raymond wf >out 2>err &
	pid=$! &&
	wait_until 60 grep -q "gathered as a failure" err &&
	wait_for_file slow-started &&
	touch failed &&
	wait_for_exit $pid 60 &&
	id=$(run_id) &&
	grep -F "[main_w1] kept worktree .raymond/worktrees/$id/main_w1-a (branch raymond/$id/main_w1-a): it failed, and its join gathered the failure" err &&
	grep -F "[main_w3] kept worktree .raymond/worktrees/$id/main_w3-c (branch raymond/$id/main_w3-c): its join no longer waits for it" err &&
	grep -F "[main_w2] removed worktree .raymond/worktrees/$id/main_w2-b and its branch" err &&
	raymond status "$id" >status &&
	grep -F "agent main_w1): it failed" status &&
	grep -F "agent main_w3): its join no longer waits for it" status
'

test_done
