-- Tests for raymond.transition: decide() on parsed tags, apply() on a run.

local T = require("testing")
local same, show, tmpdir = T.same, T.show, T.tmpdir
local raymond = require("raymond")
local transition = require("raymond.transition")

-- ------------------------------------------------------------ helpers

local function touch(path)
  local f = assert(io.open(path, "w"))
  f:write("echo '<result>x</result>'\n")
  f:close()
end

-- One workflow folder for the whole file.
local DIR = tmpdir()
for _, n in ipairs({ "A.sh", "B.sh", "C.md", "R.sh", "N.sh", "N2.sh", "WORKER.sh",
                     "ANALYZE.md", "1_START.sh", "X.sh", "notes.txt" }) do
  touch(DIR .. "/" .. n)
end
assert(raymond.mkdir_p(DIR .. "/sub/deeper"))
assert(raymond.mkdir_p(DIR .. "/other"))

local function decide(text)
  local tags = assert(raymond.parse_tags(text))
  return transition.decide(tags, DIR)
end

local function decide_ok(text)
  local tr, err = decide(text)
  if not tr then error("decide failed: " .. tostring(err), 2) end
  return tr
end

local function decide_err(text)
  local tr, err = decide(text)
  if tr ~= nil then error("decide should have failed for " .. show(text), 2) end
  T.eq(type(err), "string", "message type")
  return err
end

local function new_run()
  return { fork_counters = {}, agents = {} }
end

local function new_agent(fields)
  local a = { id = "main", state = "A.sh", stack = {}, cwd = DIR, vars = {}, data = {} }
  for k, v in pairs(fields or {}) do a[k] = v end
  return a
end

-- apply() must succeed; returns its summary.  The workflow folder stands
-- for the directory the run was started in, where every cd= must lead.
local function apply_ok(run, agent, tr)
  local out, err = transition.apply(run, agent, tr, { DIR })
  if not out then error("apply failed: " .. tostring(err), 2) end
  return out
end

-- ------------------------------------------------------------ decide: tags

T.test("decide: goto", function()
  same(decide_ok("Looked at the diff; it is fine.\n<goto>B</goto>\n"),
    { tag = "goto", target = "B.sh" }, "plain goto")
  same(decide_ok('<print>step 1 done</print>\nnext: <goto input="42 files">C</goto>'),
    { tag = "goto", target = "C.md", input = "42 files" }, "goto with input")
  same(decide_ok("<goto>\n   B.sh  \n</goto>"),
    { tag = "goto", target = "B.sh" }, "goto body is trimmed")
end)

T.test("decide: reset", function()
  same(decide_ok('Context is getting long, starting over.\n<reset cd="sub" input="resume at step 4">B</reset>'),
    { tag = "reset", target = "B.sh", cd = "sub", input = "resume at step 4" }, "reset")
  same(decide_ok("<reset>C</reset>"), { tag = "reset", target = "C.md" }, "bare reset")
end)

T.test("decide: call", function()
  same(decide_ok('Need a review first.\n<call return="R" input="review src/main.c">C</call>'),
    { tag = "call", target = "C.md", ret = "R.sh", input = "review src/main.c" }, "call")
  same(decide_ok("<call return='R.sh'>B.sh</call>"),
    { tag = "call", target = "B.sh", ret = "R.sh" }, "call with extensions")
  same(decide_ok('<call return=" R ">B</call>'),
    { tag = "call", target = "B.sh", ret = "R.sh" }, "return is trimmed")
end)

T.test("decide: function", function()
  same(decide_ok('<function return="R" input="x=1">ANALYZE</function>'),
    { tag = "function", target = "ANALYZE.md", ret = "R.sh", input = "x=1" }, "function")
end)

T.test("decide: result keeps its payload raw", function()
  local text = "All done.\n<result>\n  Summary:\n  - fixed <goto>X</goto> handling\n  - \"quoted\" é\n</result>\ntrailing prose\n"
  same(decide_ok(text),
    { tag = "result", payload = "\n  Summary:\n  - fixed <goto>X</goto> handling\n  - \"quoted\" é\n" },
    "result")
  same(decide_ok("<result></result>"), { tag = "result", payload = "" }, "empty result")
end)

