#!/bin/bash
# Hooks under limits (docs/hooks.md, "Limits" and "The raymond table"):
# the instruction budget, the wall-clock limit, the memory cap, the
# sandbox, data JSON cannot hold, and raymond.exec.  The limits are set low
# through RAYMOND_HOOK_INSTRUCTIONS, RAYMOND_HOOK_SECONDS and
# RAYMOND_LUA_MEMORY_MB to keep the tests fast.
. "$(dirname "$0")/lib.sh"

unset CLAUDECODE

eq() { [ "$2" = "$3" ] || { printf '%s:\n  expected: %s\n  got:      %s\n' "$1" "$3" "$2"; return 1; }; }
run_status() { sed -n 's/.*"status":"\([a-z]*\)".*/\1/p' "$(state_file)"; }

# hook BODY: wf/hooks.lua whose PreTransition runs BODY; BODY starts on line 3.
hook() {
	printf 'return {\n  PreTransition = function(ev)\n%s\n  end,\n}\n' "$1" >wf/hooks.lua
}

# timed MAX_MS CODE CMD...: run CMD with stdout to ./out and stderr to ./err;
# require that it took less than MAX_MS milliseconds, then that its exit
# status was CODE.  MAX_MS is far above what a loaded machine takes and far
# below what CMD would take if the limit under test did not hold (600 s for
# the default time limit, 100 s sleeps).
timed() {
	max=$1 code=$2 && shift 2 &&
	t0=$(now_ms) &&
	{ "$@" >out 2>err; rc=$?; } || true
	t1=$(now_ms)
	echo "took $((t1 - t0)) ms, exit status $rc"
	[ $((t1 - t0)) -lt "$max" ] || { echo "took $((t1 - t0)) ms, limit $max ms: $*"; return 1; }
	[ "$rc" = "$code" ] || { echo "expected exit status $code, got $rc: $*"; cat err; return 1; }
}

# has TEXT: ./err holds TEXT (a grep pattern).
has() { grep -q "$1" err || { echo "stderr does not say \"$1\":"; cat err; return 1; }; }

# names_hook WHERE: ./err is a clean message (not an internal error) that
# names WHERE (a grep pattern such as "hooks.lua:3").
names_hook() {
	grep -q "$1" err || { echo "the message does not name $1:"; cat err; return 1; }
	! grep -q "internal error" err || { echo "reported as an internal error:"; cat err; return 1; }
}

# failed_naming_hook WHERE: names_hook WHERE, and the state file is
# readable and says failed.
failed_naming_hook() {
	names_hook "$1" || return 1
	raymond --status "$(run_id)" >status || { echo "--status cannot read the state file"; return 1; }
	eq status "$(run_status)" failed
}

# ------------------------------------------------------ instruction budget

test_expect_success 'an infinite loop is stopped by the instruction budget, naming the hook; fixed, the run resumes' '
	two_step &&
	hook "    while true do end" &&
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	timed 60000 1 raymond wf --quiet &&
	has "instruction budget" &&
	test ! -e b-ran &&
	eq status "$(run_status)" failed &&
	raymond --status "$(run_id)" >/dev/null &&
	cp err err1 &&
	echo "return {}" >wf/hooks.lua &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" b &&
	cp err1 err &&
	names_hook "hooks.lua:3"
'

test_expect_success 'the default instruction budget stops an infinite loop within seconds' '
	two_step &&
	hook "    local n = 0
	    while true do n = n + 1 end" &&
	unset RAYMOND_HOOK_INSTRUCTIONS &&
	timed 60000 1 raymond wf --quiet &&
	has "instruction budget" &&
	failed_naming_hook "hooks.lua:4"
'

