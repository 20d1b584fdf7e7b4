#!/bin/bash
# A resume starts every agent of the run, even when one of them ends
# before it waits for anything (a hook routing it straight to <result>):
# its leaving the list of agents must not make the next one be skipped.
. "$(dirname "$0")/lib.sh"

test_expect_success 'an agent ending at once on resume does not leave its neighbour unstarted' '
	mkdir wf &&
	printf "echo \"<fork>W</fork><fork>W</fork><fork>W</fork><goto>MAIN</goto>\"\n" >wf/START.sh &&
	printf "echo \"<result>main</result>\"\n" >wf/MAIN.sh &&
	printf "[ -e go ] || { sleep 0.1; exit 1; }\necho \"<result>\$RAYMOND_AGENT_ID</result>\"\n" >wf/W.sh &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreState = function(ev)
	    if ev.agent.id == "main_w1" and os.getenv("GO") then
	      return { transition = { tag = "result", payload = "w1 at once" } }
	    end
	  end,
	}
	EOS
	expect_status 1 raymond wf --workflow-id r1 >out 2>err &&
	grep -F "script exited with status 1" err &&
	touch go &&
	GO=1 raymond resume r1 >out 2>err || { cat out err; false; }
	grep -F "[main_w2] W.sh -> result" err &&
	grep -F "[main_w3] W.sh -> result" err &&
	grep -F "run r1 completed" err
'

test_done
