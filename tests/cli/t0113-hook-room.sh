#!/bin/bash
# Hooks in rooms of their own (docs/hooks.md, "The raymond table" and
# "Limits"): the limits cover loading a file and reading what its code
# returns; the libraries a file sees are read-only views of its own; no
# metamethod of a hook's tables runs in engine code.  Every failure names
# the file, and the run goes on once the file is fixed.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

eq() { [ "$2" = "$3" ] || { printf '%s:\n  expected: %s\n  got:      %s\n' "$1" "$3" "$2"; return 1; }; }
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }
has() { grep -q "$1" err || { echo "stderr does not say \"$1\":"; cat err; return 1; }; }
no_crash() { ! grep -q "internal error" err || { echo "reported as an internal error:"; cat err; return 1; }; }

# fixed_resumes: with a harmless hooks.lua the run resumes and ends with "b".
fixed_resumes() {
	echo "return {}" >wf/hooks.lua &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" b
}

test_expect_success 'an infinite loop at the top of a hook file is stopped by the limit, naming the file; fixed, the run resumes' '
	two_step &&
	printf "local n = 0\nwhile true do n = n + 1 end\nreturn {}\n" >wf/hooks.lua &&
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	has "hooks.lua" && has "instruction budget" && has "raymond --resume" && no_crash &&
	test ! -e b-ran &&
	eq status "$(run_status)" failed &&
	fixed_resumes
'

test_expect_success 'a file that assigns string.format is stopped, naming its line' '
	two_step &&
	printf "return {\n  PreTransition = function(ev)\n    string.format = nil\n  end,\n}\n" >wf/hooks.lua &&
	expect_status 1 raymond wf --quiet 2>err &&
	has "hooks.lua:3" && has "string.format cannot be changed" && no_crash &&
	eq status "$(run_status)" failed &&
	fixed_resumes
'

test_expect_success 'rawset on a library view changes only the file that did it' '
	two_step &&
	mkdir -p wf/hooks &&
	cat >wf/hooks/a.lua <<-\EOS &&
	rawset(string, "upper", function() return "hijacked" end)
	return {}
	EOS
	cat >wf/hooks/b.lua <<-\EOS &&
	return { PreTransition = function(ev) ev.run.data.up = string.upper("x") .. ("y"):upper() end }
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"up\":\"XY\"" "$(state_file)"
'

test_expect_success 'a decision whose __pairs never ends is refused within the limit, naming the file' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    return setmetatable({}, { __pairs = function() return function() return "continue", false end end })
	  end,
	}
	EOS
	expect_status 1 raymond wf --quiet 2>err &&
	has "hooks.lua" && has "plain tables" && no_crash &&
	test ! -e b-ran &&
	fixed_resumes
'

test_expect_success 'a hook file may not set a __gc metamethod' '
	two_step &&
	printf "setmetatable({}, { __gc = function() while true do end end })\nreturn {}\n" >wf/hooks.lua &&
	expect_status 1 raymond wf --no-lint --quiet 2>err &&
	has "hooks.lua:1" && has "__gc" && no_crash &&
	fixed_resumes
'

test_expect_success 'the string metatable is out of a hook'"'"'s reach' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return { PreTransition = function(ev) ev.run.data.mt = tostring(getmetatable("")) end }
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"mt\":\"nil\"" "$(state_file)"
'

test_expect_success 'load without an environment runs in the file'"'"'s own' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	answer = 41
	return { PreTransition = function(ev) ev.run.data.v = load("return answer + 1")() end }
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"v\":42" "$(state_file)"
'

test_done
