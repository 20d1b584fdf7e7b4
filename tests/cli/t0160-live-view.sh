#!/bin/bash
# The live view on a terminal (docs/cli.md, "The live view"): a block of
# one line per live agent and a footer, redrawn in place under the lines
# that scroll, and nothing of it when stdout is not a terminal.  Runs
# raymond on a pseudo-terminal (tests/fake/pty-run.c) and works out the
# final screen from the raw bytes (screen.awk).
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE NO_COLOR
export TERM=xterm
PTY=$(dirname "$RAYMOND")/tests/pty-run
SCREEN=$(cd "$(dirname "$0")" && pwd)/screen.awk
ESC=$(printf '\033')

# on_pty LOG CMD...: run CMD on a COLSxROWS pty (80x24), its output in LOG.
on_pty() { log=$1; shift; "$PTY" "${COLS:-80}" "${ROWS:-24}" "$log" "$@"; }

# screen LOG: the screen LOG leaves, one row a line, then "cursor: ...".
screen() {
	local nl=0
	[ "$(tail -c1 "$1" | od -An -c | tr -d ' ')" = '\n' ] && nl=1
	LC_ALL=C awk -v lastnl=$nl -f "$SCREEN" "$1"
}

# shows LOG REGEX...: the screen LOG leaves now has a row matching each
# extended REGEX.  The bytes looked at stay in ./snap and that screen in
# ./snap.screen, for further checks of the same moment.
shows() {
	local log=$1
	shift
	cp "$log" snap 2>/dev/null && screen snap >snap.screen || return 1
	for re in "$@"; do grep -Eq -- "$re" snap.screen || return 1; done
}

# block_gone SCREEN: the final screen holds no row of START.sh's block and
# no sequence the terminal interpreter does not know, and the cursor is
# shown at the end.
block_gone() {
	! grep -q "^main  START.sh" "$1" &&
	! grep -q "^unknown" "$1" &&
	tail -1 "$1" | grep -qx "cursor: shown"
}

# A fork: main prints, then waits in WAIT.sh for ./go; the worker prints,
# then waits in W.sh for ./go.  (A state that waits also ends once the
# test's folder is gone, so a failed test leaves nothing running.)
forked() {
	state START.sh <<-\EOS &&
	echo "<print>hello from main</print>"
	echo "<fork next=\"WAIT\">W</fork>"
	EOS
	state W.sh <<-\EOS &&
	echo "<print>worker says hi</print>"
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>w</result>"
	EOS
	state WAIT.sh <<-\EOS &&
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>done</result>"
	EOS
	export OUT=$PWD
}

test_expect_success 'the block shows each live agent and a footer, and gives way to the footer at the end' '
	forked &&
	{ on_pty log "$RAYMOND" wf & } &&
	wait_until 60 shows log "^main  WAIT\.sh  [0-9]+:[0-9][0-9]$" "^main_w1  W\.sh  [0-9]+:[0-9][0-9]$" \
		"^\\\$0\.0000 of \\\$10\.00 budget  2 agents live, 0 done  [0-9]+:[0-9][0-9]$" "^cursor: hidden$" \
		"^hello from main$" "^\[main_w1\] worker says hi$" &&
	tail -2 snap.screen | head -1 | grep -q "2 agents live" &&
	touch go &&
	wait &&
	screen log >final &&
	grep -qx "hello from main" final &&
	grep -qx "\[main_w1\] worker says hi" final &&
	grep -qx "\[main\] WAIT.sh -> result (agent done)" final &&
	grep -Eqx "\\\$0\.0000 of \\\$10\.00 budget  0 agents live, 2 done  [0-9]+:[0-9][0-9]" final &&
	grep -qx done final &&
	! grep -q "W.sh  [0-9]" final &&
	! grep -q "agents live, 0 done" final &&
	! grep -q "^unknown" final &&
	tail -1 final | grep -qx "cursor: shown"
'

