-- Tests for joins: raymond.join (policies, the group in the run record,
-- firing, the results' JSON, validation on load), the join= and wait=
-- attributes of <fork> (raymond.transition), and raymond.canceller()
-- (src/lua_sched.c), which ends one agent's command without a stop.

local T = require("testing")
local same, show = T.same, T.show
local raymond = require("raymond")
local cjson = raymond.cjson
local join = require("raymond.join")
local runstate = require("raymond.runstate")
local tags = require("raymond.tags")
local transition = require("raymond.transition")

local DIR = T.tmpdir()
for _, n in ipairs({ "START.sh", "W.sh", "SUM.sh", "SUM2.sh", "N.sh" }) do
  T.put(DIR .. "/" .. n, "echo '<result>x</result>'\n")
end

local function decide(text)
  return transition.decide(assert(raymond.parse_tags(text)), DIR)
end

local function decide_err(text)
  local tr, err = decide(text)
  if tr ~= nil then error("decide should have failed for " .. show(text), 2) end
  return err
end

-- ------------------------------------------------------------ policies

T.test("need: all is every worker, first is one, N is N", function()
  T.eq(join.need(nil, 5), 5)
  T.eq(join.need("all", 5), 5)
  T.eq(join.need("first", 5), 1)
  T.eq(join.need("3", 5), 3)
  T.eq(join.need("5", 5), 5)
end)

T.test("need: a misspelt policy or a quorum beyond the workers is refused, saying what is allowed", function()
  local _, err = join.need("frist", 3)
  T.has(err, "wait=\"frist\" is not a join policy")
  T.has(err, "wait=\"first\"")
  _, err = join.need("4", 3)
  T.has(err, "asks for 4 successes of 3 workers")
  _, err = join.need("0", 3)
  T.has(err, "asks for no success")
  _, err = join.need("-1", 3)
  T.has(err, "not a join policy")
end)

-- ------------------------------------------------------------ decide

T.test("decide: join= resolves like next=, wait defaults to all", function()
  local tr = assert(decide('<fork next="N" join="SUM">W</fork><fork next="N" join="SUM.sh">W</fork>'))
  T.eq(tr.join, "SUM.sh")
  T.eq(tr.wait, "all")
  T.eq(#tr.forks, 2)
end)

T.test("decide: join= and wait= are the fork's own, never worker variables", function()
  local tr = assert(decide('<fork next="N" join="SUM" wait="first" item="a">W</fork>'))
  same(tr.forks[1].vars, { item = "a" })
  T.eq(tr.wait, "first")
end)

T.test("decide: a fork without join= keeps today's behaviour", function()
  local tr = assert(decide('<fork next="N">W</fork>'))
  T.eq(tr.join, nil)
  T.eq(tr.wait, nil)
end)

T.test("decide: wait= written on one fork of the group applies to the group", function()
  local tr = assert(decide('<fork next="N" join="SUM" wait="2">W</fork><fork join="SUM">W</fork>'
    .. '<fork join="SUM" wait="2">W</fork>'))
  T.eq(tr.wait, "2")
end)

T.test("decide: a missing join target is an error naming the attribute", function()
  local err = decide_err('<fork next="N" join="SUMMARY">W</fork>')
  T.has(err, '<fork join="SUMMARY">')
  T.has(err, "SUMMARY")
end)

T.test("decide: forks of one reply that disagree on join or wait are refused", function()
  T.has(decide_err('<fork next="N" join="SUM">W</fork><fork next="N" join="SUM2">W</fork>'),
    "join different states (SUM.sh and SUM2.sh)")
  T.has(decide_err('<fork next="N" join="SUM" wait="first">W</fork><fork next="N" join="SUM" wait="all">W</fork>'),
    "wait differently")
  T.has(decide_err('<fork next="N" join="SUM">W</fork><fork next="N">W</fork>'),
    "has no join= while another fork of the reply joins SUM.sh")
end)

T.test("decide: wait= without join=, a bad policy and a quorum beyond the forks are refused", function()
  T.has(decide_err('<fork next="N" wait="first">W</fork>'), "has no join=\"STATE\"")
  T.has(decide_err('<fork next="N" join="SUM" wait="most">W</fork>'), "not a join policy")
  T.has(decide_err('<fork next="N" join="SUM" wait="3">W</fork><fork join="SUM">W</fork>'),
    "asks for 3 successes of 2 workers")
end)

-- ------------------------------------------------------------ groups

-- A run object as raymond.join sees it, with `n` workers forked by main
-- under `wait`.
local function forked(n, wait)
  local rec = { agents = {}, fork_counters = {} }
  local main = { id = "main", state = "START.sh", stack = {}, cwd = DIR, vars = {}, data = {} }
  rec.agents[1] = main
  local tr = assert(decide(string.rep(string.format('<fork next="N" join="SUM"%s>W</fork>',
    wait and (' wait="' .. wait .. '"') or ""), n)))
  local out = assert(transition.apply(rec, main, tr, { DIR }))
  join.open(rec, main, tr, out.workers)
  for _, w in ipairs(out.workers) do rec.agents[#rec.agents + 1] = w end
  return { rec = rec }, out.workers
end

-- Worker `w` ends with `status`; returns the summary agent, if the join fired.
local function settle(run, w, status, value)
  for i, a in ipairs(run.rec.agents) do
    if a == w then table.remove(run.rec.agents, i) break end
  end
  return join.settle(run, w, status, value, nil, tags.worker_id)
end

T.test("open: the group is in the record, its workers name it", function()
  local run, ws = forked(3)
  local g = run.rec.joins[ws[1].id]
  T.eq(g.parent, "main")
  T.eq(g.target, "SUM.sh")
  T.eq(g.need, 3)
  T.eq(g.cwd, DIR)
  T.eq(#g.members, 3)
  for i, w in ipairs(ws) do
    T.eq(w.join, ws[1].id)
    T.eq(g.members[i].agent, w.id)
    T.eq(g.members[i].status, "running")
  end
end)

T.test("all: fires when the last worker ends, failures included, results in fork order", function()
  local run, ws = forked(3)
  T.eq(settle(run, ws[3], "ok", "third"), nil)
  T.eq(settle(run, ws[2], "failed", "script exited with status 3"), nil)
  local s, parent = settle(run, ws[1], "ok", "first")
  T.eq(parent, "main")
  T.eq(s.id, "main_sum4", "named like a worker of the parent")
  T.eq(s.state, "SUM.sh")
  T.eq(s.cwd, DIR)
  T.eq(s.input, s.results)
  same(cjson.decode(s.results), {
    { agent = ws[1].id, state = "W.sh", status = "ok", result = "first" },
    { agent = ws[2].id, state = "W.sh", status = "failed", error = "script exited with status 3" },
    { agent = ws[3].id, state = "W.sh", status = "ok", result = "third" },
  })
  T.eq(run.rec.joins, nil, "the fired group is gone from the record")
end)

T.test("all: a failure does not fire the join while workers still run", function()
  local run, ws = forked(2)
  T.eq(settle(run, ws[1], "failed", "boom"), nil)
  T.eq(#run.rec.joins[ws[1].id].members, 2)
end)

T.test("first: the first success fires, the others are cancelled and leave the run", function()
  local run, ws = forked(3, "first")
  T.eq(settle(run, ws[1], "failed", "boom"), nil)
  local s = settle(run, ws[2], "ok", "win")
  T.eq(s ~= nil, true, "fired")
  local r = cjson.decode(s.results)
  T.eq(r[1].status, "failed")
  T.eq(r[2].status, "ok")
  T.eq(r[3].status, "cancelled")
  T.eq(ws[3].cancelled, true)
  T.eq(#run.rec.agents, 1, "only main is left")
  T.eq(run.rec.agents[1].id, "main")
  T.eq(settle(run, ws[3], "ok", "late"), nil, "a cancelled worker's late end changes nothing")
end)

T.test("quorum: fires at N successes, or as soon as N can no longer be reached", function()
  local run, ws = forked(4, "2")
  T.eq(settle(run, ws[1], "ok", "a"), nil)
  T.eq(settle(run, ws[2], "ok", "b") ~= nil, true, "two of four")
  run, ws = forked(3, "2")
  T.eq(settle(run, ws[1], "failed", "x"), nil)
  local s = settle(run, ws[2], "failed", "y")
  T.eq(s ~= nil, true, "one left cannot make two")
  same(cjson.decode(s.results)[3], { agent = ws[3].id, state = "W.sh", status = "cancelled" })
end)

T.test("settle: a payload over RESULT_MAX is cut at a character boundary and says how long it was", function()
  local run, ws = forked(1)
  local big = string.rep("a", join.RESULT_MAX - 1) .. "\u{e9}" .. "tail"
  local s = settle(run, ws[1], "ok", big)
  local r = cjson.decode(s.results)[1]
  T.eq(#r.result, join.RESULT_MAX - 1, "the two-byte character is not split")
  T.eq(r.truncated, #big)
end)

T.test("settle: a worker outside any join, or already settled, is ignored", function()
  local run, ws = forked(2)
  T.eq(settle(run, ws[1], "ok", "a"), nil)
  T.eq(join.settle(run, ws[1], "ok", "again", nil, tags.worker_id), nil)
  T.eq(run.rec.joins[ws[1].id].members[1].result, "a")
  T.eq(join.settle(run, { id = "other", state = "W.sh" }, "ok", "x", nil, tags.worker_id), nil)
end)

-- ------------------------------------------------------------ on disk

local function record_text(run)
  run.rec.format, run.rec.id, run.rec.workflow, run.rec.status = 1, "r1", DIR, "running"
  run.rec.launch, run.rec.steps, run.rec.data = {}, 0, {}
  return assert(runstate.encode(run.rec))
end

T.test("a pending join survives a save and a load, settled results kept", function()
  local run, ws = forked(3)
  settle(run, ws[2], "ok", "two")
  local back = assert(runstate.decode(record_text(run), "mem.json"))
  local g = back.joins[ws[1].id]
  T.eq(g.need, 3)
  T.eq(math.type(g.need), "integer")
  T.eq(g.members[2].result, "two")
  T.eq(back.agents[2].join, ws[1].id)
  -- Loaded, it goes on as it would have.
  local lrun = { rec = back }
  local a1, a3 = back.agents[2], back.agents[3]
  T.eq(settle(lrun, a1, "ok", "one"), nil)
  local s = settle(lrun, a3, "ok", "three")
  T.eq(#cjson.decode(s.results), 3)
end)

-- The message of loading `run` after `edit` changed its decoded JSON.
local function load_err(edit)
  local run, ws = forked(2)
  settle(run, ws[2], "failed", "boom")
  local raw = cjson.decode(record_text(run))
  edit(raw, ws[1].id)
  local rec, err = runstate.decode(cjson.encode(raw), "mem.json")
  if rec then error("the load should have failed", 2) end
  T.has(err, "state file mem.json is not a valid raymond state: ")
  return err
end

T.test("load: a hand-edited join is refused with the field at fault", function()
  T.has(load_err(function(r, g) r.joins[g].members[1].status = "done" end),
    "members[1].status 'done' is not running, ok, failed or cancelled")
  T.has(load_err(function(r, g) r.joins[g].target = "../x.sh" end), ".target '../x.sh' is not a state")
  T.has(load_err(function(r, g) r.joins[g].need = 1 end), ".need is 1, but wait 'all' of 2 workers needs 2")
  T.has(load_err(function(r, g) r.joins[g].cwd = "rel" end), ".cwd 'rel' is not an absolute path")
  T.has(load_err(function(r) r.agents[2].join = "nope" end), "agents[2].join 'nope' names no group")
  T.has(load_err(function(r) table.remove(r.agents, 2) end), "is running, but no agent")
  T.has(load_err(function(r, g) r.joins[g].members[1].status = "ok" end), "has ended, but agent")
  T.has(load_err(function(r, g)
    r.joins[g].members[1].status = "failed"
    table.remove(r.agents, 2)
  end), "is decided but has not fired")
  T.has(load_err(function(r, g) r.joins[g].members = {} end), "members is empty")
end)

-- ------------------------------------------------------------ canceller

T.test("canceller: a running command is killed, the run goes on", function()
  local c = raymond.canceller()
  local res
  local t0 = raymond.clock()
  raymond.go(function() res = raymond.spawn({ argv = { "sleep", "60" }, cancel = c }) end)
  raymond.sleep(0.2)
  T.eq(c:cancelled(), false)
  c:cancel()
  while not res and raymond.clock() - t0 < 30 do raymond.sleep(0.02) end
  T.eq(res and res.killed, true)
  T.eq(raymond.clock() - t0 < 20, true, "killed, not waited for")
  T.eq(raymond.stopping(), false)
  local after = raymond.spawn({ argv = { "true" } })
  T.eq(after.exit, 0, "other commands still run")
end)

T.test("canceller: a queued command never starts, later ones end at once", function()
  raymond.set_max_parallel(1)
  local hold = raymond.canceller()
  local c = raymond.canceller()
  local first, queued
  local mark = DIR .. "/queued-ran"
  raymond.go(function() first = raymond.spawn({ argv = { "sleep", "60" }, cancel = hold }) end)
  raymond.go(function() queued = raymond.spawn({ argv = { "touch", mark }, cancel = c }) end)
  raymond.sleep(0.1)
  c:cancel()
  local t0 = raymond.clock()
  while not queued and raymond.clock() - t0 < 30 do raymond.sleep(0.02) end
  T.eq(queued and queued.killed, true)
  T.eq(first, nil, "the running one is untouched")
  hold:cancel()
  while not first and raymond.clock() - t0 < 30 do raymond.sleep(0.02) end
  T.eq(first.killed, true)
  raymond.set_max_parallel(0)
  local again = raymond.spawn({ argv = { "touch", mark }, cancel = c })
  T.eq(again.killed, true)
  T.eq(raymond.stat(mark), nil, "never ran")
end)

-- ------------------------------------------------------------ lint, diagram

local analyse = require("raymond.analyse")
local diagram = require("raymond.diagram")
local lint = require("raymond.lint")

-- The findings of lint over a workflow of `files` (name -> text), as
-- "LINE CHECK MESSAGE" lines, and its Mermaid diagram.
local function lint_of(files)
  local dir = T.tmpdir()
  for name, text in pairs(files) do T.put(dir .. "/" .. name, text) end
  local wf = assert(analyse.load(dir, dir, { no_default_hooks = true }))
  local found = {}
  for _, d in ipairs(lint.run(wf)) do
    found[#found + 1] = string.format("%s %s %s", tostring(d.line), d.check, d.message)
  end
  local mmd = diagram.mermaid(diagram.graph(wf))
  analyse.close(wf)
  return table.concat(found, "\n"), mmd
end

local BASE = { ["W.sh"] = 'echo "<result>w</result>"\n', ["DONE.sh"] = 'echo "<result>d</result>"\n',
               ["SUM.sh"] = 'echo "<result>s</result>"\n' }

local function with(start)
  local files = { ["START.sh"] = start }
  for k, v in pairs(BASE) do files[k] = v end
  return files
end

T.test("lint: a join target that is missing is an error at its line; a good one reaches its state", function()
  local found = lint_of(with('# fan out\necho "<fork next=\\"DONE\\" join=\\"SUMMRY\\">W</fork>"\n'))
  T.has(found, "2 missing-target <fork join=\"SUMMRY\">: state 'SUMMRY' not found")
  found = lint_of(with('echo "<fork next=\\"DONE\\" join=\\"SUM\\">W</fork>"\n'))
  T.eq(found:find("unreachable", 1, true), nil, "SUM.sh is reached through the join: " .. found)
  T.eq(found:find("error", 1, true), nil, found)
end)

T.test("lint: wait= checked for its form and for a join beside it; forks joining differently warned", function()
  local found = lint_of(with('echo "<fork next=\\"DONE\\" join=\\"SUM\\" wait=\\"most\\">W</fork>"\n'
    .. 'echo "<fork next=\\"DONE\\" wait=\\"first\\">W</fork>"\n'
    .. 'echo "<fork next=\\"DONE\\" join=\\"SUM\\" wait=\\"$n\\">W</fork>"\n'))
  T.has(found, "1 invalid-join wait=\"most\" is not a join policy")
  T.has(found, "2 invalid-join <fork wait=\"first\"> has no join=\"STATE\"")
  T.has(found, "2 join-mismatch <fork> differs from the <fork join=\"SUM\"> on line 1")
  T.eq(found:find("3 invalid-join", 1, true), nil, "a computed wait= is left to the run")
end)

T.test("diagram: an edge labelled join from the worker's state to the summary, which may end", function()
  local _, mmd = lint_of(with('echo "<fork next=\\"DONE\\" join=\\"SUM\\">W</fork>"\n'))
  T.has(mmd, 's_W_sh ==>|"join"| s_SUM_sh')
  T.has(mmd, 's_SUM_sh -->|"result"| __end__')
end)
