#!/bin/bash
# raymond lint: one workflow per check, each found and then fixed.  Every
# fixture is built inline; `finds` and `lacks` run the lint at --level info.
. "$(dirname "$0")/lib.sh"

# finds CHECK STATUS: raymond lint wf exits with STATUS and reports CHECK.
finds() {
	expect_status "$2" raymond lint wf --level info >out 2>err &&
	grep -q "\[$1\]\$" out || { echo "no [$1] in:"; cat out err; return 1; }
}

# lacks CHECK: raymond lint wf does not report CHECK.
lacks() {
	set +e; raymond lint wf --level info >out 2>err; set -e
	! grep -q "\[$1\]\$" out || { echo "[$1] still in:"; cat out; return 1; }
}

# end_state NAME: a script state that ends with a result.
end_state() { printf 'echo "<result>done</result>"\n' | state "$1"; }

# ------------------------------------------------------------------ errors

test_expect_success 'no-entry-point: no 1_START or START' '
	end_state WORK.sh &&
	finds no-entry-point 1 &&
	grep -qx "wf: error: no entry state: expected 1_START.md, 1_START.sh, START.md or START.sh \[no-entry-point\]" out &&
	mv wf/WORK.sh wf/START.sh &&
	lacks no-entry-point
'

test_expect_success 'ambiguous-entry-point: 1_START and START' '
	end_state START.sh && end_state 1_START.md &&
	finds ambiguous-entry-point 1 &&
	rm wf/1_START.md &&
	lacks ambiguous-entry-point
'

test_expect_success 'frontmatter-parse-error: YAML that does not parse, at its line' '
	printf -- "---\nmodel: haiku\neffort: low: high\n---\n<result>x</result>\n" | state START.md &&
	finds frontmatter-parse-error 1 &&
	grep -q "^wf/START.md:3: error: frontmatter line 3:" out &&
	printf -- "---\nmodel: haiku\neffort: low\n---\n<result>x</result>\n" | state START.md &&
	lacks frontmatter-parse-error
'

test_expect_success 'invalid-frontmatter: a field of the wrong type, a bad allowed_transitions' '
	printf -- "---\ntimeout: soon\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	grep -q "^wf/START.md:2: error: frontmatter field .timeout. must be a number, got string" out &&
	printf -- "---\nallowed_transitions:\n  - { tag: jump, target: X }\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	grep -q "unknown tag .jump." out &&
	printf -- "---\ntimeout: 30\n---\n<result>x</result>\n" | state START.md &&
	lacks invalid-frontmatter
'

test_expect_success 'invalid-frontmatter: a list or mapping where an entry wants a string' '
	printf -- "---\nmodel: haiku\nallowed_transitions:\n  - {tag: result, payload: [1]}\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	grep -qx "wf/START.md:3: error: allowed_transitions\[1\] payload must be a string, got a list \[invalid-frontmatter\]" out &&
	expect_status 0 raymond diagram wf >out 2>err &&
	grep -q "START" out && ! grep -q "internal error" err &&
	printf -- "---\nallowed_transitions:\n  - {tag: goto, target: [1]}\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	grep -q "^wf/START.md:2: error: allowed_transitions\[1\] target must be a string, got a list" out &&
	printf -- "---\nallowed_transitions:\n  - {tag: goto, target: [1]}\n  - {tag: goto, target: START}\n---\nSTART\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	! grep -q "table: 0x" out &&
	printf -- "---\nallowed_transitions:\n  - {tag: call, target: START, return: {a: 1}}\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-frontmatter 1 &&
	grep -q "allowed_transitions\[1\] return must be a string, got a mapping" out &&
	expect_status 1 raymond wf >out 2>err &&
	grep -q "^wf/START.md:2: error: allowed_transitions\[1\] return must be a string, got a mapping" err &&
	expect_status 1 raymond wf --no-lint >out 2>err &&
	grep -q "wf/START.md: allowed_transitions\[1\] return must be a string, got a mapping" err
'

test_expect_success 'invalid-model: not a model name' '
	printf -- "---\nmodel: sonet\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-model 1 &&
	grep -q "^wf/START.md:2: error: model .sonet. is not haiku, sonnet, opus" out &&
	printf -- "---\nmodel: claude-sonnet-4-5\n---\n<result>x</result>\n" | state START.md &&
	lacks invalid-model
'

test_expect_success 'invalid-effort: not a level' '
	printf -- "---\neffort: extreme\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-effort 1 &&
	printf -- "---\neffort: xhigh\n---\n<result>x</result>\n" | state START.md &&
	lacks invalid-effort
