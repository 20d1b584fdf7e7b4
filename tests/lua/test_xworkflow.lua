-- Tests for the cross-workflow tags: <call-workflow>, <function-workflow>,
-- <fork-workflow>, <reset-workflow> (raymond.tags, raymond.transition,
-- raymond.xworkflow) and the fields they add to the state file.

local T = require("testing")
local same = T.same
local raymond = require("raymond")
local runstate = require("raymond.runstate")
local scope = require("raymond.scope")
local transition = require("raymond.transition")
local xworkflow = require("raymond.xworkflow")
local cjson = raymond.cjson

-- ------------------------------------------------------------ helpers

-- TOP/flows/main calls TOP/flows/sub and TOP/flows/entry/OTHER.sh; the
-- run is started in TOP.  OUT lies beside TOP, outside every root.
local TOP = T.tmpdir()
local OUT = T.tmpdir()
local MAIN, SUB = TOP .. "/flows/main", TOP .. "/flows/sub"
for _, d in ipairs({ MAIN, SUB, TOP .. "/flows/entry", OUT .. "/far", TOP .. "/work" }) do
  assert(raymond.mkdir_p(d))
end
for _, f in ipairs({ MAIN .. "/1_START.sh", MAIN .. "/BACK.sh", MAIN .. "/NEXT.sh", SUB .. "/1_START.sh",
                     SUB .. "/B.sh", TOP .. "/flows/entry/START.sh", TOP .. "/flows/entry/OTHER.sh",
                     OUT .. "/far/1_START.sh" }) do
  T.put(f, "echo '<result>x</result>'\n")
end
assert(os.execute(string.format("ln -s '%s/far' '%s/flows/link'", OUT, TOP)))

local function decide(text, where)
  local tags = assert(raymond.parse_tags(text))
  return transition.decide(tags, where or MAIN)
end

local function decide_ok(text, where)
  local tr, err = decide(text, where)
  if not tr then error("decide failed: " .. tostring(err), 2) end
  return tr
end

local function decide_err(text, where)
  local tr, err = decide(text, where)
  if tr ~= nil then error("decide should have failed for " .. text, 2) end
  return err
end

local function new_rec()
  return { id = "wf1", workflow = MAIN, fork_counters = {}, agents = {} }
end

local function new_agent(fields)
  local a = { id = "main", state = "1_START.sh", stack = {}, cwd = TOP, vars = {}, data = {} }
  for k, v in pairs(fields or {}) do a[k] = v end
  return a
end

-- The cd roots of a run started in TOP.
local ROOTS = { TOP }

local function apply(rec, agent, tr)
  return transition.apply(rec, agent, tr, ROOTS)
end

local function apply_ok(rec, agent, tr)
  local out, err = apply(rec, agent, tr)
  if not out then error("apply failed: " .. tostring(err), 2) end
  return out
end

-- ------------------------------------------------------------ decide

T.test("decide: the workflow path is relative to the caller's folder and leads to its entry", function()
  local tr = decide_ok('<call-workflow return="BACK" input="hi">../sub</call-workflow>')
  same(tr, { tag = "call-workflow", target = "1_START.sh", ret = "BACK.sh", input = "hi",
             workflow = SUB, spec = "../sub", real = SUB }, "call-workflow")
  tr = decide_ok('<function-workflow return="BACK.sh" cd="work">../sub/</function-workflow>')
  T.eq(tr.workflow, SUB, "a trailing slash is the same folder")
  T.eq(tr.cd, "work", "cd is taken")
  tr = decide_ok("<reset-workflow>../entry/OTHER.sh</reset-workflow>")
  T.eq(tr.workflow, TOP .. "/flows/entry", "an explicit entry's folder is the workflow")
  T.eq(tr.target, "OTHER.sh", "an explicit entry is the first state")
  tr = decide_ok("<reset-workflow>../entry</reset-workflow>")
  T.eq(tr.target, "START.sh", "START is an entry too")
  tr = decide_ok("<reset-workflow>" .. SUB .. "</reset-workflow>")
  T.eq(tr.workflow, SUB, "an absolute path")
end)