# shown_for SECS: the screen ./log leaves (in ./snap, as shows leaves it)
# has the footer of a run that has been going SECS seconds or more; the
# seconds it shows are left in $secs.  Any value from SECS on will do: a
# poll that comes a second late must not miss the moment.
shown_for() {
	local t
	shows log "^main  START\.sh  [0-9]+:[0-9][0-9]$" "budget  1 agent live, 0 done  [0-9]+:[0-9][0-9]$" &&
	t=$(grep -Eo "budget  1 agent live, 0 done  [0-9]+:[0-9][0-9]$" snap.screen | grep -Eo "[0-9]+:[0-9][0-9]$" | tail -1) &&
	secs=$(( 10#${t%%:*} * 60 + 10#${t##*:} )) &&
	[ "$secs" -ge "$1" ]
}

# The block changes when the agent's time or the run's does: each once a
# second, so at most about twice a second, never at every 0.1 s tick.
test_expect_success 'the block is redrawn only when it changes: about once a second while states wait' '
	state START.sh <<-\EOS &&
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	{ on_pty log "$RAYMOND" wf & } &&
	wait_until 60 shown_for 3 &&
	draws=$(grep -ao "budget  1 agent live" snap | wc -l) &&
	touch go &&
	wait &&
	echo "draws in $secs s: $draws" &&
	[ "$draws" -ge 1 ] && [ "$draws" -le $((2 * secs + 2)) ]
'

test_expect_success 'NO_COLOR: the view is on, without colour' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	NO_COLOR=1 on_pty log "$RAYMOND" wf &&
	grep -q "$ESC\[?25l" log &&
	! grep -aq "$ESC\[[0-9;]*m" log &&
	on_pty log2 "$RAYMOND" wf &&
	grep -aq "$ESC\[[0-9;]*m" log2
'

test_expect_success 'stdout a pipe or a file: no escape sequence anywhere, and the result alone on stdout' '
	forked &&
	touch go &&
	on_pty log sh -c "\"\$RAYMOND\" wf >out" &&
	! grep -aq "$ESC" log &&
	! grep -aq "$ESC" out &&
	printf "hello from main\nworker says hi\ndone\n" >want &&
	cmp want out &&
	grep -q "\[main\] START.sh -> fork" log
'

test_expect_success '$(raymond --quiet wf) and $(raymond wf) capture only the result' '
	state START.sh <<-\EOS &&
	echo "<result>the result</result>"
	EOS
	on_pty log sh -c "x=\$(\"\$RAYMOND\" --quiet wf); printf %s \"\$x\" >cap1; y=\$(\"\$RAYMOND\" wf); printf %s \"\$y\" >cap2" &&
	printf "the result" >want &&
	cmp want cap1 &&
	cmp want cap2 &&
	! grep -aq "$ESC" log &&
	grep -q "completed" log
'

test_expect_success '--quiet on a terminal: no view and no progress, the result still shown' '
	state START.sh <<-\EOS &&
	echo "<result>ok</result>"
	EOS
	on_pty log "$RAYMOND" --quiet wf &&
	! grep -aq "$ESC" log &&
	screen log >final &&
	printf "ok\n\ncursor: shown\n" >want &&
	cmp want final
'

test_expect_success 'a fake claude turn'"'"'s tool calls show as short lines, and its text safely' '
	use_fake &&
	state START.md <<-EOS &&
	do it
	MOCK: bash make test => checked $ESC[31mred <result>ok</result>
	EOS
	on_pty log "$RAYMOND" wf &&
	screen log >final &&
	grep -qx "\[main\] Bash make test" final &&
	grep -qF "[main] checked ^[[31mred" final &&
	! grep -aq "$ESC\[31m" log &&
	"$RAYMOND" wf >out 2>err &&
	grep -qx "\[main\] Bash make test" err
'

test_expect_success 'an agent'"'"'s line shows the cost of its last Claude turn; the footer the run'"'"'s' '
	use_fake &&
	state START.md <<-\EOS &&
	a turn
	MOCK: reply <goto>WAIT</goto>
	EOS
	state WAIT.sh <<-\EOS &&
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	{ on_pty log "$RAYMOND" wf & } &&
	wait_until 60 shows log "^main  WAIT\.sh  [0-9]+:[0-9][0-9]  last turn \\\$0\.0075$" \
		"^\\\$0\.0075 of \\\$10\.00 budget  1 agent live, 0 done" &&
	touch go &&
	wait
'

test_expect_success 'a model'"'"'s long line is cut to the terminal'"'"'s width' '
	use_fake &&
	long=$(printf "word%.0s " $(seq 40)) &&
	state START.md <<-EOS &&
	do it
	MOCK: reply $long<result>ok</result>
	EOS
	COLS=40 on_pty log "$RAYMOND" wf &&
	screen log >final &&
	line=$(grep "^\[main\] word" final) &&
	[ "${#line}" -eq 39 ] &&
	! grep -q "^unknown" final
'

test_expect_success 'prints of forked agents are prefixed on a terminal, as printed on a pipe' '
	forked &&
	touch go &&
	on_pty log "$RAYMOND" --quiet wf &&
	screen log >final &&
	grep -qx "hello from main" final &&
	grep -qx "\[main_w1\] worker says hi" final &&
	"$RAYMOND" --quiet wf >out &&
	grep -qx "worker says hi" out
'

test_expect_success 'a hook decision scrolls above the block, naming its file and line' '
	two_step &&
	echo "echo \"<result>c</result>\"" | state C.sh &&
	printf "return {\n  PreTransition = function(ev)\n    if ev.state == \"START.sh\" then return { transition = { tag = \"goto\", target = \"C\" }, reason = \"C is better\" } end\n  end,\n}\n" >wf/hooks.lua &&
	on_pty log "$RAYMOND" wf &&
	screen log >final &&
	grep -qx "\[main\] wf/hooks.lua:2 PreTransition: routed START.sh -> goto C.sh: C is better" final &&
	grep -qx c final
'

# stopped_by SIG: the run, stopped by SIG while its state waits, leaves
# the terminal with the block gone, the cursor shown, and says how to go on.
stopped_by() {
	state START.sh <<-\EOS &&
	touch "$OUT/started"
	while [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>never</result>"
	EOS
	export OUT=$PWD &&
	{ PTY_RUN_PIDFILE=$PWD/pid on_pty log "$RAYMOND" wf; echo $? >rc; } &
	wait_for_file started &&
	wait_until 60 shows log "^main  START\.sh  " "^cursor: hidden$" &&
	kill -"$1" "$(cat pid)" &&
	wait &&
	[ "$(cat rc)" = 130 ] &&
	screen log >final &&
	grep -q "interrupted; continue with: raymond --resume" final &&
	grep -Eqx "\\\$0\.0000 of \\\$10\.00 budget  1 agent live, 0 done  [0-9]+:[0-9][0-9]" final &&
	block_gone final
}

test_expect_success 'SIGINT: the block is cleared, the cursor shown, the run resumable' '
	stopped_by INT
'

test_expect_success 'SIGTERM: likewise' '
	stopped_by TERM
'

test_expect_success 'an error: the message scrolls above, the block gives way, the cursor shows' '
	state START.sh <<-\EOS &&
	echo "<print>about to fail</print>"
	exit 7
	EOS
	expect_status 1 on_pty log "$RAYMOND" wf &&
	screen log >final &&
	grep -qx "about to fail" final &&
	grep -q "raymond: error: .*script exited with status 7" final &&
	block_gone final
'

test_expect_success 'more agents than the screen has rows: the block fits, saying how many more' '
	state START.sh <<-\EOS &&
	for i in $(seq 12); do echo "<fork next=\"WAIT\">W</fork>"; done
	EOS
	state W.sh <<-\EOS &&
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>w</result>"
	EOS
	state WAIT.sh <<-\EOS &&
	while [ ! -e "$OUT/go" ] && [ -d "$OUT" ]; do sleep 0.05; done
	echo "<result>done</result>"
	EOS
	export OUT=$PWD &&
	{ ROWS=8 on_pty log "$RAYMOND" wf & } &&
	wait_until 60 shows log "13 agents live" "^\.\.\. and [0-9]+ more agents$" &&
	touch go &&
	wait &&
	block=$(sed -n "/^\[main\] START.sh -> fork/,\$p" snap.screen | grep -c -E "^main(_w[0-9]+)?  (WAIT|W)\.sh|more agents|budget") &&
	echo "block rows: $block" &&
	[ "$block" -le 7 ] &&
	grep -qx "\.\.\. and $((13 - block + 2)) more agents" snap.screen
'

test_expect_success 'a prints function that fails is reported once, not again for each later line' '
	cat >fails.lua <<-\EOS &&
	require("raymond").spawn({ argv = { "printf", "<print>one\\ntwo\\nthree</print>" }, tags = true,
	  prints = function(l) error("cannot show " .. l) end })
	EOS
	expect_status 1 "$(dirname "$RAYMOND")/tests/luarun" "$TESTS_TOP/tests/lua/testing.lua" fails.lua >out 2>err &&
	cat err &&
	grep -q "raymond: internal error: .*cannot show one" err &&
	[ "$(grep -c "internal error" err)" = 1 ]
'

test_done
