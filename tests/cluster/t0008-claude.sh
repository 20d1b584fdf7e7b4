#!/bin/bash
# The real Claude Code CLI as a Slurm job: a markdown state on the slurm
# launcher runs its turn in a batch job, against the mock Anthropic API on
# loopback (tests/e2e/mockapi.js), with the environment a local turn gets;
# its reply's transition is followed as for a local turn.
. "$(dirname "$0")/lib.sh"
. "$TESTS_TOP/tests/e2e/lib.sh"
cluster_setup
e2e_setup || exit 1

test_expect_success 'a Claude turn runs as a Slurm job and its transition is taken' '
	state START.md <<-\EOS &&
	---
	launcher: slurm
	---
	Answer from the cluster c1.
	MOCK: reply <goto>NEXT</goto> c1
	EOS
	state NEXT.md <<-\EOS &&
	---
	launcher: {name: slurm, cpus: 1, time: "10:00"}
	---
	Second turn on the cluster c1.
	MOCK: reply <result>from the cluster c1</result>
	EOS
	before=$(submissions) &&
	asked=$(mock_requests) &&
	raymond wf --quiet >out 2>err &&
	cat err &&
	same "$(cat out)" "from the cluster c1" &&
	same $(( $(submissions) - before )) 2 &&
	test $(( $(mock_requests) - asked )) -ge 2 &&
	wait_no_jobs
'

test_done