test_expect_success 'the budget is per handler call, not per run' '
	state START.sh <<-\EOS &&
	n=${RAYMOND_INPUT:-1}
	if [ "$n" -ge 20 ]; then echo "<result>done</result>"
	else echo "<goto input=\"$((n + 1))\">START</goto>"; fi
	EOS
	hook "    local x = 0
	    for i = 1, 50000 do x = x + i end
	    ev.run.data.calls = (ev.run.data.calls or 0) + 1" &&
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	raymond wf --quiet >out &&
	eq result "$(cat out)" done &&
	grep -q "\"calls\":20" "$(state_file)"
'

test_expect_success 'pcall does not save a handler from the instruction budget' '
	two_step &&
	hook "    while true do pcall(function() while true do end end) end" &&
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	timed 60000 1 raymond wf --quiet &&
	has "instruction budget" &&
	test ! -e b-ran &&
	failed_naming_hook "hooks.lua:3"
'

test_expect_success 'a handler that swallows the limit error and returns a decision still stops the run' '
	two_step &&
	state OTHER.sh <<-\EOS &&
	echo other >>other-ran
	echo "<result>other</result>"
	EOS
	hook "    pcall(function() while true do end end)
	    return { transition = { tag = \"goto\", target = \"OTHER\" } }" &&
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	timed 60000 1 raymond wf --quiet &&
	has "instruction budget" &&
	test ! -e other-ran &&
	test ! -e b-ran &&
	failed_naming_hook "hooks.lua:[34]"
'

# ------------------------------------------------------------ time limit

test_expect_success 'a busy loop without an instruction budget is stopped by RAYMOND_HOOK_SECONDS' '
	two_step &&
	hook "    while true do end" &&
	export RAYMOND_HOOK_INSTRUCTIONS=0 RAYMOND_HOOK_SECONDS=1 &&
	timed 60000 1 raymond wf --quiet &&
	has "time limit" &&
	failed_naming_hook "hooks.lua:3"
'

test_expect_success 'a handler stuck in raymond.sleep(100) is stopped by the time limit' '
	two_step &&
	hook "    raymond.sleep(100)" &&
	export RAYMOND_HOOK_SECONDS=1 &&
	timed 60000 1 raymond wf --quiet &&
	has "time limit" &&
	test ! -e b-ran &&
	failed_naming_hook "wf/hooks.lua"
'

test_expect_success 'a handler stuck in raymond.exec{"sleep","100"} is stopped by the time limit' '
	two_step &&
	hook "    raymond.exec({ \"sleep\", \"100\" })" &&
	export RAYMOND_HOOK_SECONDS=1 &&
	timed 60000 1 raymond wf --quiet &&
	has "time limit" &&
	test ! -e b-ran &&
	failed_naming_hook "wf/hooks.lua"
'

test_expect_success 'a second wait after the time limit is not unbounded' '
	two_step &&
	hook "    if ev.state ~= \"START.sh\" then return end
	    raymond.exec({ \"sleep\", \"100\" })
	    raymond.exec({ \"sleep\", \"100\" })" &&
	export RAYMOND_HOOK_SECONDS=1 &&
	timed 60000 1 raymond wf --quiet &&
	has "time limit" &&
	test ! -e b-ran
'

test_expect_success 'on_error = "warn": a file passing its limit is reported and ignored' '
	two_step &&
	cat >wf/hooks.lua <<-\EOS &&
	return {
	  on_error = "warn",
	  PreTransition = function(ev)
	    while true do end
	  end,
	}
	EOS
	export RAYMOND_HOOK_INSTRUCTIONS=1000000 &&
	timed 60000 0 raymond wf --quiet &&
	cat err &&
	eq result "$(cat out)" b &&
	has "instruction budget" &&
	eq status "$(run_status)" completed
'

test_expect_success 'a wait within the time limit is fine' '
	two_step &&
	hook "    assert(raymond.sleep(0.2) ~= false)
	    local r = assert(raymond.exec({ \"sleep\", \"0.2\" }))
	    assert(r.code == 0 and not r.timed_out)" &&
	export RAYMOND_HOOK_SECONDS=30 &&
	raymond wf --quiet >out &&
	eq result "$(cat out)" b
'

# ------------------------------------------------------------------ memory

test_expect_success 'a memory bomb is stopped by RAYMOND_LUA_MEMORY_MB; no crash; the run resumes' '
	two_step &&
	hook "    local t = {}
	    while true do t[#t + 1] = string.rep(\"x\", 1000000) .. #t end" &&
	export RAYMOND_LUA_MEMORY_MB=64 RAYMOND_HOOK_INSTRUCTIONS=0 &&
	timed 60000 1 raymond wf --quiet &&
	cat err &&
	has "not enough memory" &&
	has "hooks.lua" &&
	! grep -q "internal error" err &&
	test ! -e b-ran &&
	raymond --status "$(run_id)" >status &&
	eq status "$(run_status)" failed &&
	hook "    ev.run.data.ok = true" &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"ok\":true" "$(state_file)"
'

test_expect_success 'a memory error caught with pcall still stops the run' '
	two_step &&
	hook "    pcall(function()
	      local t = {}
	      while true do t[#t + 1] = string.rep(\"x\", 1000000) .. #t end
	    end)" &&
	export RAYMOND_LUA_MEMORY_MB=64 RAYMOND_HOOK_INSTRUCTIONS=0 &&
	timed 60000 1 raymond wf --quiet &&
	has "not enough memory" &&
	test ! -e b-ran
'

# ----------------------------------------------------------------- sandbox

test_expect_success 'the sandbox: no io, os.execute, os.exit, io.popen, require, dofile, loadfile, coroutine; load takes text only' '
	two_step &&
	hook "    local r = {}
	    r.io = io == nil
	    r.execute = os.execute == nil
	    r.exit = os.exit == nil
	    r.remove = os.remove == nil
	    r.popen = not (io and io.popen)
	    r.require = require == nil
	    r.dofile = dofile == nil
	    r.loadfile = loadfile == nil
	    r.coroutine = coroutine == nil
	    r.debug = debug == nil
	    r.package = package == nil
	    local f, err = load(string.dump(function() return 1 end))
	    r.binary = f == nil and type(err) == \"string\"
	    r.binary_b = load(string.dump(function() end), \"x\", \"b\") == nil
	    local g = load(\"return 20 + 22\")
	    r.text = g ~= nil and g() == 42
	    r.os_ok = type(os.time()) == \"number\" and type(os.clock()) == \"number\"
	      and type(os.date(\"%Y\")) == \"string\" and type(os.getenv) == \"function\"
	    r.libs = type(string.format) == \"function\" and type(table.concat) == \"function\"
	      and type(math.floor) == \"function\" and type(utf8.char) == \"function\"
	    local bad = {}
	    for k, v in pairs(r) do if v ~= true then bad[#bad + 1] = k end end
	    table.sort(bad)
	    ev.run.data.bad = table.concat(bad, \",\")" &&
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	grep -o "\"bad\":\"[^\"]*\"" "$(state_file)" >bad &&
	eq "sandbox checks that failed" "$(cat bad)" "\"bad\":\"\""
'

test_expect_success 'each hook file has globals of its own' '
	two_step &&
	mkdir -p wf/hooks &&
	cat >wf/hooks/a.lua <<-\EOS &&
	shared_name = "from a"
	return { PreTransition = function(ev) leaked = "a was here" end }
	EOS
	cat >wf/hooks/b.lua <<-\EOS &&
	return {
	  PreTransition = function(ev)
	    ev.run.data.seen = tostring(shared_name) .. "/" .. tostring(leaked)
	  end,
	}
	EOS
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"seen\":\"nil/nil\"" "$(state_file)"
'

# ---------------------------------------------------- data JSON cannot hold

test_expect_success 'a function in run.data stops the run naming the path; fixed, the run resumes' '
	two_step &&
	hook "    ev.run.data.f = function() end" &&
	expect_status 1 raymond wf --quiet 2>err &&
	cat err &&
	has "data.f is a function" &&
	has "raymond --resume" &&
	test ! -e b-ran &&
	raymond --status "$(run_id)" >/dev/null &&
	hook "    ev.run.data.f = \"now a string\"" &&
	raymond --resume "$(run_id)" --quiet >out &&
	eq result "$(cat out)" b &&
	grep -q "\"f\":\"now a string\"" "$(state_file)"
'

test_expect_success 'a function deep in agent.data is named by its path' '
	two_step &&
	hook "    ev.agent.data.x = { y = { print } }" &&
	expect_status 1 raymond wf --quiet 2>err &&
	has "data.x.y\[1\] is a function"
'

# ------------------------------------------------------------ raymond.exec

test_expect_success 'raymond.exec: code, stdout, stderr, env and cwd; a missing command gives nil and a message' '
	two_step &&
	mkdir sub &&
	hook "    local out = {}
	    local r = raymond.exec({ \"sh\", \"-c\", \"echo out; echo err >&2; exit 3\" })
	    out.a = r.code .. \"|\" .. r.stdout .. \"|\" .. r.stderr .. \"|\" .. tostring(r.timed_out) .. \"|\" .. tostring(r.signal)
	    r = raymond.exec({ \"sh\", \"-c\", \"echo \$HOOK_VAR \$PATH_SEEN\", env = { HOOK_VAR = \"v1\", PATH_SEEN = 7 } })
	    out.env = r.stdout
	    r = raymond.exec({ \"pwd\", cwd = \"sub\" })
	    out.cwd = r.stdout
	    r = raymond.exec({ \"pwd\" })
	    out.cwd0 = r.stdout
	    r = raymond.exec({ \"sh\", \"-c\", \"kill -TERM \$\$\" })
	    out.sig = tostring(r.signal) .. \"|\" .. tostring(r.code)
	    local none, msg = raymond.exec({ \"./no-such-command-here\" })
	    out.missing = tostring(none) .. \"|\" .. type(msg) .. \"|\" .. tostring(msg)
	    local ok, err = pcall(raymond.exec, {})
	    out.empty = tostring(ok) .. \"|\" .. tostring(err)
	    assert(raymond.write_atomic(\"exec.json\", raymond.json.encode(out)))" &&
	raymond wf --quiet >out 2>err &&
	eq result "$(cat out)" b &&
	cat exec.json && echo &&
	j() { sed -n "s/.*\"$1\":\"\([^\"]*\)\".*/\1/p" exec.json; } &&
	eq "code, stdout, stderr" "$(j a)" "3|out\\n|err\\n|false|nil" &&
	eq env "$(j env)" "v1 7\\n" &&
	eq cwd "$(j cwd)" "$PWD/sub\\n" &&
	eq "default cwd" "$(j cwd0)" "$PWD\\n" &&
	case $(j sig) in 15\|*|TERM\|*|SIGTERM\|*) ;; *) echo "signal: $(j sig)"; false ;; esac &&
	case $(j missing) in nil\|string\|*no-such-command-here*) ;; *) echo "missing command: $(j missing)"; false ;; esac &&
	case $(j empty) in false\|*no\ command*) ;; *) echo "empty argv: $(j empty)"; false ;; esac
'

test_expect_success 'raymond.exec timeout is seconds without output' '
	two_step &&
	hook "    local t0 = raymond.now()
	    local r = raymond.exec({ \"sh\", \"-c\", \"echo start; sleep 300\", timeout = 0.5 })
	    ev.run.data.r = tostring(r.timed_out) .. \"|\" .. r.stdout .. \"|\" .. tostring(raymond.now() - t0 < 60)" &&
	raymond wf --quiet >out &&
	eq result "$(cat out)" b &&
	{ grep -q "\"r\":\"true|start\\\\n|true\"" "$(state_file)" || { cat "$(state_file)"; false; }; }
'

test_done
