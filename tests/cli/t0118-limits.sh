#!/bin/bash
# Run-wide limits: loop detection yields to a state's own max_visits and
# takes --max-repeats; --max-agents caps the live agents of a run.
. "$(dirname "$0")/lib.sh"

export RAYMOND_RETRY_DELAY=0.05
unset CLAUDECODE

test_expect_success 'max_visits with on_max_visits wins over loop detection on identical replies' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_visits: 3
	on_max_visits: DONE
	---
	Again.
	MOCK: reply <goto>START</goto>
	EOS
	state DONE.sh <<-\EOS &&
	echo "<result>done</result>"
	EOS
	raymond wf --quiet >out 2>err &&
	test "$(cat out)" = done &&
	calls 3 &&
	! grep -q "same reply" err
'

test_expect_success '--max-repeats N stops a loop after N identical replies' '
	use_fake &&
	state START.md <<-\EOS &&
	Again.
	MOCK: reply <goto>START</goto>
	EOS
	expect_status 3 raymond wf --quiet --max-repeats 2 >out 2>err &&
	grep -qF "START.md produced the same reply 2 times in a row" err &&
	calls 2 &&
	grep -q "\"max_repeats\":2" "$(state_file)"
'

test_expect_success '--max-repeats 0 turns loop detection off' '
	use_fake &&
	state START.md <<-\EOS &&
	Again.
	MOCK: reply <goto>START</goto> || reply <goto>START</goto> || reply <goto>START</goto> || reply <goto>START</goto> || reply <result>end</result>
	EOS
	raymond wf --quiet --max-repeats 0 >out 2>err &&
	test "$(cat out)" = end &&
	calls 5
'

test_expect_success 'a state'"'"'s max_repeats wins over --max-repeats' '
	use_fake &&
	state START.md <<-\EOS &&
	---
	max_repeats: 4
	---
	Again.
	MOCK: reply <goto>START</goto>
	EOS
	expect_status 3 raymond wf --quiet --max-repeats 2 >out 2>err &&
	grep -qF "START.md produced the same reply 4 times in a row" err &&
	calls 4
'

# forks N: START.sh forks N workers W.sh, which leave a mark each.
forks() {
	printf "for i in \$(seq 1 %d); do echo \"<fork next=\\\\\"END\\\\\" n=\\\\\"\$i\\\\\">W</fork>\"; done\n" "$1" | state START.sh &&
	state W.sh <<-\EOS &&
	echo "$n" >>"$OUT/w-ran"
	echo "<result>w</result>"
	EOS
	state END.sh <<-\EOS &&
	echo "<result>end</result>"
	EOS
	export OUT=$PWD
}

test_expect_success 'a fork past the default cap of 2000 live agents fails before any worker starts' '
	forks 2000 &&
	expect_status 1 raymond wf --quiet --no-debug >out 2>err &&
	grep -qF "raymond: error: wf/START.sh (agent main): <fork> would make 2001 live agents, more than the cap of 2000 (--max-agents)" err &&
	grep -qxF "hint: if the workflow means to run that many, continue with: raymond --resume $(run_id) --max-agents 4000" err &&
	test ! -e w-ran
'

test_expect_success 'a self-forking workflow stops at --max-agents, and resume with a higher cap goes on' '
	forks 6 &&
	expect_status 1 raymond wf --quiet --max-agents 5 >out 2>err &&
	grep -qF "<fork> would make 7 live agents, more than the cap of 5 (--max-agents)" err &&
	test ! -e w-ran &&
	raymond --resume "$(run_id)" --quiet --max-agents 10 >out 2>err &&
	test "$(sort -n w-ran | tr "\n" " ")" = "1 2 3 4 5 6 " &&
	test "$(cat out)" = end
'

test_expect_success 'a fork bomb stops at the cap' '
	state START.sh <<-\EOS &&
	echo "<fork next=\"START\">START</fork>"
	EOS
	expect_status 1 raymond wf --quiet --no-debug --max-agents 40 >out 2>err &&
	grep -qF "<fork> would make 41 live agents, more than the cap of 40 (--max-agents)" err &&
	agents=$(state_json | grep -o "\"id\":\"main[_a-z0-9]*\"" | wc -l) &&
	test "$agents" -le 40
'

test_done
