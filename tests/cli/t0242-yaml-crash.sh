#!/bin/bash
# kill -9 a run of a YAML workflow in the middle of a state, then resume:
# the state runs again from the file as it is now, nothing before it runs
# twice, and the private copy of its scripts goes with the run.
. "$(dirname "$0")/lib.sh"

test_expect_success 'killed in a script state: resume runs that state again, and reads the edited file' '
	cat >wf.yaml <<-\EOF
	states:
	  START:
	    sh: |
	      echo start >>log
	      echo "<goto>WAIT</goto>"
	  WAIT:
	    sh: |
	      echo wait >>log
	      for i in $(seq 600); do [ -e go ] && break; sleep 0.1; done
	      echo "<goto>END</goto>"
	    timeout: 120
	  END:
	    sh: |
	      echo "end v1" >>log
	      echo "<result>v1</result>"
	EOF
	"$RAYMOND" wf.yaml --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_line log "^wait$" &&
	kill -9 $pid &&
	wait_for_exit $pid &&
	id=$(run_id) &&
	state_json | grep -q "\"state\":\"WAIT.sh\"" &&
	test -e ".raymond/extract/$id/WAIT.sh" &&
	sed -i "s/v1/v2/g" wf.yaml &&
	touch go &&
	raymond resume "$id" --quiet >out &&
	test "$(cat out)" = v2 &&
	printf "start\nwait\nwait\nend v2\n" >want &&
	cmp want log &&
	test ! -e ".raymond/extract/$id"
'

test_expect_success 'killed in a markdown state: resume asks again once and goes on' '
	use_fake
	cat >wf.yaml <<-\EOF
	states:
	  1_START:
	    prompt: |
	      Work on it.
	      MOCK: bash touch started; sleep 60 => <goto>END</goto> || reply <goto>END</goto>
	    allowed_transitions: [{ tag: goto, target: END }]
	    timeout: 120
	  END:
	    sh: |
	      echo end >>log
	      echo "<result>done</result>"
	EOF
	"$RAYMOND" wf.yaml --quiet >/dev/null 2>&1 &
	pid=$!
	wait_for_file started &&
	kill -9 $pid &&
	wait_for_exit $pid &&
	state_json | grep -q "\"state\":\"1_START.md\"" &&
	raymond resume "$(run_id)" --quiet >out &&
	test "$(cat out)" = done &&
	calls 2 &&
	test "$(cat log)" = end
'

test_done