'

test_expect_success 'force-implicit-invalid: force_implicit with two transitions' '
	end_state A.sh && end_state B.sh &&
	printf -- "---\nforce_implicit: true\nallowed_transitions:\n  - { tag: goto, target: A }\n  - { tag: goto, target: B }\n---\nA or B\n" | state START.md &&
	finds force-implicit-invalid 1 &&
	printf -- "---\nforce_implicit: true\nallowed_transitions:\n  - { tag: goto, target: A }\n---\nA\n" | state START.md &&
	rm wf/B.sh &&
	lacks force-implicit-invalid
'

test_expect_success 'missing-target: in a prompt, a script, allowed_transitions and hook routes' '
	printf "Then <goto>NOPE</goto>\n" | state START.md &&
	finds missing-target 1 &&
	grep -qx "wf/START.md:1: error: <goto>NOPE</goto>: state .NOPE. not found (looked for NOPE.md and NOPE.sh) \[missing-target\]" out &&
	printf "echo \"<goto>NOPE</goto>\"\n" | state START.sh && rm wf/START.md &&
	finds missing-target 1 &&
	rm wf/START.sh &&
	printf -- "---\nmax_visits: 2\non_max_visits: GONE\nevaluate:\n  prompt: ok? {{output}}\n  routes:\n    YES: ALSO_GONE\n---\n<result>x</result>\n" | state START.md &&
	finds missing-target 1 &&
	grep -q "^wf/START.md:3: error: on_max_visits: state .GONE. not found" out &&
	grep -q "^wf/START.md:7: error: evaluate route YES: state .ALSO_GONE. not found" out &&
	end_state GONE.sh && end_state ALSO_GONE.sh &&
	printf "echo \"<goto>\$NEXT</goto>\"\n" | state B.sh &&
	lacks missing-target
'

test_expect_success 'missing-return: a call without return=, or to no state' '
	end_state SUB.sh &&
	printf "echo \"<call>SUB</call>\"\n" | state START.sh &&
	finds missing-return 1 &&
	printf "echo \"<call return=\\\"BACK\\\">SUB</call>\"\n" | state START.sh &&
	finds missing-return 1 &&
	grep -q "^wf/START.sh:1: error: <call return=.BACK.>: state .BACK. not found" out &&
	end_state BACK.sh &&
	lacks missing-return
'

test_expect_success 'missing-fork-next: forks with no next and no goto' '
	end_state W.sh && end_state C.sh &&
	printf "echo \"<fork>W</fork>\"\n" | state START.sh &&
	finds missing-fork-next 1 &&
	printf "echo \"<fork>W</fork>\"\necho \"<goto>C</goto>\"\n" | state START.sh &&
	lacks missing-fork-next
'

test_expect_success 'ambiguous-state-resolution: NAME.md and NAME.sh' '
	end_state NEXT.sh && printf "<result>x</result>\n" | state NEXT.md &&
	printf "echo \"<goto>NEXT</goto>\"\n" | state START.sh &&
	finds ambiguous-state-resolution 1 &&
	printf "echo \"<goto>NEXT.sh</goto>\"\n" | state START.sh &&
	lacks ambiguous-state-resolution
'

test_expect_success 'unsupported-cd-attribute: cd= on a goto' '
	end_state B.sh &&
	printf "echo \"<goto cd=\\\"sub\\\">B</goto>\"\n" | state START.sh &&
	finds unsupported-cd-attribute 1 &&
	printf "echo \"<reset cd=\\\"sub\\\">B</reset>\"\n" | state START.sh &&
	lacks unsupported-cd-attribute
'

test_expect_success 'unknown-attribute: an attribute the tag does not take, a bad worker variable' '
	end_state B.sh &&
	printf "echo \"<goto retrun=\\\"x\\\">B</goto>\"\n" | state START.sh &&
	finds unknown-attribute 1 &&
	grep -q "unknown attribute .retrun. on <goto>; allowed: input" out &&
	printf "echo \"<fork next=\\\"B\\\" PATH=\\\"x\\\">B</fork>\"\n" | state START.sh &&
	finds unknown-attribute 1 &&
	printf "echo \"<fork next=\\\"B\\\" item=\\\"x\\\">B</fork>\"\n" | state START.sh &&
	lacks unknown-attribute
'

test_expect_success 'invalid-hook-field: evaluate without routes' '
	printf -- "---\nevaluate:\n  prompt: ok? {{output}}\n---\n<result>x</result>\n" | state START.md &&
	finds invalid-hook-field 1 &&
	printf -- "---\nevaluate:\n  prompt: ok? {{output}}\n  routes:\n    YES: START\n---\n<result>x</result>\n" | state START.md &&
	lacks invalid-hook-field
