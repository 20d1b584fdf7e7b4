#!/bin/bash
# A transition a hook returns (PreTransition, PreState, and on_max_visits
# in hooks/visits.lua) passes the same checks as one a state prints:
# targets that are paths or another platform's scripts, worker variable
# names, and cd= outside the run's directory.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

# START.sh -> B.sh; a hook file returning TRANSITION (Lua) from EVENT;
# B.sh and W.sh leave marks.
hooked() {
	state START.sh <<-\EOS &&
	echo "<goto>B</goto>"
	EOS
	state B.sh <<-\EOS &&
	touch "$OUT/b-ran"
	echo "<result>b</result>"
	EOS
	state W.sh <<-\EOS &&
	touch "$OUT/w-ran"
	echo "<result>w</result>"
	EOS
	echo "echo '<result>never</result>'" | state ONLYBAT.bat &&
	printf "return { %s = function(ev)\n  if ev.state == \"START.sh\" then return { transition = %s } end\nend }\n" "$1" "$2" >wf/hooks.lua &&
	export OUT=$PWD
}

# fails_with TEXT: the run failed with TEXT in its error, and neither B
# nor W ran.  Lint before the run finds some of these decisions already;
# --no-lint shows that the engine refuses them too.
fails_with() {
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	grep -qF -- "$1" err || { echo "no '$1' in:"; cat err; return 1; }
	test ! -e b-ran && test ! -e w-ran
}

test_expect_success 'a hook'"'"'s target with a path is refused' '
	hooked PreTransition "{ tag = \"goto\", target = \"../B\" }" &&
	fails_with "returned an invalid transition: <goto>../B</goto>: target '"'"'../B'"'"' contains a path separator"
'

test_expect_success 'a hook'"'"'s target that exists only as .bat is refused, naming the file' '
	hooked PreTransition "{ tag = \"goto\", target = \"ONLYBAT\" }" &&
	fails_with "returned an invalid transition: <goto>ONLYBAT</goto>: state '"'"'ONLYBAT'"'"' exists only as ONLYBAT.bat, a Windows script, which is not supported on this platform; write it as ONLYBAT.sh"
'

test_expect_success 'a hook'"'"'s fork with an upper-case variable is refused' '
	hooked PreTransition "{ tag = \"fork\", target = \"W\", next = \"B\", PATH = \"/tmp/evil\" }" &&
	fails_with "returned an invalid transition: <fork>W</fork>: attribute '"'"'PATH'"'"' cannot be a worker variable"
'

test_expect_success 'a hook'"'"'s fork with a variable raymond'"'"'s environment holds is refused' '
	hooked PreState "{ tag = \"fork\", target = \"W\", next = \"B\", shadowed = \"x\" }" &&
	export shadowed=mine &&
	fails_with "returned an invalid transition: <fork>W</fork>: attribute '"'"'shadowed'"'"' cannot be a worker variable: raymond'"'"'s own environment has shadowed"
'

test_expect_success 'a hook'"'"'s cd outside the run'"'"'s directory is refused' '
	hooked PreTransition "{ tag = \"reset\", target = \"B\", cd = \"/\" }" &&
	fails_with "cd=\"/\" resolves to /, outside the directory the run was started in"
'

test_expect_success 'a hook'"'"'s fork cd outside the run'"'"'s directory is refused' '
	hooked PreState "{ tag = \"fork\", target = \"W\", next = \"B\", cd = \"..\" }" &&
	fails_with "cd=\"..\" resolves to $(cd .. && pwd -P), outside the directory the run was started in"
'

# A markdown state that loops on itself, with max_visits 1 and
# on_max_visits TARGET.
visits_to() {
	mkdir -p fake && export RAYMOND_CLAUDE="$FAKE" FAKE_CLAUDE_DIR=$PWD/fake &&
	state START.md <<-EOS &&
	---
	max_visits: 1
	on_max_visits: $1
	---
	Again.
	MOCK: reply <goto>START</goto>
	EOS
	echo "echo '<result>never</result>'" | state ONLYBAT.bat &&
	echo "echo '<result>x</result>'" | state X.sh
}

test_expect_success 'on_max_visits naming a path is refused like a tag' '
	visits_to ../X &&
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	grep -qF "hooks/visits.lua" err &&
	grep -qF "returned an invalid transition: <goto>../X</goto>: target '"'"'../X'"'"' contains a path separator" err
'

test_expect_success 'on_max_visits naming a state that exists only as .bat is refused, naming the file' '
	visits_to ONLYBAT &&
	expect_status 1 raymond wf --no-lint --quiet >out 2>err &&
	grep -qF "returned an invalid transition: <goto>ONLYBAT</goto>: state '"'"'ONLYBAT'"'"' exists only as ONLYBAT.bat" err
'

test_done
