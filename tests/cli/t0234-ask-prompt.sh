#!/bin/bash
# --on-ask prompt: the question on the terminal (a pty, tests/fake/pty-run.c),
# the answer typed while the other agents go on; without a terminal, and
# after the end of input, the run pauses as with --on-ask pause.
. "$(dirname "$0")/lib.sh"

PTY=$(dirname "$RAYMOND")/tests/pty-run

# main forks a worker, then asks.  The worker waits until the question is
# on the terminal (the test makes `prompted`), takes one more transition
# (W2.sh makes w2-ran) and waits for the answer's state (DONE.sh makes go).
prompt_workflow() {
	state START.sh <<-\EOS &&
	echo "<fork next=\"MAIN.sh\">W.sh</fork>"
	EOS
	state MAIN.sh <<-\EOS &&
	echo "<ask next=\"DONE.sh\">Deploy now?</ask>"
	EOS
	state W.sh <<-\EOS &&
	for _ in $(seq 1 1200); do [ -e prompted ] && break; sleep 0.05; done
	echo "<goto>W2.sh</goto>"
	EOS
	state W2.sh <<-\EOS &&
	touch w2-ran
	for _ in $(seq 1 1200); do [ -e go ] && break; sleep 0.05; done
	echo "<result>worker done</result>"
	EOS
	state DONE.sh <<-\EOS
	touch go
	echo "<result>got $RAYMOND_INPUT</result>"
	EOS
}

test_expect_success 'the question is asked on the terminal; the others go on while it waits; the line typed is the answer' '
	prompt_workflow &&
	: >input
	PTY_RUN_INPUT=$PWD/input "$PTY" 100 30 out "$RAYMOND" wf --on-ask prompt --workflow-id p &
	pid=$!
	wait_for_line out "answer> " &&
	grep -Eq "\[main\] asks \(ask_main_[0-9]+\): Deploy now\?" out &&
	touch prompted &&
	wait_for_file w2-ran &&
	"$RAYMOND" --status p --json >st &&
	grep -q "\"status\":\"asking\"" st &&
	echo "yes, deploy" >>input &&
	wait $pid &&
	tr -d "\r" <out >clean &&
	grep -qx "got yes, deploy" clean &&
	grep -q "MAIN.sh -> ask ask_main_[0-9]* answered; going on at DONE.sh" clean &&
	grep -q "\"response_text\":\"yes, deploy\"" .raymond/state/p.json
'

test_expect_success 'without a terminal on stdin, prompt pauses as pause does (exit 2 and the JSON)' '
	prompt_workflow &&
	touch prompted &&
	expect_status 2 raymond wf --on-ask prompt --workflow-id q </dev/null >json 2>err &&
	grep -q "\"prompt\": \"Deploy now?\"" json &&
	grep -q "\"on_ask\":\"prompt\"" .raymond/state/q.json &&
	! grep -q "answer> " err
'

test_expect_success 'at the end of input (Ctrl-D) the question waits for raymond resume ID --input' '
	prompt_workflow &&
	touch prompted go &&
	: >input
	PTY_RUN_INPUT=$PWD/input "$PTY" 100 30 out "$RAYMOND" wf --on-ask prompt --workflow-id e &
	pid=$!
	wait_for_line out "answer> " &&
	printf "\004" >>input &&
	expect_status 2 wait $pid &&
	grep -q "end of input: the questions left wait for raymond resume e --input TEXT" out &&
	raymond --resume e --input later --quiet </dev/null >res &&
	test "$(cat res)" = "got later"
'

test_expect_success 'the deadline holds while the terminal waits: nobody types, the agent takes timeout_next' '
	state START.sh <<-\EOS &&
	echo "<ask next=\"DONE.sh\" timeout=\"1s\" timeout_next=\"LATE.sh\">Anyone?</ask>"
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>answered</result>"
	EOS
	state LATE.sh <<-\EOS &&
	echo "<result>nobody answered</result>"
	EOS
	: >input &&
	PTY_RUN_INPUT=$PWD/input "$PTY" 100 30 out "$RAYMOND" wf --on-ask prompt --workflow-id t &&
	tr -d "\r" <out >clean &&
	grep -q "answer> " clean &&
	grep -qx "nobody answered" clean &&
	grep -q "\"timed_out\":true" .raymond/state/t.json
'

test_done
