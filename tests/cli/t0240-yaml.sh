#!/bin/bash
# YAML single-file workflows: raymond FILE.yaml and FILE.yaml/STATE run the
# states it holds; a state's timeout: beats --timeout; hooks: embeds Lua;
# every error names the file and line, and leaves no run behind.
. "$(dirname "$0")/lib.sh"

# flow: a three-state workflow in wf.yaml.
flow() {
	cat >wf.yaml <<-\EOF
	id: demo
	states:
	  START:
	    sh: |
	      echo "start $RAYMOND_INPUT" >>log
	      echo "<goto input=\"from start\">MIDDLE</goto>"
	  MIDDLE:
	    sh: |
	      echo "middle $RAYMOND_INPUT in $(basename "$RAYMOND_STATE_DIR")" >>log
	      echo "<call return=\"END\">SUB</call>"
	  SUB:
	    sh: echo "<result>sub done</result>"
	  END:
	    sh: |
	      echo "<result>end after $RAYMOND_INPUT</result>"
	EOF
}

test_expect_success 'FILE.yaml runs from its entry; scripts see the YAML file'"'"'s folder' '
	flow &&
	raymond wf.yaml --input go >out 2>err &&
	test "$(cat out)" = "end after sub done" &&
	printf "start go\nmiddle from start in %s\n" "$(basename "$PWD")" >want &&
	cmp want log &&
	grep -q "START.sh -> goto MIDDLE.sh" err &&
	grep -q "SUB.sh -> result" err
'

test_expect_success 'FILE.yaml/STATE starts at STATE, with or without its extension' '
	flow &&
	raymond wf.yaml/END --input x >out &&
	test "$(cat out)" = "end after x" &&
	raymond wf.yaml/END.sh --input y >out &&
	test "$(cat out)" = "end after y" &&
	test ! -e log &&
	expect_status 1 raymond wf.yaml/NOPE 2>err &&
	grep -q "state '"'"'NOPE'"'"' not found in .*/wf.yaml (looked for NOPE.md and NOPE.sh)" err
'

test_expect_success 'a markdown state runs its prompt with the frontmatter its fields make' '
	use_fake &&
	cat >wf.yml <<-\EOF &&
	states:
	  1_START:
	    prompt: |
	      Say yes about {{input}}.
	      MOCK: reply yes, <result>ok</result>
	    model: haiku
	    allowed_transitions:
	      - { tag: result, payload: ok }
	EOF
	raymond wf.yml --input cats >out 2>err &&
	test "$(cat out)" = ok &&
	calls 1 &&
	grep -q "Say yes about cats" fake/log.jsonl &&
	grep -q "claude-haiku" fake/log.jsonl
'

test_expect_success 'a per-state timeout stops a silent script, and the error names its line' '
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    sh: |
	      sleep 30
	      echo "<result>late</result>"
	    timeout: 1
	EOF
	expect_status 1 raymond wf.yaml 2>err &&
	grep -q "script produced no output for 1 seconds (the per-state timeout in wf.yaml:6)" err &&
	grep -q "hint: raise timeout in wf.yaml:6" err
'

test_expect_success 'a per-state timeout stops a silent turn too, and the error names its line' '
	use_fake &&
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    prompt: |
	      Think.
	      MOCK: hang 30
	    timeout: 1
	EOF
	RAYMOND_RETRY_DELAY=0 expect_status 1 raymond wf.yaml 2>err &&
	grep -q "Claude Code failed 3 times: the Claude Code CLI produced no output for the inactivity limit (1 seconds, the per-state timeout in wf.yaml:6)" err
'

test_expect_success 'timeout: 0 lets a state outlast --timeout' '
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    sh: |
	      sleep 2
	      echo "<result>patient</result>"
	    timeout: 0
	EOF
	raymond wf.yaml --timeout 1 >out &&
	test "$(cat out)" = patient
'

test_expect_success 'embedded and referenced hooks run; a failing one names the YAML line' '
	mkdir -p policy &&
	cat >policy/log.lua <<-\EOF &&
	return { PostTransition = function(ev) raymond.log("moved to " .. ev.agent.state) end }
	EOF
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    sh: echo "<goto>NEXT</goto>"
	  NEXT:
	    sh: echo "<result>done</result>"
	hooks:
	  - file: policy/log.lua
	  - lua: |
	      return {
	        PreState = function(ev)
	          if ev.state == "NEXT.sh" then error("refusing NEXT") end
	        end,
	      }
	EOF
	expect_status 1 raymond wf.yaml 2>err &&
	grep -q "moved to NEXT.sh" err &&
	grep -q "wf.yaml:11: refusing NEXT" err
'

