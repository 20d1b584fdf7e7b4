#!/bin/bash
# raymond test's scripted model: tool calls go through the workflow's
# own tool policy, evaluate answers pick hook routes, asks are answered,
# the CLI's errors are retried or fail the run as for real, budgets stop
# it; all without a claude binary on PATH.
. "$(dirname "$0")/lib.sh"

# No claude anywhere: a scripted case must not need one.
export RAYMOND_CLAUDE=/nonexistent/claude
EX="$TESTS_TOP/workflows"

run_tests() { expect_status "$1" raymond test "${@:2}" >out 2>err || { cat out err; false; }; }

test_expect_success 'a tool call the policy denies is seen denied, the same call in RELEASE runs' '
	mkdir -p t && cat >t/gate.test.yaml <<-EOF &&
	workflow: $EX/release-gate
	cases:
	  - name: gate
	    model:
	      1_START:
	        reply: "<goto>RELEASE</goto>"
	        tools:
	          - { tool: Bash, input: { command: "git commit -am x" } }
	          - { tool: Bash, input: { command: "git push origin main" } }
	      RELEASE: { reply: "<result>pushed</result>", tools: [ { tool: Bash, input: { command: "git push" } } ] }
	    expect:
	      result: pushed
	      tools:
	        - { tool: Bash, call: "git push", state: 1_START, denied: true, reason: "only allowed in RELEASE" }
	        - { tool: Bash, call: "git push", state: RELEASE, denied: false }
	        - { tool: Bash, call: "git commit", denied: false }
	  - name: gate expected open
	    model:
	      1_START: { reply: "<goto>RELEASE</goto>", tools: [ { tool: Bash, input: { command: "git push" } } ] }
	      RELEASE: "<result>x</result>"
	    expect:
	      tools: [ { tool: Bash, call: "git push", state: 1_START, denied: false } ]
	EOF
	run_tests 1 t/gate.test.yaml &&
	cat out &&
	grep -E "^ok   t/gate.test.yaml:3: gate \([0-9]+ ms\)$" out &&
	grep -F "FAIL t/gate.test.yaml:17: gate expected open" out &&
	grep -F "tool call Bash git push in [main] 1_START.md was denied: pushing is only allowed in RELEASE" out &&
	grep -F "1 passed, 1 failed" out
'

test_expect_success 'evaluate answers route a state, in the order of the run' '
	mkdir -p t && cat >t/eval.test.yaml <<-EOF &&
	workflow: $EX/evaluator-gate
	cases:
	  - name: one revision
	    model: { 1_START: "a poem", REVISE: "a better poem" }
	    evaluate: [ "NO", "YES" ]
	    expect: { path: [1_START, REVISE, DONE], status: completed, cost: 0.004 }
	  - name: max_visits ends the revisions
	    model: { 1_START: "a poem", REVISE: "still not" }
	    evaluate: [ "NO" ]
	    expect: { path: [1_START, REVISE, REVISE, REVISE, REVISE, DONE], exit: 0 }
	EOF
	run_tests 0 t/eval.test.yaml &&
	cat out &&
	grep -F "2 passed, 0 failed" out
'

test_expect_success 'an <ask> is answered from answers:, and its prints are seen' '
	mkdir -p t && cat >t/ask.test.yaml <<-EOF &&
	workflow: $EX/approval
	cases:
	  - name: approved
	    input: bump the version
	    answers: [ "yes, fine" ]
	    expect:
	      path: [1_START, DECIDE, APPLY]
	      prints: [ "proposed: bump the version" ]
	      exit: 0
	  - name: nobody answers
	    input: bump
	    options: { on_ask: pause }
	    expect: { status: asking, exit: 2, path: [1_START] }
	EOF
	run_tests 0 t/ask.test.yaml &&
	cat out &&
	grep -F "2 passed, 0 failed" out
'

test_expect_success 'the CLI errors are retried or fail the run as for real; a budget stops it' '
	mkdir -p t && cat >t/err.test.yaml <<-EOF &&
	workflow: $EX/review-loop
	cases:
	  - name: a reply that is not allowed, three times, stops the run
	    model:
	      1_START: { reply: "<result>x</result>", errors: [overloaded, crash] }
	    expect: { exit: 3, status: stopped, error: { contains: "produced the same reply 3 times" } }
	  - name: retried until it works
	    model:
	      1_START: { reply: "<reset>IMPLEMENT</reset>", errors: [overloaded, crash] }
	      IMPLEMENT: "<goto>CHECK</goto>"
	      REVIEW: "<goto>COMMIT</goto>"
	      COMMIT: "<result>done</result>"
	    scripts: { CHECK: "<goto>REVIEW</goto>" }
	    expect: { result: done }
	  - name: a bad key fails at once
	    model: { 1_START: { reply: "<reset>IMPLEMENT</reset>", error: auth } }
	    expect: { exit: 1, error: { contains: "Invalid API key" }, path: [1_START] }
	  - name: the budget stops the run
	    options: { budget: 0.5 }
	    model:
	      1_START: { reply: "<reset>IMPLEMENT</reset>", cost: 0.3 }
	      IMPLEMENT: { reply: "<goto>CHECK</goto>", cost: 0.3 }
	    scripts: { CHECK: "<goto>REVIEW</goto>" }
	    expect: { status: stopped, exit: 3, error: { contains: "budget" } }
	  - name: a state with no reply scripted
	    model: { 1_START: "<reset>IMPLEMENT</reset>" }
	    expect: { exit: 1, error: { contains: "the case scripts no reply for [main] IMPLEMENT.md (visit 1)" } }
	EOF
	run_tests 0 t/err.test.yaml &&
	cat out &&
	grep -F "5 passed, 0 failed" out
'

test_expect_success 'a fan-out is scripted per worker by index and fork attributes' '
	mkdir -p wf &&
	printf "<fork item=\"a\">W</fork><fork item=\"b\">W</fork><fork item=\"c\">W</fork><goto>DONE</goto>\n" >wf/S.md &&
	printf "work on {{item}}\n" >wf/W.md &&
	printf "echo \"<result>done</result>\"\n" >wf/DONE.sh &&
	mkdir -p t && cat >t/fan.test.yaml <<-EOF &&
	workflow: ../wf/S.md
	cases:
	  - name: three workers
	    model:
	      S: "<fork item=\"a\">W</fork><fork item=\"b\">W</fork><fork item=\"c\">W</fork><goto>DONE</goto>"
	      W:
	        - { reply: "<result>second</result>", when: { index: 2 } }
	        - { reply: "<result>{{item}} done</result>" }
	    expect:
	      path: [S, DONE]
	      paths: { "main_w*": [W] }
	EOF
	run_tests 0 t/fan.test.yaml &&
	cat out &&
	grep -F "1 passed, 0 failed" out
'

test_done