T.test("decide: fork-workflow takes next, worker variables, and goes with forks and a goto", function()
  local tr = decide_ok('<fork-workflow next="NEXT" item="a.c">../sub</fork-workflow>')
  T.eq(tr.tag, "fork-workflow", "tag")
  T.eq(tr.next, "NEXT.sh", "next")
  same(tr.forks[1].vars, { item = "a.c" }, "vars")
  T.eq(tr.forks[1].workflow, SUB, "worker workflow")
  tr = decide_ok('<fork-workflow>../sub</fork-workflow><fork-workflow>../entry</fork-workflow>'
    .. '<fork>BACK</fork><goto>NEXT</goto>')
  T.eq(tr.tag, "fork", "a mix with a plain fork is a fork")
  T.eq(#tr.forks, 3, "three workers")
  T.eq(tr.forks[3].workflow, nil, "the plain fork stays in the caller's workflow")
  T.has(decide_err("<fork-workflow>../sub</fork-workflow>"), '<fork-workflow> needs next="STATE"', "no next")
  T.has(decide_err('<fork-workflow next="X" PATH="/x">../sub</fork-workflow>'), "cannot be a worker variable",
    "an upper-case variable")
end)

T.test("decide: bad input names the tag and what is wrong", function()
  T.has(decide_err('<call-workflow return="BACK" cd="work">../sub</call-workflow>'),
    "<call-workflow> does not take cd=", "cd on call-workflow")
  T.has(decide_err('<call-workflow retrun="BACK">../sub</call-workflow>'),
    "unknown attribute 'retrun' on <call-workflow>", "a misspelled attribute")
  T.has(decide_err("<call-workflow>../sub</call-workflow>"), 'needs return="STATE"', "no return")
  T.has(decide_err('<function-workflow return="BACK">../nope</function-workflow>'),
    "workflow '" .. TOP .. "/flows/nope' does not exist", "a missing workflow")
  T.has(decide_err('<function-workflow return="BACK">../main/NOPE.sh</function-workflow>'),
    "does not exist", "a missing entry")
  T.has(decide_err('<call-workflow return="NOPE">../sub</call-workflow>'), "state 'NOPE' not found",
    "return is a state of the caller's workflow")
  T.has(decide_err("<reset-workflow>  </reset-workflow>"), "empty workflow path", "an empty path")
  T.has(decide_err('<reset-workflow>../sub</reset-workflow><goto>BACK</goto>'), "a state must emit exactly one",
    "reset-workflow with another tag")
end)

T.test("locate: an archive's paths start from its path without the extension", function()
  local zip = { kind = "zip", path = TOP .. "/flows/pack-1.zip" }
  T.eq(xworkflow.base(zip), TOP .. "/flows/pack-1", "base")
  T.eq(xworkflow.base(scope.dir(MAIN)), MAIN, "a folder is its own base")
  local where = assert(xworkflow.locate(zip, "../sub"))
  T.eq(where.workflow, SUB, "../sub from inside the archive")
end)

-- ------------------------------------------------------------ apply

T.test("apply: call-workflow pushes a frame that remembers the caller's workflow, result restores it", function()
  local rec, a = new_rec(), new_agent({ session = "S1", input = "old" })
  apply_ok(rec, a, decide_ok('<call-workflow return="BACK" input="from {{agent_id}}: {{input}}">../sub</call-workflow>'))
  T.eq(a.workflow, SUB, "agent is in the callee")
  T.eq(a.state, "1_START.sh", "at its entry")
  T.eq(a.depth, 1, "one deep")
  T.eq(a.branch, true, "the callee branches the caller's session")
  T.eq(a.input, "from main: old", "input= is rendered with the caller's variables")
  same(a.stack, { { state = "BACK.sh", session = "S1", cwd = TOP } }, "frame: the run's workflow, depth 0")
  -- Inside the callee, a plain call keeps the callee's workflow in its frame.
  apply_ok(rec, a, decide_ok('<call return="B">1_START</call>', SUB))
  same(a.stack[2], { state = "B.sh", session = "S1", cwd = TOP, workflow = SUB, depth = 1 }, "inner frame")
  apply_ok(rec, a, decide_ok("<result>r1</result>", SUB))
  T.eq(a.workflow, SUB, "a result inside the callee stays there")
  T.eq(a.state, "B.sh", "at the inner return state")
  apply_ok(rec, a, decide_ok("<result>r2</result>", SUB))
  T.eq(a.workflow, nil, "back in the run's workflow")
  T.eq(a.depth, nil, "depth back to 0")
  T.eq(a.state, "BACK.sh", "at the caller's return state")
  T.eq(a.input, "r2", "with the payload")
end)

T.test("apply: function-workflow starts fresh and may cd; the result restores the caller's cwd", function()
  local rec, a = new_rec(), new_agent({ session = "S1" })
  apply_ok(rec, a, decide_ok('<function-workflow return="BACK" cd="work">../sub</function-workflow>'))
  T.eq(a.session, nil, "fresh session")
  T.eq(a.branch, nil, "no branch")
  T.eq(a.cwd, TOP .. "/work", "cd relative to the agent's cwd")
  apply_ok(rec, a, decide_ok("<result>done</result>", SUB))
  T.eq(a.cwd, TOP, "cwd restored")
  T.eq(a.session, "S1", "caller's session restored")
end)

T.test("apply: the nesting limit is 4, and the error names the agent and the depth", function()
  local rec, a = new_rec(), new_agent()
  for i = 1, 4 do
    apply_ok(rec, a, decide_ok('<call-workflow return="B">.</call-workflow>', SUB))
    T.eq(a.depth, i, "depth " .. i)
  end
  local before = cjson.encode(a)
  local out, err = apply(rec, a, decide_ok('<function-workflow return="B">.</function-workflow>', SUB))
  T.eq(out, nil, "refused")
  T.has(err, "agent main is already 4 cross-workflow calls deep", "message")
  T.eq(cjson.encode(a), before, "the agent is unchanged")
  -- A fork-workflow worker inherits the depth; a reset-workflow starts again at 0.
  out = apply_ok(rec, a, decide_ok('<fork-workflow next="B">../main</fork-workflow>', SUB))
  T.eq(out.workers[1].depth, 4, "worker depth")
  apply_ok(rec, a, decide_ok("<reset-workflow>../main</reset-workflow>", SUB))
  T.eq(a.depth, nil, "reset-workflow: depth 0")
  same(a.stack, {}, "reset-workflow: stack cleared")
  T.eq(a.workflow, MAIN, "reset-workflow: in the new workflow")
end)

T.test("apply: a workflow outside the run's folders is refused, state unchanged", function()
  local rec, a = new_rec(), new_agent()
  local before = cjson.encode(a)
  local out, err = apply(rec, a, decide_ok("<reset-workflow>" .. OUT .. "/far</reset-workflow>"))
  T.eq(out, nil, "refused")
  T.has(err, "leads to " .. OUT .. "/far, outside the folders a workflow may be taken from", "message")
  out, err = apply(rec, a, decide_ok('<function-workflow return="BACK">../link</function-workflow>'))
  T.eq(out, nil, "a link out of the tree is refused too")
  T.has(err, "leads to " .. OUT .. "/far", "the real path is named")
  T.eq(cjson.encode(a), before, "the agent is unchanged")
  -- The folder holding the run's workflow counts even when the run was
  -- started elsewhere, and --allow-cd extends the roots.
  out = transition.apply(new_rec(), new_agent({ cwd = OUT }), decide_ok("<reset-workflow>../sub</reset-workflow>"),
    { OUT .. "/far" })
  T.eq(out ~= nil, true, "sibling of the run's workflow")
  out = transition.apply(new_rec(), new_agent(), decide_ok("<reset-workflow>" .. OUT .. "/far</reset-workflow>"),
    { TOP, OUT })
  T.eq(out ~= nil, true, "allowed by --allow-cd")
end)

T.test("apply: fork-workflow worker ids count per parent and workflow, plain forks inherit the workflow", function()
  local rec, a = new_rec(), new_agent({ workflow = SUB, depth = 2 })
  local out = apply_ok(rec, a, decide_ok(
    '<fork-workflow item="1">../entry/OTHER.sh</fork-workflow><fork-workflow>../entry</fork-workflow>'
    .. '<fork>B</fork><goto>B</goto>', SUB))
  T.eq(out.workers[1].id, "main_other1", "stem of an explicit entry")
  T.eq(out.workers[2].id, "main_entry1", "stem of a folder")
  T.eq(out.workers[3].id, "main_b1", "plain fork counter")
  same(rec.fork_counters, { main = 1, main_other = 1, main_entry = 1 }, "counters")
  T.eq(out.workers[1].workflow, TOP .. "/flows/entry", "worker workflow")
  T.eq(out.workers[1].state, "OTHER.sh", "worker entry")
  T.eq(out.workers[3].workflow, SUB, "a plain fork stays in the parent's workflow")
  T.eq(out.workers[3].depth, 2, "and depth")
  T.eq(a.state, "B.sh", "parent continues")
  -- An id another agent holds already is skipped.
  rec.agents = { { id = "main_entry2" } }
  out = apply_ok(rec, a, decide_ok('<fork-workflow next="B">../entry</fork-workflow>', SUB))
  T.eq(out.workers[1].id, "main_entry3", "taken id skipped")
  -- A <fork> and a <fork-workflow> of one reply count under different
  -- keys to the same name; the second gets the next number.
  rec = new_rec()
  out = apply_ok(rec, a, decide_ok('<fork next="B">B</fork><fork-workflow next="B">../sub/B.sh</fork-workflow>', SUB))
  T.eq(out.workers[1].id, "main_b1", "the plain fork's id")
  T.eq(out.workers[2].id, "main_b2", "the same reply's fork-workflow skips it")
  T.eq(xworkflow.abbrev("../Review-Flow.zip"), "review", "abbrev: stem, lowercased, six bytes")
end)

T.test("task=: new on <reset-workflow>, inherit on <fork-workflow>, as on <reset> and <fork>", function()
  local a = new_agent({ task_folder = TOP .. "/.raymond/tasks/wf1/main" })
  apply_ok(new_rec(), a, decide_ok('<reset-workflow task="new">../sub</reset-workflow>'))
  T.eq(a.task_count, 1, "counted")
  T.eq(a.task_folder, nil, "dropped, for the next state to make anew")
  a = new_agent({ task_folder = TOP .. "/.raymond/tasks/wf1/main" })
  local rec = new_rec()
  rec.agents = { a }
  local out = apply_ok(rec, a, decide_ok('<fork-workflow next="NEXT" task="inherit">../sub</fork-workflow>'))
  T.eq(out.workers[1].task_folder, a.task_folder, "the worker shares its parent's folder")
  T.same(out.workers[1].vars, {}, "task= is no worker variable")
  T.eq(decide_err('<reset-workflow task="inherit">../sub</reset-workflow>'),
    '<reset-workflow task="inherit">: task= on <reset-workflow> takes only "new"', "reset-workflow's value")
  T.eq(decide_err('<fork-workflow next="NEXT" task="new">../sub</fork-workflow>'),
    '<fork-workflow task="new">: task= on <fork-workflow> takes only "inherit"', "fork-workflow's value")
end)

-- ------------------------------------------------------------ the state file

local function record(agent)
  local rec = runstate.new("wf1", MAIN, "1_START.sh", { cwd = TOP })
  rec.agents[1] = agent
  return cjson.encode(rec)
end

T.test("runstate: the cross-workflow fields load, and bad ones are refused naming the field", function()
  local ok = record({ id = "main", state = "1_START.sh", cwd = TOP, workflow = SUB, depth = 2,
    stack = { { state = "BACK.sh", workflow = SUB, depth = 1, sha256 = string.rep("a", 64) } } })
  local rec = assert(runstate.decode(ok, "s.json"))
  T.eq(math.type(rec.agents[1].depth), "integer", "depth is an integer")
  T.eq(rec.agents[1].stack[1].workflow, SUB, "frame workflow")
  local function bad(agent, want)
    local r, err = runstate.decode(record(agent), "s.json")
    T.eq(r, nil, want)
    T.has(err, want, want)
  end
  bad({ id = "main", state = "A.sh", cwd = TOP, workflow = "flows/sub" }, "agents[1].workflow 'flows/sub' is not an absolute path")
  bad({ id = "main", state = "A.sh", cwd = TOP, depth = 5 }, "agents[1].depth is 5; cross-workflow calls nest 0 to 4 deep")
  bad({ id = "main", state = "A.sh", cwd = TOP, depth = 1.5 }, "agents[1].depth should be a whole number")
  bad({ id = "main", state = "A.sh", cwd = TOP, stack = { { state = "B.sh", depth = -1 } } },
    "agents[1].stack[1].depth is -1")
  bad({ id = "main", state = "A.sh", cwd = TOP, sha256 = "xyz" }, "agents[1].sha256 is not a SHA-256")
end)

T.test("policy: allowed_transitions may name another workflow's path; a reply is held to it", function()
  local policy = require("raymond.policy")
  local pol = assert(policy.parse({ allowed_transitions = {
    { tag = "call-workflow", target = "../sub", ["return"] = "BACK" } } }, "S.md"))
  T.eq(policy.check(pol, assert(raymond.parse_tags('<call-workflow return="BACK">../sub</call-workflow>')), MAIN),
    nil, "the allowed path passes")
  T.has(policy.check(pol, assert(raymond.parse_tags('<call-workflow return="BACK">../entry</call-workflow>')), MAIN),
    "is not one of the allowed transitions", "another path does not")
  local _, err = policy.parse({ allowed_transitions = { { tag = "call", target = "../sub", ["return"] = "BACK" } } },
    "S.md")
  T.has(err, "contains a path separator", "a plain call's target is still a state name")
end)

-- ------------------------------------------------------------ lint and diagram

T.test("lint: a -workflow path that leads nowhere is an error at its line; diagram draws the workflow", function()
  local analyse, lint, diagram = require("raymond.analyse"), require("raymond.lint"), require("raymond.diagram")
  local dir = TOP .. "/flows/linted"
  assert(raymond.mkdir_p(dir))
  T.put(dir .. "/1_START.sh", table.concat({
    'echo "<call-workflow return=\\"BACK\\">../sub</call-workflow>"',
    'echo "<function-workflow return=\\"BACK\\">../nowhere</function-workflow>"',
    'echo "<call-workflow return=\\"BACK\\" cd=\\"x\\">../sub</call-workflow>"',
    'echo "<fork-workflow>../sub</fork-workflow>"',
    'echo "<reset-workflow retrun=\\"x\\">../sub</reset-workflow>"',
  }, "\n") .. "\n")
  T.put(dir .. "/BACK.sh", 'echo "<result>b</result>"\n')
  local wf = assert(analyse.load(dir, "/"))
  local got = {}
  for _, d in ipairs(lint.sort(lint.filter(lint.run(wf), "error"))) do
    got[#got + 1] = string.format("%d %s", d.line, d.check)
  end
  same(got, { "2 missing-target", "3 unsupported-cd-attribute", "4 missing-fork-next", "5 unknown-attribute" },
    "errors by line")
  local text = diagram.mermaid(diagram.graph(wf))
  T.has(text, 's_workflow____sub[["../sub"]]', "the other workflow is a node labelled with its path")
  T.has(text, 's_1_START_sh -->|"call-workflow"| s_workflow____sub', "the call")
  T.has(text, 's_workflow____sub -->|"return"| s_BACK_sh', "its return")
  T.has(text, 's_1_START_sh ==>|"fork-workflow"| s_workflow____sub', "the fork, as a worker edge")
  T.has(text, "class s_workflow____nowhere missing", "a path that leads nowhere is drawn missing")
  analyse.close(wf)
end)

os.execute("rm -rf '" .. TOP .. "' '" .. OUT .. "'")