# bad NAME LINE TEXT: wf.yaml (from stdin) is refused naming wf.yaml:LINE
# and TEXT, and no run is left behind.
bad() {
	cat >wf.yaml &&
	expect_status 1 raymond wf.yaml 2>err &&
	grep -qF "wf.yaml:$1: $2" err || { cat err; return 1; }
	test ! -e .raymond/state || test -z "$(ls .raymond/state)" || { echo "a run was left"; return 1; }
	expect_status 1 raymond lint wf.yaml >out 2>err &&
	grep -qF "wf.yaml:$1: $2" err
}

test_expect_success 'bad files: a duplicate state, unknown keys, a state outside states:, ... name their line' '
	printf "states:\n  A:\n    sh: x\n  A:\n    sh: y\n" | bad 4 "duplicate key '"'"'A'"'"' (first on line 2)" &&
	printf "states:\n  START:\n    prompt: x\n    modle: haiku\n" | bad 4 "state START has an unknown key '"'"'modle'"'"' (did you mean '"'"'model'"'"'?)" &&
	printf "states:\n  START:\n    sh: x\ncolour: red\n" | bad 4 "unknown top-level key '"'"'colour'"'"'" &&
	printf "START:\n  sh: x\n" | bad 1 "'"'"'START'"'"' looks like a state, but states go under a top-level states: key" &&
	printf "states:\n  START:\n    sh: x\n    model: haiku\n" | bad 4 "script state START may not have model" &&
	printf "states:\n  START:\n    prompt: x\n    sh: y\n" | bad 4 "state START has both prompt and sh" &&
	printf "states:\n  START:\n    sh: x\n    timeout: -3\n" | bad 4 "timeout of state START must be a number of seconds" &&
	printf "states:\n  START:\n    prompt: x\n    effort: extreme\n" | bad 4 "effort '"'"'extreme'"'"' is not one of" &&
	printf "states:\n  START:\n    prompt: x\n   oops: 1\n" | bad 4 "" &&
	printf "states: {}\n" | bad 1 "states is empty"
'

test_expect_success 'a field only a hook reads is accepted once the hook says so' '
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    prompt: x
	    max_visits: 2
	    on_max_visits: START
	    allowed_transitions: [{ tag: result, payload: ok }]
	EOF
	use_fake &&
	raymond wf.yaml >out &&
	test "$(cat out)" = ok &&
	expect_status 1 raymond wf.yaml --no-default-hooks 2>err &&
	grep -qF "wf.yaml:4: state START has an unknown key '"'"'max_visits'"'"'" err
'

test_expect_success 'lint and diagram read a YAML workflow and name its lines' '
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    prompt: |
	      First line.
	      Go on: <goto>MISSING</goto>
	  ORPHAN:
	    sh: echo "<result>x</result>"
	EOF
	expect_status 1 raymond lint wf.yaml >out &&
	grep -qx "wf.yaml:5: error: <goto>MISSING</goto>: state '"'"'MISSING'"'"' not found (looked for MISSING.md and MISSING.sh) \[missing-target\]" out &&
	grep -q "^wf.yaml:6: warning: .*ORPHAN.sh" out &&
	raymond lint --json wf.yaml >j || true &&
	grep -q "\"file\":\"wf.yaml\",\"line\":5" j &&
	cat >at.yaml <<-\EOF &&
	states:
	  START:
	    prompt: Pick one.
	    allowed_transitions:
	      - tag: goto
	        target: START
	      - tag: goto
	        target: NOPE
	EOF
	expect_status 1 raymond lint at.yaml >out &&
	grep -q "^at.yaml:7: error: allowed_transitions: <goto>NOPE</goto>: state .NOPE. not found" out &&
	raymond diagram wf.yaml >d.mmd &&
	grep -q "s_START_md\[\"START.md\"\]" d.mmd &&
	grep -q "s_ORPHAN_sh" d.mmd
'

test_expect_success 'the example workflows/todo-report.yaml draws as its golden diagram' '
	raymond diagram "$TESTS_TOP/workflows/todo-report.yaml" >out 2>err &&
	test ! -s err &&
	diff -u "$TESTS_TOP/tests/cli/diagram/todo-report.mmd" out
'

test_expect_success 'resume reads the YAML file again: a fixed state runs, a broken file is refused' '
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    sh: echo "<goto>FIX</goto>"
	  FIX:
	    sh: exit 3
	EOF
	expect_status 1 raymond wf.yaml 2>/dev/null &&
	id=$(run_id) &&
	printf "states:\n  START:\n    sh: x\n  START:\n    sh: y\n" >wf.yaml &&
	cp "$(state_file)" before.json &&
	expect_status 1 raymond resume "$id" 2>err &&
	grep -q "wf.yaml:4: duplicate key" err &&
	cmp before.json "$(state_file)" &&
	cat >wf.yaml <<-\EOF &&
	states:
	  START:
	    sh: echo "<goto>FIX</goto>"
	  FIX:
	    sh: echo "<result>fixed</result>"
	EOF
	raymond resume "$id" >out 2>/dev/null &&
	test "$(cat out)" = fixed
'

test_done