T.test("decide: one fork with next", function()
  same(decide_ok('Spawning a worker.\n<fork next="N" item="src/a.c" cd="sub" input="review a">WORKER</fork>'),
    { tag = "fork", next = "N.sh",
      forks = { { target = "WORKER.sh", input = "review a", cd = "sub", vars = { item = "src/a.c" } } } },
    "fork")
end)

T.test("decide: several forks and a goto", function()
  local text = table.concat({
    "Three files to review.",
    '<fork item="src/a.c" input="review a">WORKER</fork>',
    '<fork item="src/b.c" cd="sub" lang="c">ANALYZE</fork>',
    '<fork next="N" item="src/c.c">WORKER.sh</fork>',
    '<goto input="merge results">N</goto>',
  }, "\n")
  same(decide_ok(text), {
    tag = "fork", next = "N.sh", input = "merge results",
    forks = {
      { target = "WORKER.sh", input = "review a", vars = { item = "src/a.c" } },
      { target = "ANALYZE.md", cd = "sub", vars = { item = "src/b.c", lang = "c" } },
      { target = "WORKER.sh", vars = { item = "src/c.c" } },
    },
  }, "forks")
end)

T.test("decide: forks agree on next written two ways", function()
  local tr = decide_ok('<fork next="N">WORKER</fork><fork next="N.sh">ANALYZE</fork>')
  T.eq(tr.next, "N.sh", "next")
  T.eq(#tr.forks, 2, "fork count")
  tr = decide_ok('<fork next="N">WORKER</fork><goto>N.sh</goto>')
  T.eq(tr.next, "N.sh", "next with goto")
end)

-- ------------------------------------------------------------ decide: errors

T.test("decide: no tag at all", function()
  local err = decide_err("I could not work out what to do next.\n<print>hmm</print>\n")
  T.has(err, "no transition tag", "message")
end)

T.test("decide: two gotos", function()
  local err = decide_err("<goto>A</goto> or maybe <goto>B</goto>")
  T.has(err, "2 transition tags (<goto>, <goto>)", "message")
  T.has(err, "exactly one", "message")
end)

T.test("decide: goto and result", function()
  local err = decide_err("<goto>A</goto>\n<result>done</result>")
  T.has(err, "2 transition tags (<goto>, <result>)", "message")
end)

T.test("decide: other mixes of transitions", function()
  T.has(decide_err("<reset>A</reset><call return='R'>B</call>"), "2 transition tags", "reset+call")
  T.has(decide_err("<fork next='N'>WORKER</fork><reset>A</reset>"), "2 transition tags", "fork+reset")
  T.has(decide_err("<fork>WORKER</fork><goto>N</goto><goto>N</goto>"), "3 transition tags", "fork+2 gotos")
  T.has(decide_err("<fork next='N'>WORKER</fork><result>x</result>"), "2 transition tags", "fork+result")
end)

T.test("decide: unknown tag", function()
  local err = decide_err("Which file? <await>which one?</await>")
  T.has(err, "unknown tag <await>", "message")
  -- named even beside a valid transition
  err = decide_err("<goto>B</goto><await>x</await>")
  T.has(err, "unknown tag <await>", "beside goto")
end)

T.test("decide: unknown attributes", function()
  local err = decide_err('<goto foo="1">B</goto>')
  T.has(err, "unknown attribute 'foo' on <goto>", "goto")
  T.has(err, "allowed: input", "goto allowed list")
  err = decide_err('<goto cd="sub">B</goto>')
  T.has(err, "unknown attribute 'cd' on <goto>", "cd on goto")
  err = decide_err('<reset return="R">B</reset>')
  T.has(err, "unknown attribute 'return' on <reset>; allowed: cd, input", "reset")
  err = decide_err('<call return="R" cd="sub">B</call>')
  T.has(err, "unknown attribute 'cd' on <call>; allowed: input, return", "call")
  err = decide_err('<result code="1">x</result>')
  T.has(err, "unknown attribute 'code' on <result>; allowed: none", "result")
  err = decide_err('<fork item="a">WORKER</fork><goto foo="1">N</goto>')
  T.has(err, "unknown attribute 'foo' on <goto>", "goto beside forks")
end)

T.test("decide: call and function need return", function()
  T.has(decide_err("<call>B</call>"), "<call> needs return=", "call")
  T.has(decide_err('<function input="x">B</function>'), "<function> needs return=", "function")
end)

T.test("decide: targets that do not resolve", function()
  local err = decide_err("<goto>MISSING</goto>")
  T.has(err, "<goto>MISSING</goto>", "names the tag")
  T.has(err, "not found", "goto")
  err = decide_err('<call return="NOPE">B</call>')
  T.has(err, '<call return="NOPE">', "names the attribute")
  T.has(err, "not found", "return")
  T.has(decide_err("<goto>sub/B</goto>"), "path separator", "path in goto")
  T.has(decide_err("<reset>RUN.bat</reset>"), "Windows script", "bat in reset")
  T.has(decide_err("<goto>notes.txt</goto>"), "not found", "not a state")
  T.has(decide_err("<goto></goto>"), "empty target", "empty goto")
  T.has(decide_err('<fork next="NOPE">WORKER</fork>'), "not found", "fork next")
  T.has(decide_err('<fork next="N">NOPE</fork>'), "not found", "fork target")
end)

T.test("decide: fork without next and without goto", function()
  local err = decide_err('<fork item="a">WORKER</fork><fork item="b">WORKER</fork>')
  T.has(err, "<fork> needs next=", "message")
  err = decide_err('<fork item="a">WORKER</fork>')
  T.has(err, "<fork> needs next=", "single fork")
end)

T.test("decide: forks with disagreeing next", function()
  local err = decide_err('<fork next="N">WORKER</fork><fork next="N2">ANALYZE</fork>')
  T.has(err, "ambiguous", "message")
  T.has(err, "N.sh", "names the first")
  T.has(err, "N2.sh", "names the second")
end)

T.test("decide: fork next disagreeing with goto", function()
  local err = decide_err('<fork next="N">WORKER</fork>\n<goto>N2</goto>')
  T.has(err, "ambiguous", "message")
  T.has(err, "<goto>", "names the goto")
  -- the same with the goto first
  err = decide_err('<goto>N2</goto>\n<fork next="N">WORKER</fork>')
  T.has(err, "ambiguous", "goto first")
end)

-- ------------------------------------------------------------ apply

T.test("apply: goto keeps session and stack, sets input", function()
  local run = new_run()
  local frame = { state = "R.sh", session = "caller", cwd = DIR }
  local agent = new_agent({ session = "s1", stack = { frame }, input = "old", branch = true })
  local out = apply_ok(run, agent, decide_ok('<goto input="new">B</goto>'))
  same(out, {}, "summary")
  T.eq(agent.state, "B.sh", "state")
  T.eq(agent.session, "s1", "session")
  same(agent.stack, { { state = "R.sh", session = "caller", cwd = DIR } }, "stack")
  T.eq(agent.input, "new", "input")
  T.eq(agent.cwd, DIR, "cwd")
  T.eq(agent.branch, nil, "branch")
end)

T.test("apply: reset clears the session, keeps the stack, applies cd", function()
  local run = new_run()
  local agent = new_agent({ session = "s1", stack = { { state = "R.sh", session = "c" } }, input = "old" })
  apply_ok(run, agent, decide_ok('<reset cd="sub" input="fresh">C</reset>'))
  T.eq(agent.state, "C.md", "state")
  T.eq(agent.session, nil, "session")
  same(agent.stack, { { state = "R.sh", session = "c" } }, "stack")
  T.eq(agent.cwd, DIR .. "/sub", "cwd")
  T.eq(agent.input, "fresh", "input")
  -- cd is relative to the agent's current cwd
  apply_ok(run, agent, decide_ok('<reset cd="deeper">B</reset>'))
  T.eq(agent.cwd, DIR .. "/sub/deeper", "cwd relative to the agent's cwd")
  apply_ok(run, agent, decide_ok('<reset cd="../../other">B</reset>'))
  T.eq(agent.cwd, DIR .. "/other", "cwd through ..")
  -- an absolute cd is taken as is
  apply_ok(run, agent, { tag = "reset", target = "B.sh", cd = DIR .. "/sub" })
  T.eq(agent.cwd, DIR .. "/sub", "absolute cd")
  -- no cd: cwd stays
  agent.session = "s2"
  apply_ok(run, agent, decide_ok("<reset>A</reset>"))
  T.eq(agent.cwd, DIR .. "/sub", "no cd")
  T.eq(agent.session, nil, "session cleared again")
  T.eq(agent.input, nil, "input")
end)

T.test("apply: reset cd must be an existing directory", function()
  local run = new_run()
  local agent = new_agent({ session = "s1" })
  local out, err = transition.apply(run, agent, decide_ok('<reset cd="nowhere">B</reset>'))
  T.eq(out, nil, "missing dir")
  T.has(err, 'cd="nowhere"', "message names the attribute")
  T.has(err, DIR .. "/nowhere", "message names the path")
  T.has(err, "not a directory", "message")
  out, err = transition.apply(run, agent, decide_ok('<reset cd="notes.txt">B</reset>'))
  T.eq(out, nil, "a file")
  T.has(err, "not a directory", "file message")
  T.eq(agent.state, "A.sh", "state unchanged")
  T.eq(agent.cwd, DIR, "cwd unchanged")
  T.eq(agent.session, "s1", "session unchanged")
end)

-- A failed apply is reported as a run failure and the run is saved; on
-- --resume the agent runs its current state again, so that state's
-- pending input must survive the failed transition.
T.test("apply: a failed transition leaves the agent's pending input alone", function()
  local run = new_run()
  local agent = new_agent({ input = "pending payload", branch = true })
  local out = transition.apply(run, agent, decide_ok('<reset cd="nowhere">B</reset>'))
  T.eq(out, nil, "apply fails")
  T.eq(agent.state, "A.sh", "state unchanged")
  T.eq(agent.input, "pending payload", "input after a failed reset")
  T.eq(agent.branch, true, "branch after a failed reset")
end)

T.test("apply: call pushes a frame and branches", function()
  local run = new_run()
  local old = { state = "X.sh", session = "older", cwd = DIR .. "/other" }
  local agent = new_agent({ session = "s1", cwd = DIR .. "/sub", stack = { old }, input = "old" })
  local out = apply_ok(run, agent, decide_ok('<call return="R" input="question">C</call>'))
  same(out, {}, "summary")
  T.eq(agent.state, "C.md", "state")
  T.eq(agent.input, "question", "input")
  T.eq(agent.session, "s1", "session kept for the branch")
  T.eq(agent.branch, true, "branch")
  T.eq(agent.cwd, DIR .. "/sub", "cwd")
  same(agent.stack, {
    { state = "X.sh", session = "older", cwd = DIR .. "/other" },
    { state = "R.sh", session = "s1", cwd = DIR .. "/sub" },
  }, "stack")
end)

T.test("apply: function pushes a frame and starts fresh", function()
  local run = new_run()
  local agent = new_agent({ session = "s1", input = "old" })
  apply_ok(run, agent, decide_ok('<function return="R">ANALYZE</function>'))
  T.eq(agent.state, "ANALYZE.md", "state")
  T.eq(agent.session, nil, "session")
  T.eq(agent.branch, nil, "branch")
  T.eq(agent.input, nil, "input")
  same(agent.stack, { { state = "R.sh", session = "s1", cwd = DIR } }, "stack")
end)

T.test("apply: result pops the frame", function()
  local run = new_run()
  local agent = new_agent({ session = "s1", cwd = DIR .. "/sub" })
  apply_ok(run, agent, decide_ok('<call return="R">C</call>'))
  -- the callee moves on, changes its session and directory
  agent.session = "callee"
  apply_ok(run, agent, decide_ok('<reset cd="deeper">B</reset>'))
  agent.session = "callee2"
  T.eq(agent.cwd, DIR .. "/sub/deeper", "callee cwd")
  local out = apply_ok(run, agent, decide_ok("<result>the answer is 42</result>"))
  same(out, {}, "summary")
  T.eq(agent.state, "R.sh", "state")
  T.eq(agent.session, "s1", "session restored")
  T.eq(agent.cwd, DIR .. "/sub", "cwd restored")
  T.eq(agent.input, "the answer is 42", "input = payload")
  same(agent.stack, {}, "stack")
end)

T.test("apply: nested calls return in order", function()
  local run = new_run()
  local agent = new_agent({ session = "s0" })
  apply_ok(run, agent, decide_ok('<call return="R">B</call>'))
  agent.session = "s1"
  apply_ok(run, agent, decide_ok('<function return="N">C</function>'))
  T.eq(#agent.stack, 2, "depth")
  apply_ok(run, agent, decide_ok("<result>inner</result>"))
  T.eq(agent.state, "N.sh", "first return")
  T.eq(agent.session, "s1", "first session")
  T.eq(agent.input, "inner", "first input")
  apply_ok(run, agent, decide_ok("<result>outer</result>"))
  T.eq(agent.state, "R.sh", "second return")
  T.eq(agent.session, "s0", "second session")
  T.eq(agent.input, "outer", "second input")
  same(agent.stack, {}, "stack")
end)

T.test("apply: result with a frame without cwd keeps the cwd", function()
  local run = new_run()
  local agent = new_agent({ cwd = DIR .. "/sub", stack = { { state = "R.sh" } }, session = "x" })
  apply_ok(run, agent, { tag = "result", payload = "p" })
  T.eq(agent.state, "R.sh", "state")
  T.eq(agent.cwd, DIR .. "/sub", "cwd")
  T.eq(agent.session, nil, "session from the frame")
end)

T.test("apply: result on an empty stack ends the agent", function()
  local run = new_run()
  local agent = new_agent({ session = "s1", input = "old" })
  local out = apply_ok(run, agent, decide_ok("<result>final\nanswer</result>"))
  same(out, { ended = true, payload = "final\nanswer" }, "summary")
  T.eq(agent.state, "A.sh", "state")
  same(agent.stack, {}, "stack")
end)

T.test("apply: fork creates workers with counted ids", function()
  local run = new_run()
  local agent = new_agent({ session = "s1", input = "old", stack = { { state = "R.sh" } },
                            vars = { parent = "yes" } })
  local tr = decide_ok(table.concat({
    '<fork item="a.c" input="review a">WORKER</fork>',
    '<fork item="b.c" cd="sub">WORKER</fork>',
    '<goto input="merge">N</goto>',
  }, "\n"))
  local out = apply_ok(run, agent, tr)
  same(out.workers, {
    { id = "main_worker1", state = "WORKER.sh", stack = {}, cwd = DIR, input = "review a",
      vars = { item = "a.c" }, data = {} },
    { id = "main_worker2", state = "WORKER.sh", stack = {}, cwd = DIR .. "/sub",
      vars = { item = "b.c" }, data = {} },
  }, "workers")
  T.eq(out.ended, nil, "not ended")
  -- the parent continues at the goto's target, keeping its conversation
  T.eq(agent.state, "N.sh", "parent state")
  T.eq(agent.input, "merge", "parent input")
  T.eq(agent.session, "s1", "parent session")
  same(agent.stack, { { state = "R.sh" } }, "parent stack")
  T.eq(agent.cwd, DIR, "parent cwd")
  -- apply does not add the workers to the run: the engine does
  same(run.agents, {}, "run.agents")
  T.eq(run.fork_counters.main, 2, "counter")
  T.eq(math.type(run.fork_counters.main), "integer", "counter is an integer")
end)

T.test("apply: fork counters persist and are never reused", function()
  local run = new_run()
  local agent = new_agent()
  local out = apply_ok(run, agent, decide_ok('<fork next="N">WORKER</fork><fork>WORKER</fork>'))
  T.eq(out.workers[1].id, "main_worker1", "first")
  T.eq(out.workers[2].id, "main_worker2", "second")
  T.eq(agent.input, nil, "parent input without goto")
  apply_ok(run, agent, decide_ok("<goto>A</goto>"))
  out = apply_ok(run, agent, decide_ok('<fork next="N">WORKER</fork>'))
  T.eq(#out.workers, 1, "one worker")
  T.eq(out.workers[1].id, "main_worker3", "third, later")
  -- the counter is per parent, shared between targets
  out = apply_ok(run, agent, decide_ok('<fork next="N">ANALYZE</fork>'))
  T.eq(out.workers[1].id, "main_analyz4", "other target")
  T.eq(run.fork_counters.main, 4, "counter")
end)

T.test("apply: fork counters loaded as floats still count", function()
  -- the JSON library gives back 2.0 for 2
  local run = { fork_counters = { main = 2.0 }, agents = {} }
  local out = apply_ok(run, new_agent(), decide_ok('<fork next="N">WORKER</fork>'))
  T.eq(out.workers[1].id, "main_worker3", "id")
  T.eq(math.type(run.fork_counters.main), "integer", "counter type")
end)

T.test("apply: nested fork ids and stems", function()
  local run = new_run()
  local main = new_agent()
  local out = apply_ok(run, main, decide_ok('<fork next="N">WORKER</fork>'))
  local w = out.workers[1]
  T.eq(w.id, "main_worker1", "worker id")
  out = apply_ok(run, w, decide_ok('<fork next="N">ANALYZE</fork><fork>ANALYZE</fork>'))
  T.eq(out.workers[1].id, "main_worker1_analyz1", "nested id")
  T.eq(out.workers[2].id, "main_worker1_analyz2", "nested id 2")
  T.eq(run.fork_counters.main, 1, "main's counter untouched")
  T.eq(run.fork_counters.main_worker1, 2, "worker's counter")
  -- short stems and stems with digits
  out = apply_ok(run, main, decide_ok('<fork next="N">B</fork><fork>1_START</fork>'))
  T.eq(out.workers[1].id, "main_b2", "short stem")
  T.eq(out.workers[2].id, "main_1_star3", "stem with digits")
end)

T.test("apply: worker cwd is cd relative to the parent's cwd", function()
  local run = new_run()
  local agent = new_agent({ cwd = DIR .. "/sub" })
  local out = apply_ok(run, agent,
    decide_ok('<fork next="N" cd="deeper">WORKER</fork><fork cd="..">WORKER</fork><fork>WORKER</fork>'))
  T.eq(out.workers[1].cwd, DIR .. "/sub/deeper", "cd")
  T.eq(out.workers[2].cwd, DIR, "cd ..")
  T.eq(out.workers[3].cwd, DIR .. "/sub", "no cd: the parent's cwd")
  T.eq(agent.cwd, DIR .. "/sub", "parent cwd unchanged")
end)

T.test("apply: fork with a bad cd fails", function()
  local run = new_run()
  local agent = new_agent()
  local out, err = transition.apply(run, agent, decide_ok('<fork next="N" cd="nowhere">WORKER</fork>'))
  T.eq(out, nil, "result")
  T.has(err, "not a directory", "message")
  T.eq(agent.state, "A.sh", "parent state unchanged")
end)

T.test("apply: every transition clears pending input and branch", function()
  local cases = {
    "<goto>B</goto>",
    "<reset>B</reset>",
    '<call return="R">B</call>',
    '<function return="R">B</function>',
    '<fork next="N">WORKER</fork>',
  }
  for _, text in ipairs(cases) do
    local agent = new_agent({ input = "stale", branch = true })
    apply_ok(new_run(), agent, decide_ok(text))
    T.eq(agent.input, nil, text .. " input")
    if not text:find("<call", 1, true) then T.eq(agent.branch, nil, text .. " branch") end
  end
  -- result returning to a frame sets input to the payload; ending clears it
  local agent = new_agent({ input = "stale", branch = true, stack = { { state = "R.sh" } } })
  apply_ok(new_run(), agent, decide_ok("<result>p</result>"))
  T.eq(agent.input, "p", "result input")
  T.eq(agent.branch, nil, "result branch")
  agent = new_agent({ input = "stale" })
  apply_ok(new_run(), agent, decide_ok("<result>p</result>"))
  T.eq(agent.input, nil, "ended agent input")
end)

T.test("apply: unknown transition", function()
  local out, err = transition.apply(new_run(), new_agent(), { tag = "await", target = "B.sh" })
  T.eq(out, nil, "result")
  T.has(err, "unknown transition 'await'", "message")
end)

T.test("describe: one line per transition", function()
  T.eq(transition.describe(decide_ok("<goto>B</goto>")), "goto B.sh", "goto")
  T.eq(transition.describe(decide_ok('<call return="R">C</call>')), "call C.md (return to R.sh)", "call")
  T.eq(transition.describe(decide_ok("<result>x</result>")), "result", "result")
  T.eq(transition.describe(decide_ok('<fork next="N">WORKER</fork><fork>ANALYZE</fork>')),
    "fork WORKER.sh, ANALYZE.md; continue at N.sh", "fork")
end)

os.execute("rm -rf '" .. DIR .. "'")
