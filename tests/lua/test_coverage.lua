-- Tests for raymond.coverage: the states run and the transitions of a
-- workflow's static model (raymond.analyse) taken by test traces.

local T = require("testing")
local raymond = require("raymond")
local analyse = require("raymond.analyse")
local coverage = require("raymond.coverage")

-- A fresh folder holding `files` (name -> text); fn(wf) runs on its
-- model, the folder goes.
local function with_workflow(files, fn)
  local dir = T.tmpdir()
  for name, text in pairs(files) do T.put(dir .. "/" .. name, text) end
  local wf = assert(analyse.load(dir, "/"))
  local ok, err = xpcall(fn, debug.traceback, wf)
  analyse.close(wf)
  os.execute("rm -rf '" .. dir .. "'")
  if not ok then error(err, 0) end
end

local function step(state, tag, to, extra)
  local e = { ev = "step", agent = "main", state = state, visit = 1, tag = tag, to = to or "", via = "tag" }
  for k, v in pairs(extra or {}) do e[k] = v end
  return e
end

-- The edges of cov as "STATE tag TARGET" lines, taken or not.
local function listed(cov, taken)
  local out = {}
  for _, c in ipairs(cov.edges) do
    if c.taken == taken then out[#out + 1] = coverage.describe(c.state, c.edge) end
  end
  table.sort(out)
  return out
end

local FLOW = {
  ["START.sh"] = 'echo "<goto>A</goto>"\necho "<goto>B</goto>"\necho "<goto>$NEXT</goto>"\n',
  ["A.sh"] = 'echo "<call return=\\"B\\">SUB</call>"\n',
  ["SUB.sh"] = 'echo "<result>sub</result>"\n',
  ["B.md"] = "---\nmax_visits: 2\non_max_visits: A\n---\n"
    .. "<fork next=\"DONE\" item=\"x\">SUB</fork> or <result>b</result>\n",
  ["DONE.sh"] = 'echo "<result>done</result>"\n',
}

T.test("a step takes the edge of its state with its tag that leads where it went", function()
  with_workflow(FLOW, function(wf)
    local cov = coverage.compute(wf, {
      step("START.sh", "goto", "A.sh"),
      step("A.sh", "call", "SUB.sh", { ret = "B.md" }),
      step("SUB.sh", "result", "B.md"),                   -- a result returning to its caller
      step("B.md", "fork", "DONE.sh", { next = "DONE.sh", forks = { "SUB.sh" } }),
    })
    T.same(listed(cov, true), {
      "A.sh -> call SUB.sh (return B.md)",
      "B.md -> fork SUB.sh (next DONE.sh)",
      "START.sh -> goto A.sh",
      "SUB.sh -> result \"sub\"",
    })
    T.same(listed(cov, false), {
      "B.md -> goto A.sh (hook: max_visits 2)",
      "B.md -> result \"b\"",
      "DONE.sh -> result \"done\"",
      "START.sh -> goto B.md",
    })
    T.eq(cov.taken, 4, "taken")
    T.eq(#cov.edges, 8, "edges: the computed <goto>$NEXT</goto> is left out")
    T.eq(cov.percent, 50, "percent")
  end)
end)

T.test("a hook's route is taken only by a step the hook made", function()
  with_workflow(FLOW, function(wf)
    local by_tag = coverage.compute(wf, { step("B.md", "goto", "A.sh") })
    T.eq(by_tag.taken, 0, "a <goto>A</goto> written by the model is not the hook's route")
    T.same(by_tag.dynamic, { "B.md -> goto A.sh" }, "and B.md has no such tag")
    local by_hook = coverage.compute(wf, { step("B.md", "goto", "A.sh", { via = "hook" }) })
    T.same(listed(by_hook, true), { "B.md -> goto A.sh (hook: max_visits 2)" })
    T.same(by_hook.dynamic, {})
  end)
end)

T.test("states ran are those a step started or ended in; a transition to a computed state is dynamic", function()
  with_workflow(FLOW, function(wf)
    local cov = coverage.compute(wf, {
      { ev = "start", agent = "main", state = "START.sh", visit = 1 },
      step("START.sh", "goto", "DONE.sh"),
      step("START.sh", "goto", "DONE.sh"),
      { ev = "start", agent = "main", state = "DONE.sh", visit = 1 },
    })
    T.eq(cov.ran, 2, "ran")
    T.eq(#cov.states, 5, "states")
    T.eq(cov.taken, 0, "taken")
    T.same(cov.dynamic, { "START.sh -> goto DONE.sh" }, "listed once")
  end)
end)

T.test("steps of another workflow's states belong to it, even under a name this one has", function()
  with_workflow(FLOW, function(wf)
    local cov = coverage.compute(wf, {
      { ev = "start", agent = "main", state = "START.sh", visit = 1, wf = "/elsewhere" },
      step("START.sh", "goto", "A.sh", { wf = "/elsewhere" }),
      step("START.sh", "goto", "B.md", { wf = wf.path }),
    })
    T.eq(cov.ran, 1, "ran")
    T.same(listed(cov, true), { "START.sh -> goto B.md" })
  end)
end)

T.test("the report gives the counts and each untaken transition as FILE:LINE  FROM -> tag TARGET", function()
  with_workflow(FLOW, function(wf)
    local cov = coverage.compute(wf, { step("START.sh", "goto", "A.sh"), step("START.sh", "goto", "C.sh") })
    local text = coverage.report("flow", cov, wf, raymond.realpath(wf.path .. "/.."))
    T.has(text, "coverage of flow\n")
    T.has(text, "  states       1/5   20%\n")
    T.has(text, "  transitions  1/8   12%\n")
    T.has(text, "  dynamic      1 taken")
    T.has(text, "    START.sh -> goto C.sh\n")
    local base = wf.path:match("([^/]+)$")
    T.has(text, "    " .. base .. "/START.sh:2  START.sh -> goto B.md\n")
    T.has(text, "    " .. base .. "/B.md:3  B.md -> goto A.sh (hook: max_visits 2)\n")
  end)
end)

T.test("a workflow without transitions is fully covered", function()
  with_workflow({ ["START.sh"] = "echo hello\n" }, function(wf)
    local cov = coverage.compute(wf, {})
    T.eq(#cov.edges, 0)
    T.eq(cov.percent, 100)
  end)
end)

T.test("forks and a goto in one output: the step takes the fork and the goto", function()
  with_workflow({
    ["START.sh"] = 'echo "<fork word=\\"a\\">W</fork>"\necho "<goto>C</goto>"\n',
    ["W.sh"] = 'echo "<result>w</result>"\n',
    ["C.sh"] = 'echo "<result>c</result>"\n',
  }, function(wf)
    local cov = coverage.compute(wf, {
      step("START.sh", "fork", "C.sh", { next = "C.sh", forks = { "W.sh" } }),
    })
    T.same(listed(cov, true), { "START.sh -> fork W.sh", "START.sh -> goto C.sh" })
    T.eq(#cov.dynamic, 0, "nothing left over as dynamic")
  end)
end)
