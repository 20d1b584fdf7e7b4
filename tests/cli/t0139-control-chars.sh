#!/bin/bash
# Text a model or a child prints reaches the terminal and the logs with
# its control characters shown, not obeyed: <print> text, the model's text
# shown live, error lines quoting output, names a model chose, the result
# on a terminal, status.  The result kept byte for byte when stdout is a
# pipe or a file, and the debug record, keep the raw bytes.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

# The payload: clear the screen (CSI 2J), write the clipboard (OSC 52),
# ring the bell, and overwrite text with a backspace and a carriage return.
PAYLOAD=$(printf '\033[2J\033]52;c;aGk=\007 bell\007 x\by over\rwrite')
SHOWN='^[[2J^[]52;c;aGk=^G bell^G x^Hy over^Mwrite'

# raw FILE: FILE holds none of ESC, BEL, BS, or a CR not before a newline.
raw_free() {
	if LC_ALL=C grep -q "$(printf '[\033\007\010]')" "$1" ||
	    LC_ALL=C grep -q "$(printf '\r')." "$1"; then
		echo "raw control characters in $1:"; od -c "$1" | head -20
		return 1
	fi
}

shows() { grep -qF -- "$2" "$1" || { echo "$1 lacks: $2"; od -c "$1" | head -20; return 1; }; }

test_expect_success '<print> text of a script is shown, not obeyed; the debug record keeps the bytes' '
	printf "printf \"<print>%%s</print>\\\\n\" \"\$P\"\necho \"<result>ok</result>\"\n" >START.sh &&
	mkdir wf && mv START.sh wf/ &&
	P=$PAYLOAD raymond wf --quiet >out &&
	raw_free out &&
	shows out "$SHOWN" &&
	record_piece .raymond/debug/$(run_id).record 1 stdout >rec &&
	grep -qF -- "$PAYLOAD" rec
'

test_expect_success 'the result: raw bytes into a pipe or file, shown on a terminal' '
	state START.sh <<-\EOS &&
	printf "<result>%s</result>\n" "$P"
	EOS
	P=$PAYLOAD raymond wf --quiet >out &&
	printf "%s\n" "$PAYLOAD" >want &&
	cmp want out &&
	P=$PAYLOAD script -qfec "\"$RAYMOND\" wf --quiet" /dev/null >tty &&
	raw_free tty &&
	shows tty "$SHOWN" &&
	raymond status "$(run_id)" >status &&
	raw_free status &&
	shows status "Result:    $SHOWN"
'

test_expect_success 'the model'"'"'s text shown live on stderr' '
	mkdir -p fake &&
	export RAYMOND_CLAUDE="$FAKE" FAKE_CLAUDE_DIR=$PWD/fake &&
	printf "go\nMOCK: reply said %s\\\\n<result>ok</result>\n" "$PAYLOAD" >START.md &&
	mkdir wf && mv START.md wf/ &&
	raymond wf >out 2>err &&
	raw_free err &&
	shows err "[main] said $SHOWN"
'

test_expect_success '<print> text of a model'"'"'s reply is shown, not obeyed, as a script'"'"'s is' '
	use_fake &&
	printf "go\nMOCK: reply <print>%s</print><result>ok</result>\n" "$PAYLOAD" >START.md &&
	mkdir wf && mv START.md wf/ &&
	raymond wf --quiet >out &&
	raw_free out &&
	printf "%s\nok\n" "$SHOWN" >want &&
	cmp want out
'

test_expect_success 'error lines quoting a failed script'"'"'s output' '
	state START.sh <<-\EOS &&
	printf "%s\n" "$P" >&2
	exit 1
	EOS
	P=$PAYLOAD expect_status 1 raymond wf >out 2>err &&
	raw_free err &&
	shows err "  | $SHOWN"
'

test_expect_success 'a target name a model chose, in the error and the log' '
	state START.sh <<-\EOS &&
	printf "<goto>%s</goto>\n" "$P"
	EOS
	P=$PAYLOAD expect_status 1 raymond wf >out 2>err &&
	raw_free err &&
	shows err "^[[2J"
'

test_expect_success 'a hook printing a child'"'"'s output' '
	state START.sh <<-\EOS &&
	printf "%s\n<result>ok</result>\n" "$P"
	EOS
	echo "return { PostState = function(ev) print(ev.output) end }" >wf/hooks.lua &&
	P=$PAYLOAD raymond wf --quiet >out 2>err &&
	raw_free err &&
	shows err "[hook] $SHOWN"
'

test_done