'

test_expect_success 'hook-load-error: a hook file that does not load, at its line' '
	end_state START.sh &&
	printf "return {\n  PreState = function(ev)\n}\n" >wf/hooks.lua &&
	finds hook-load-error 1 &&
	grep -q "^wf/hooks.lua:3: error: hook file .*does not load" out &&
	printf "\n\nreturn setmetatable({}, {})\n" >wf/hooks.lua &&
	finds hook-load-error 1 &&
	grep -q "^wf/hooks.lua: error: hook file .*: lua/raymond/hooks.lua:[0-9]*: a hook must return plain tables" out &&
	printf "return {}\n" >wf/hooks.lua &&
	lacks hook-load-error
'

test_expect_success 'hook-decision: a literal decision of the wrong type or to no state' '
	end_state START.sh &&
	mkdir -p wf/hooks &&
	printf "return {\n  PreState = function(ev)\n    return { continue = \"no\" }\n  end,\n}\n" >wf/hooks/a.lua &&
	finds hook-decision 1 &&
	grep -q "^wf/hooks/a.lua:3: error: PreState decision field .continue. should be a boolean" out &&
	# The table the file returns, on the handler'"'"'s line, is not a decision.
	printf "return { PreState = function() return { continue = \"no\" } end }\n" >wf/hooks/a.lua &&
	finds hook-decision 1 &&
	grep -q "^wf/hooks/a.lua:1: error: PreState decision field .continue. should be a boolean" out &&
	! grep -q "unknown field .PreState." out &&
	printf "return { PreState = function() return nil end }\n" >wf/hooks/a.lua &&
	lacks hook-decision && lacks hook-decision-field &&
	printf "return {\n  PostState = function(ev)\n    return { transition = { tag = \"goto\", target = \"NOPE\" } }\n  end,\n}\n" >wf/hooks/a.lua &&
	finds hook-decision 1 &&
	printf "return {\n  PreState = function(ev)\n    return { continue = false, stopReason = \"x\" .. ev.state }\n  end,\n}\n" >wf/hooks/a.lua &&
	lacks hook-decision &&
	# A literal that would take all memory is evaluated within the hook limits.
	printf "return {\n  PreState = function(ev)\n    return { continue = (\"x\"):rep(2^40) }\n  end,\n}\n" >wf/hooks/a.lua &&
	lacks hook-decision
'

# ---------------------------------------------------------------- warnings

test_expect_success 'fork-next-mismatch: forks that disagree' '
	end_state W.sh && end_state A.sh && end_state B.sh &&
	printf "echo \"<fork next=\\\"A\\\">W</fork>\"\necho \"<fork next=\\\"B\\\">W</fork>\"\n" | state START.sh &&
	finds fork-next-mismatch 0 &&
	printf "echo \"<fork next=\\\"A\\\">W</fork>\"\necho \"<fork next=\\\"A\\\">W</fork>\"\necho \"<goto>B</goto>\" >/dev/null\n" | state START.sh &&
	lacks fork-next-mismatch
'

test_expect_success 'unused-allowed-transition: a target the prompt never names' '
	end_state A.sh && end_state B.sh &&
	printf -- "---\nallowed_transitions:\n  - { tag: goto, target: A }\n  - { tag: goto, target: B }\n---\nGo to A when done.\n" | state START.md &&
	finds unused-allowed-transition 0 &&
	printf -- "---\nallowed_transitions:\n  - { tag: goto, target: A }\n  - { tag: goto, target: B }\n---\nGo to A when done, else B.\n" | state START.md &&
	lacks unused-allowed-transition
'

test_expect_success 'unreachable-state: nothing leads there; a hook file naming it does' '
	end_state START.sh && end_state ORPHAN.sh &&
	finds unreachable-state 0 &&
	grep -qx "wf/ORPHAN.sh: warning: ORPHAN.sh is unreachable: no transition from START.sh leads to it \[unreachable-state\]" out &&
	printf "return { PreState = function(ev) if ev.state == \"X\" then return { transition = { tag = \"goto\", target = \"ORPHAN\" } } end end }\n" >wf/hooks.lua &&
	lacks unreachable-state
'

test_expect_success 'dead-end-state: a prompt with no transition' '
	printf "Do the work.\n" | state START.md &&
	finds dead-end-state 0 &&
	printf "Do the work, then <result>done</result>\n" | state START.md &&
	lacks dead-end-state
