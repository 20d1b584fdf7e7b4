-- raymond.model: the scripted model speaks the CLI's stream-json, so
-- raymond.claude reads its turns as it reads the CLI's.
local T = require("testing")
local raymond = require("raymond")
local claude = require("raymond.claude")
local model = require("raymond.model")

local dir = assert(raymond.mkdtemp("raymond-model-test-"))

local n = 0
local function open(case)
  n = n + 1
  local d = dir .. "/" .. n
  assert(raymond.mkdir_p(d))
  assert(raymond.write_atomic(d .. "/case.json", raymond.json_encode(case)))
  return assert(model.open(d .. "/case.json")), d
end

local agent = { id = "main", cwd = dir, vars = { item = "b" } }

-- One turn of state `state` through the model and claude's reader.
local function turn(m, state, session, purpose)
  local st = claude.reader(nil)
  local job = { lines = st.line, turn = { agent = agent, state = state, purpose = purpose or "state", prompt = "p",
                                          session = session } }
  local res = m:serve({ rec = { id = "test" } }, job, { model = "sonnet" })
  return claude.outcome(res, st), res
end

local function fresh() return { mode = "fresh", id = raymond.uuid() } end

T.test("a scripted reply is the turn's result, with its session and cost", function()
  local m = open({ model = { ["A.md"] = { { reply = { "<goto>B</goto> {{item}}" }, cost = 0.25 } } } })
  local s = fresh()
  local out = turn(m, "A.md", s)
  T.eq(out.kind, "ok")
  T.eq(out.text, "<goto>B</goto> b", "a reply is a template over the agent's variables")
  T.eq(out.session, s.id)
  T.eq(out.cost, 0.25)
end)

T.test("errors come first, as the CLI reports them, then the reply", function()
  local m = open({ model = { ["A.md"] = { { reply = { "ok" }, errors = { "overloaded", "crash", "usage_limit", "auth" } } } } })
  local kinds = {}
  for i = 1, 5 do kinds[i] = turn(m, "A.md", fresh()).kind end
  T.same(kinds, { "transient", "transient", "limit", "fatal", "ok" })
end)

T.test("sessions: a fresh id in use, a resumed id unknown", function()
  local m = open({ model = { ["A.md"] = { { reply = { "ok" } } } } })
  local s = fresh()
  T.eq(turn(m, "A.md", s).kind, "ok")
  local again = turn(m, "A.md", { mode = "fresh", id = s.id })
  T.eq(again.kind, "session")
  T.eq(again.reason, "in_use")
  local lost = turn(m, "A.md", { mode = "resume", id = raymond.uuid() })
  T.eq(lost.kind, "session")
  T.eq(lost.reason, "missing")
  T.eq(turn(m, "A.md", { mode = "resume", id = s.id }).kind, "ok", "a known session resumes")
end)

T.test("the sessions it started are known to a later process", function()
  local m, d = open({ model = { ["A.md"] = { { reply = { "ok" } } } } })
  local s = fresh()
  turn(m, "A.md", s)
  local again = assert(model.open(d .. "/case.json"))
  T.eq(turn(again, "A.md", { mode = "resume", id = s.id }).kind, "ok")
end)

T.test("a state the case does not script fails the turn, naming it", function()
  local m = open({ model = {} })
  local out = turn(m, "X.md", fresh())
  T.eq(out.kind, "fatal")
  T.eq(not not (out.stderr:find("no reply for [main] X.md (visit 1)", 1, true)), true, out.stderr)
end)

T.test("entries are chosen by when: agent, index and vars", function()
  local m = open({ model = { ["W.md"] = {
    { reply = { "two" }, when = { index = 2 } },
    { reply = { "b" }, when = { vars = { item = "b" } } },
  } } })
  local saved = agent.id
  agent.id = "main_worker2"
  T.eq(turn(m, "W.md", fresh()).text, "two")
  agent.id = "main_worker1"
  T.eq(turn(m, "W.md", fresh()).text, "b")
  agent.id = saved
end)

T.test("evaluate answers: a fitting when first, else in the run's order", function()
  local m = open({ evaluate = { { reply = { "NO" } }, { reply = { "YES" } },
                                { reply = { "MAYBE" }, when = { state = "S.md", visit = 1 } } } })
  T.eq(turn(m, "A.md", fresh(), "evaluate").text, "NO")
  T.eq(turn(m, "S.md", fresh(), "evaluate").text, "MAYBE")
  T.eq(turn(m, "A.md", fresh(), "evaluate").text, "YES", "the third evaluation takes the second plain answer")
  T.eq(turn(m, "A.md", fresh(), "evaluate").text, "YES", "the last repeats")
end)

T.test("a stubbed script gives its output's tags; other scripts run for real", function()
  local m = open({ scripts = { ["S.sh"] = { { stdout = "<goto>B</goto>", exit = 0 } } } })
  local res = m:serve({ rec = { id = "test" } }, { script = { agent = agent, state = "S.sh" } }, {})
  T.eq(res.exit, 0)
  T.eq(res.tags[1].name, "goto")
  T.eq(res.tags[1].body, "B")
  T.eq(m:serve({ rec = { id = "test" } }, { script = { agent = agent, state = "R.sh" } }, {}), nil)
  local bad = m:serve({ rec = { id = "test" } }, { script = { agent = agent, state = "S.sh" } }, {})
  T.eq(not not (bad.tags), true, "a stub gives the same output every visit")
end)

T.test("every step is traced as it starts", function()
  local m, d = open({ model = { ["A.md"] = { { reply = { "ok" } } } } })
  turn(m, "A.md", fresh())
  local text = raymond.read_file(d .. "/trace.jsonl")
  T.eq(not not (text:find('"ev":"start"', 1, true)), true, text)
end)

raymond.rmtree(dir)
