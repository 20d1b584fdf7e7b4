#!/bin/bash
# Worker variables: a <fork>'s extra attributes become environment
# variables of the worker's scripts, so only harmless lowercase names are
# taken, from a model, a script, or a hand-edited state file.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# A worker that leaves a mark, and BASH_ENV's file, which leaves another
# if bash ever sources it.
worker() {
	state W.sh <<-\EOS &&
	echo "$item" >>"$OUT/w-ran"
	echo "<result>w</result>"
	EOS
	state NEXT.sh <<-\EOS &&
	echo "<result>next</result>"
	EOS
	echo 'touch "$OUT/sourced"' >evil.sh &&
	export OUT=$PWD
}

test_expect_success 'a script forking with BASH_ENV= fails, and no worker starts' '
	worker &&
	state START.sh <<-EOS &&
	echo "<fork next=\"NEXT\" BASH_ENV=\"$PWD/evil.sh\">W</fork>"
	EOS
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	grep -qF "raymond: error: wf/START.sh (agent main): <fork>W</fork>: attribute '"'"'BASH_ENV'"'"' cannot be a worker variable: a name must be lowercase letters, digits and _" err &&
	test ! -e w-ran && test ! -e sourced
'

test_expect_success 'PATH, LD_PRELOAD, HOME, RAYMOND_INPUT and a proxy variable are refused alike' '
	worker &&
	for name in PATH LD_PRELOAD HOME RAYMOND_INPUT http_proxy; do
		printf "echo \"<fork next=\\\\\"NEXT\\\\\" %s=\\\\\"x\\\\\">W</fork>\"\n" "$name" | state START.sh &&
		rm -rf .raymond &&
		expect_status 1 raymond wf --quiet >out 2>err &&
		grep -qF "attribute '"'"'$name'"'"' cannot be a worker variable" err || { cat err; return 1; }
	done &&
	test ! -e w-ran
'

test_expect_success 'a lowercase name reaches the worker as a variable' '
	worker &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"NEXT\" item=\"apple\">W</fork>"
	EOS
	raymond wf --quiet >out 2>err &&
	grep -qx apple w-ran
'

test_expect_success 'a model forking with HOME= is reminded, and its next fork runs' '
	worker &&
	mkdir -p fake && export RAYMOND_CLAUDE="$FAKE" FAKE_CLAUDE_DIR=$PWD/fake &&
	state START.md <<-\EOS &&
	---
	allowed_transitions:
	  - {tag: fork, target: W, next: NEXT}
	---
	Fan out.
	MOCK: reply <fork next="NEXT" HOME="/tmp">W</fork> || reply <fork next="NEXT" item="pear">W</fork>
	EOS
	raymond wf --no-lint --quiet >out 2>err &&
	grep -qx pear w-ran &&
	grep -qF "REMINDER: your last reply was not accepted: <fork>W</fork>: attribute '"'"'HOME'"'"' cannot be a worker variable" fake/log.jsonl
'

test_expect_success 'a state file whose worker has an upper-case variable is refused on resume and left as it is' '
	worker &&
	state START.sh <<-\EOS &&
	echo "<fork next=\"NEXT\" item=\"a\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	exit 3
	EOS
	expect_status 1 raymond wf --quiet >out 2>err &&
	sed "s/\"vars\":{\"item\":\"a\"}/\"vars\":{\"LD_PRELOAD\":\"x.so\"}/" "$(state_file)" >edited &&
	! cmp -s edited "$(state_file)" &&
	cp edited "$(state_file)" &&
	expect_status 1 raymond --resume "$(run_id)" >out 2>err &&
	grep -qF "is not a valid raymond state: agents[" err &&
	grep -qF "].vars: '"'"'LD_PRELOAD'"'"' cannot be a worker variable" err &&
	grep -qF "hint: the file was left as it is" err &&
	cmp edited "$(state_file)"
'

test_done