'

test_expect_success 'call-without-result-path: a callee that never returns' '
	end_state BACK.sh &&
	printf "echo \"<goto>SUB</goto>\"\n" | state SUB.sh &&
	printf "echo \"<call return=\\\"BACK\\\">SUB</call>\"\n" | state START.sh &&
	finds call-without-result-path 0 &&
	end_state SUB.sh &&
	lacks call-without-result-path
'

test_expect_success 'no-result-path: a loop with no way out' '
	printf "echo \"<goto>B</goto>\"\n" | state START.sh &&
	printf "echo \"<goto>START</goto>\"\n" | state B.sh &&
	finds no-result-path 0 &&
	grep -q "no <result> can be reached from B.sh" out &&
	printf "if [ -e done ]; then echo \"<result>x</result>\"; else echo \"<goto>START</goto>\"; fi\n" | state B.sh &&
	lacks no-result-path
'

test_expect_success 'unknown-field: a frontmatter field nothing reads' '
	printf -- "---\nmax_visit: 3\n---\n<result>x</result>\n" | state START.md &&
	finds unknown-field 0 &&
	grep -qx "wf/START.md:2: warning: unknown frontmatter field .max_visit. (ignored) \[unknown-field\]" out &&
	printf -- "---\nmodel: haiku\nmax-visits: 3\n---\n<result>x</result>\n" | state START.md &&
	finds unknown-field 0 &&
	grep -q "^wf/START.md:3: warning: unknown frontmatter field .max-visits." out &&
	printf -- "---\nmax_visits: 3\n---\n<result>x</result>\n" | state START.md &&
	lacks unknown-field
'

test_expect_success 'hook-field-ignored: on_max_visits without max_visits' '
	printf -- "---\non_max_visits: START\n---\n<result>x</result>\n" | state START.md &&
	finds hook-field-ignored 0 &&
	printf -- "---\non_max_visits: START\nmax_visits: 2\n---\n<result>x</result>\n" | state START.md &&
	lacks hook-field-ignored
'

test_expect_success 'hook-unknown-event: a handler for no event' '
	end_state START.sh &&
	printf "return { PreStat = function() end }\n" >wf/hooks.lua &&
	finds hook-unknown-event 0 &&
	printf "return { PreState = function() end }\n" >wf/hooks.lua &&
	lacks hook-unknown-event
'

test_expect_success 'hook-decision-field: a literal decision field the event does not take' '
	end_state START.sh &&
	printf "return {\n  PostTransition = function(ev)\n    return { continue = false }\n  end,\n}\n" >wf/hooks.lua &&
	finds hook-decision-field 0 &&
	grep -q "^wf/hooks.lua:3: warning: PostTransition does not take decision field .continue." out &&
	printf "return {\n  PreTransition = function(ev)\n    return { continue = false }\n  end,\n}\n" >wf/hooks.lua &&
	lacks hook-decision-field
'

test_expect_success 'unset-placeholder: a {{name}} nothing sets; a fork variable is set' '
	printf "Review {{file}} then <result>x</result>\n" | state W.md &&
	printf "echo \"<fork next=\\\"W\\\" item=\\\"a\\\">W</fork>\"\n" | state START.sh &&
	finds unset-placeholder 0 &&
	grep -q "^wf/W.md:1: warning: {{file}} is set by nothing" out &&
	printf "Review {{item}} ({{input}}) then <result>x</result>\n" | state W.md &&
	lacks unset-placeholder
'

# -------------------------------------------------------------------- info

test_expect_success 'implicit-transition: one allowed transition' '
	end_state B.sh &&
	printf -- "---\nallowed_transitions:\n  - { tag: goto, target: B }\n---\nWork.\n" | state START.md &&
	finds implicit-transition 0 &&
	printf -- "---\nforce_implicit: true\nallowed_transitions:\n  - { tag: goto, target: B }\n---\nWork.\n" | state START.md &&
	lacks implicit-transition
'

test_expect_success 'script-state-no-static-analysis: every script' '
	end_state START.sh &&
	finds script-state-no-static-analysis 0 &&
	rm wf/START.sh && printf "<result>x</result>\n" | state START.md &&
	lacks script-state-no-static-analysis
'

test_expect_success 'script-not-executable: info only, since raymond runs scripts with bash' '
	end_state START.sh && chmod -x wf/START.sh &&
	finds script-not-executable 0 &&
	raymond wf --quiet >result &&
	test "$(cat result)" = done &&
	chmod +x wf/START.sh &&
	lacks script-not-executable
'

test_done
