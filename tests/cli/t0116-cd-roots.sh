#!/bin/bash
# cd= stays inside the directory the run was started in (after symlinks),
# unless --allow-cd names another root; a hand-edited state is held to
# the same roots on resume.
. "$(dirname "$0")/lib.sh"

# A project folder (the run's directory) with a folder beside it, a
# symlink inside pointing there, and a workflow whose B.sh records where
# it ran.  The test continues inside proj/.
project() {
	mkdir -p proj/sub outside &&
	ln -s ../outside proj/link &&
	cd proj &&
	state B.sh <<-\EOS
	pwd -P >>"$OUT/b-ran"
	echo "<result>b</result>"
	EOS
	export OUT=$PWD
}

# refused TAG TEXT: START.sh printing TAG fails the run with TEXT in its
# error, and B never runs.
refused() {
	printf "echo %q\n" "$1" | state START.sh &&
	expect_status 1 raymond wf --quiet >out 2>err &&
	grep -qF -- "$2" err || { echo "no '$2' in:"; cat err; return 1; }
	test ! -e b-ran
}

test_expect_success 'cd="/" is refused, naming where it leads and how to allow it' '
	project &&
	refused "<reset cd=\"/\">B</reset>" "raymond: error: wf/START.sh (agent main): cd=\"/\" resolves to /, outside the directory the run was started in ($(pwd -P)); to let states work there, give --allow-cd / to raymond run or raymond resume"
'

test_expect_success 'a fork'"'"'s cd=".." above the project is refused' '
	project &&
	refused "<fork next=\"B\" cd=\"..\">B</fork>" "cd=\"..\" resolves to $(cd .. && pwd -P), outside the directory the run was started in"
'

test_expect_success 'a symlink inside the project that leads out of it is refused' '
	project &&
	refused "<reset cd=\"link\">B</reset>" "cd=\"link\" resolves to $(cd ../outside && pwd -P), outside"
'

test_expect_success 'cd inside the project works, through .. too' '
	project &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"sub/../sub\">B</reset>"
	EOS
	raymond wf --quiet >out 2>err &&
	grep -qx "$(pwd -P)/sub" b-ran
'

test_expect_success '--allow-cd lets cd lead into another root' '
	project &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"link\">B</reset>"
	EOS
	raymond wf --quiet --allow-cd ../outside >out 2>err &&
	grep -qx "$(cd ../outside && pwd -P)" b-ran
'

test_expect_success 'a run refused a cd continues with resume --allow-cd, which is kept' '
	project &&
	state START.sh <<-\EOS &&
	echo "<reset cd=\"link\">B</reset>"
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	raymond --resume "$(run_id)" --quiet --allow-cd "$(cd ../outside && pwd -P)" >out 2>err &&
	grep -qx "$(cd ../outside && pwd -P)" b-ran &&
	grep -qF "\"allow_cd\":[\"$(cd ../outside && pwd -P)\"]" "$(state_file)"
'

test_expect_success '--allow-cd of a missing directory is an error' '
	project &&
	state START.sh <<-\EOS &&
	echo "<result>x</result>"
	EOS
	expect_status 1 raymond wf --quiet --allow-cd nowhere >out 2>err &&
	grep -qx "raymond: error: --allow-cd nowhere: not a directory" err
'

# resume_moved DIR: a run whose START.sh fails, with its main agent's
# directory edited to DIR in the state file (the edit kept in ./edited),
# is refused on resume.
resume_moved() {
	expect_status 1 raymond wf --quiet >out 2>err &&
	sed "s|\"cwd\":\"$(pwd -P)\",\"data\"|\"cwd\":\"$1\",\"data\"|" "$(state_file)" >edited &&
	! cmp -s edited "$(state_file)" &&
	cp edited "$(state_file)" &&
	expect_status 1 raymond --resume "$(run_id)" >out 2>err
}

test_expect_success 'a hand-edited state that puts an agent outside the project is refused on resume' '
	project &&
	state START.sh <<-\EOS &&
	exit 4
	EOS
	resume_moved / &&
	grep -qF "is not a valid raymond state: agents[1].cwd / is outside the directory the run was started in" err &&
	cmp edited "$(state_file)"
'

test_expect_success 'a hand-edited agent directory that does not exist is refused on resume, not read as text' '
	project &&
	state START.sh <<-\EOS &&
	pwd -P >>"$OUT/start-ran"
	exit 4
	EOS
	resume_moved "$(pwd -P)/missing/../../outside" &&
	grep -qF "is not a valid raymond state: agents[1].cwd '"'"'$(pwd -P)/missing/../../outside'"'"', the directory of agent main, does not exist" err &&
	grep -qF "hint: the file was left as it is; create the directory again, restore the file from a backup, or start a new run" err &&
	cmp edited "$(state_file)" &&
	test "$(wc -l <start-ran)" -eq 1
'

test_done
