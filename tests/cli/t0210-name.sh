#!/bin/bash
# --name and the config file's name key (docs/cli.md, "Naming a run"): a
# name for people, kept with the run's launch options, shown by list and
# status (and their --json), and in the terminal's title while the run
# runs when stderr is a terminal.  A name is printable text of at most
# 200 characters.
. "$(dirname "$0")/lib.sh"

unset NO_COLOR
export TERM=xterm
PTY=$(dirname "$RAYMOND")/tests/pty-run
ESC=$(printf '\033')
BEL=$(printf '\007')

ok_wf() {
	state START.sh <<-\EOS
	echo "<result>ok</result>"
	EOS
}

# fails_once: a workflow whose START.sh fails until ./fixed exists.
fails_once() {
	state START.sh <<-\EOS
	[ -e "$OUT/fixed" ] || exit 3
	echo "<result>ok</result>"
	EOS
	export OUT=$PWD
}

test_expect_success 'the name is kept with the run and shown by list, status and their --json' '
	ok_wf &&
	raymond wf --name "nightly review" >out 2>err &&
	grep -qx ok out &&
	grep -q "\"name\":\"nightly review\"" "$(state_file)" &&
	raymond list >list &&
	head -1 list | grep -Eq "^ID +STATUS +COST +ELAPSED +STATES +WORKFLOW +NAME$" &&
	grep -Eq "^$(run_id) +completed .* wf +nightly review$" list &&
	raymond list --json | grep -q "\"id\":\"$(run_id)\",\"name\":\"nightly review\"" &&
	raymond status "$(run_id)" >status &&
	sed -n 2p status | grep -qx "Name:      nightly review" &&
	raymond status "$(run_id)" --json | grep -q "\"name\":\"nightly review\""
'

test_expect_success 'a run without a name shows none: no NAME column, no Name line, no name field' '
	ok_wf &&
	raymond wf >/dev/null 2>&1 &&
	raymond list >list &&
	head -1 list | grep -Eq "^ID +STATUS +COST +ELAPSED +STATES +WORKFLOW$" &&
	! raymond list --json | grep -q "\"name\"" &&
	! raymond status "$(run_id)" | grep -q "^Name:"
'

test_expect_success 'names are UTF-8 text: kept byte for byte' '
	ok_wf &&
	raymond run wf --name "revue été ✓" >/dev/null 2>&1 &&
	raymond status "$(run_id)" | grep -qx "Name:      revue été ✓"
'

test_expect_success 'a name with a control character, an empty one or one over 200 characters is refused; no run starts' '
	ok_wf &&
	expect_status 1 raymond wf --name "a${ESC}]0;pwned${BEL}" 2>err &&
	grep -qx "raymond: error: --name holds a control character (U+001B, character 2); only printable text is allowed" err &&
	grep -qx "hint: give printable text, for example: --name '"'"'nightly review'"'"'" err &&
	expect_status 1 raymond wf --name "$(printf "a\tb")" 2>err &&
	grep -q "^raymond: error: --name holds a control character (U+0009, character 2)" err &&
	expect_status 1 raymond wf --name "" 2>err &&
	grep -qx "raymond: error: --name is empty" err &&
	long=$(printf "%0201d" 0) &&
	expect_status 1 raymond wf --name "$long" 2>err &&
	grep -qx "raymond: error: --name is 201 characters long; at most 200 are allowed" err &&
	raymond wf --name "${long%0}" >/dev/null 2>&1 &&
	expect_status 1 raymond wf --name "$(printf "a\377")" 2>err &&
	grep -qx "raymond: error: --name must be UTF-8 text" err &&
	[ "$(ls .raymond/state | grep -c "\.json$")" = 1 ]
'

test_expect_success 'the config file name key names new runs; --name wins; raymond config says where it came from' '
	ok_wf &&
	mkdir -p .raymond &&
	printf "raymond:\n  name: from the file\n" >.raymond/config.yaml &&
	raymond config >cfg 2>&1 &&
	grep -q "^name = from the file (.raymond/config.yaml:2)" cfg &&
	raymond wf --workflow-id a >/dev/null 2>&1 &&
	raymond status a | grep -qx "Name:      from the file" &&
	raymond wf --workflow-id b --name given >/dev/null 2>&1 &&
	raymond status b | grep -qx "Name:      given" &&
	raymond wf --workflow-id c --no-config >/dev/null 2>&1 &&
	! raymond status c | grep -q "^Name:"
'

test_expect_success 'a bad name in the config file is an error naming FILE:LINE; no run starts' '
	ok_wf &&
	mkdir -p .raymond &&
	printf "raymond:\n  budget: 3\n  name: \"x\\\\ty\"\n" >.raymond/config.yaml &&
	expect_status 1 raymond wf 2>err &&
	grep -qx "raymond: error: .raymond/config.yaml:3: name holds a control character (U+0009, character 2); only printable text is allowed" err &&
	! ls .raymond/state/*.json 2>/dev/null
'

test_expect_success 'a resumed run keeps its name' '
	fails_once &&
	expect_status 1 raymond wf --name keeper >/dev/null 2>&1 &&
	touch fixed &&
	raymond resume "$(run_id)" >out 2>/dev/null &&
	grep -qx ok out &&
	raymond status "$(run_id)" | grep -qx "Name:      keeper"
'

test_expect_success 'a resume takes no --name, in either form: the run keeps the one it was started with' '
	expect_status 1 raymond --resume x --name y 2>err &&
	grep -qx "raymond: error: --name cannot go with --resume: a resumed run keeps the name it was started with" err &&
	expect_status 1 raymond resume x --name y 2>err &&
	grep -qx "raymond: error: option '"'"'--name'"'"' does not go with raymond resume" err
'

test_expect_success 'on a terminal the name is in the title (OSC 0), also with stdout in a file; not without a name' '
	ok_wf &&
	"$PTY" 80 24 log "$RAYMOND" wf --name "nightly review" &&
	grep -aqF "${ESC}]0;nightly review - raymond${BEL}" log &&
	"$PTY" 80 24 log2 sh -c "\"\$0\" wf --name piped >out" "$RAYMOND" &&
	grep -qx ok out &&
	grep -aqF "${ESC}]0;piped - raymond${BEL}" log2 &&
	"$PTY" 80 24 log3 "$RAYMOND" wf &&
	! grep -aqF "${ESC}]0;" log3
'

test_expect_success 'stderr not a terminal: no title sequence anywhere' '
	ok_wf &&
	raymond wf --name "nightly review" >out 2>err &&
	! grep -aqF "${ESC}]" out err
'

test_expect_success 'a resumed run puts its name in the title again' '
	fails_once &&
	expect_status 1 raymond wf --name again >/dev/null 2>&1 &&
	touch fixed &&
	"$PTY" 80 24 log "$RAYMOND" resume "$(run_id)" &&
	grep -aqF "${ESC}]0;again - raymond${BEL}" log
'

test_expect_success 'a state file whose name holds a control character is not read as a valid state' '
	ok_wf &&
	raymond wf --name plain >/dev/null 2>&1 &&
	sed -i "s/\"name\":\"plain\"/\"name\":\"a\\\\u001bb\"/" "$(state_file)" &&
	grep -q "u001b" "$(state_file)" &&
	raymond list >list &&
	grep -q "unreadable .*launch.name holds a control character (U+001B, character 2)" list
'

test_done
