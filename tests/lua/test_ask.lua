-- Tests for <ask> (raymond.ask, its entry in raymond.tags): durations,
-- decide and apply, answers and timeouts before a resume, the state
-- file's checks, the JSON of a paused run, policy and lint.

local T = require("testing")
local raymond = require("raymond")
local ask = require("raymond.ask")
local policy = require("raymond.policy")
local runstate = require("raymond.runstate")
local transition = require("raymond.transition")

local DIR = T.tmpdir()
for _, n in ipairs({ "START.sh", "YES.sh", "LATE.sh", "N.md" }) do
  T.put(DIR .. "/" .. n, "echo '<result>x</result>'\n")
end

local function decide(text)
  return transition.decide(assert(raymond.parse_tags(text)), DIR)
end

local function agent(id, fields)
  local a = { id = id, state = "START.sh", stack = { { state = "N.md", session = "s0" } }, cwd = DIR,
              vars = {}, data = {}, session = "s1" }
  for k, v in pairs(fields or {}) do a[k] = v end
  return a
end

-- A record whose agents asked at times 100, 200, ... in list order.
local function asking_record(ids, deadlines)
  local rec = runstate.new("r1", DIR, "START.sh", { on_ask = "pause" })
  for i, id in ipairs(ids) do
    local a = agent(id)
    local tr = assert(decide(string.format('<ask next="YES" %s>q%d</ask>',
      deadlines and deadlines[i] or "", i)))
    assert(transition.apply(rec, a, tr, { DIR }))
    a.ask.asked_at = 100 * i
    if a.ask.deadline then a.ask.deadline = 100 * i + ask.duration(a.ask.timeout) end
    rec.agents[i] = a
  end
  return rec
end

T.test("duration: a whole number and s, m, h or d, strictly", function()
  T.eq(ask.duration("30s"), 30, "30s")
  T.eq(ask.duration("15m"), 900, "15m")
  T.eq(ask.duration("48h"), 172800, "48h")
  T.eq(ask.duration("2d"), 172800, "2d")
  for _, bad in ipairs({ "", "5", "5x", "1.5h", " 5s", "5s ", "5 s", "-5s", "1h30m", "5S", "0s", "400d" }) do
    local v, why = ask.duration(bad)
    if v ~= nil or type(why) ~= "string" then error("duration accepted " .. T.show(bad)) end
  end
  T.has(select(2, ask.duration("5x")), "not a duration", "message")
end)

T.test("decide: <ask> takes its question as payload, next and timeout_next as states", function()
  local tr = assert(decide('<ask next="YES" timeout="2h" timeout_next="LATE">  Ship it?\n</ask>'))
  T.same(tr, { tag = "ask", payload = "  Ship it?\n", next = "YES.sh", timeout = "2h", timeout_next = "LATE.sh" })
  T.has(select(2, decide("<ask>q</ask>")), '<ask> needs next="STATE"', "no next")
  T.has(select(2, decide('<ask next="NOPE">q</ask>')), "NOPE", "missing next")
  T.has(select(2, decide('<ask nxt="YES">q</ask>')), "unknown attribute 'nxt' on <ask>; allowed: next, timeout, timeout_next",
    "misspelt")
  T.has(select(2, decide('<ask next="YES" timeout="2 hours">q</ask>')), "<ask timeout=\"2 hours\">: '2 hours' is not a duration",
    "bad timeout")
  T.has(select(2, decide('<ask next="YES" timeout_next="LATE">q</ask>')), "timeout_next needs timeout=", "no timeout")
  T.has(select(2, decide('<ask next="../YES.sh">q</ask>')), "contains a path separator", "a path")
end)

T.test("apply: the agent asks, its state, session and stack kept", function()
  local rec = runstate.new("r1", DIR, "START.sh", {})
  local a = agent("main_w1", { input = "old" })
  local out = assert(transition.apply(rec, a, assert(decide('<ask next="YES" timeout="1m" timeout_next="LATE">Q?</ask>')),
    { DIR }))
  T.eq(out.asked, true, "summary")
  T.eq(a.status, "asking", "status")
  T.eq(a.state, "START.sh", "state kept")
  T.eq(a.session, "s1", "session kept")
  T.eq(#a.stack, 1, "stack kept")
  T.eq(a.input, nil, "input cleared")
  T.eq(a.ask.prompt, "Q?", "prompt")
  T.eq(a.ask.next, "YES.sh", "next")
  T.eq(a.ask.timeout_next, "LATE.sh", "timeout_next")
  if not a.ask.id:find("^ask_main_w1_%d+$") then error("ask id " .. a.ask.id) end
  T.eq(a.ask.deadline - a.ask.asked_at, 60, "deadline")
end)

T.test("settle: --input answers the oldest; answer ID ASK_ID the one named; the others stay", function()
  local rec = asking_record({ "main", "main_a1", "main_b2" })
  local first, second = rec.agents[1].ask.id, rec.agents[2].ask.id
  assert(ask.settle(rec, { input = "one" }, 1000))
  T.eq(rec.agents[1].status, nil, "oldest answered")
  T.eq(rec.agents[1].state, "YES.sh", "at next")
  T.eq(rec.agents[1].input, "one", "input")
  T.eq(rec.agents[1].ask_id, first, "{{ask_id}}")
  T.eq(rec.agents[1].session, "s1", "session")
  T.eq(rec.agents[2].status, "asking", "second waits")
  assert(ask.settle(rec, { ask_id = rec.agents[3].ask.id, input = "three" }, 1000))
  T.eq(rec.agents[3].input, "three", "named")
  T.eq(rec.agents[2].ask.id, second, "untouched")
  T.eq(#rec.resolved_inputs, 2, "resolved")
  T.eq(rec.resolved_inputs[1].response_text, "one", "recorded")
  T.eq(#ask.pending(rec), 1, "one pending")
end)

T.test("settle: unknown ask ids and --input with none pending fail and change nothing", function()
  local rec = asking_record({ "main" })
  local before = assert(raymond.json_encode(rec))
  local ok, err = ask.settle(rec, { ask_id = "ask_main_1", input = "x" }, 1000)
  T.eq(ok, nil, "refused")
  T.has(err.msg, "run r1 has no pending ask ask_main_1", "message")
  T.has(err.hint, rec.agents[1].ask.id, "hint lists the pending")
  T.eq(assert(raymond.json_encode(rec)), before, "unchanged")
  local none = runstate.new("r2", DIR, "START.sh", {})
  ok, err = ask.settle(none, { input = "x" }, 1000)
  T.eq(ok, nil, "nothing pending")
  T.has(err.msg, "run r2 has no pending ask for --input to answer", "message")
  T.eq(ask.settle(none, {}, 1000), true, "a plain resume")
end)

T.test("settle: past the deadline an ask takes timeout_next; without it the resume fails, unchanged", function()
  local rec = asking_record({ "main", "main_a1" }, { 'timeout="10s" timeout_next="LATE"', 'timeout="10s"' })
  local before = assert(raymond.json_encode(rec))
  local ok, err = ask.settle(rec, {}, 5000)
  T.eq(ok, nil, "expired without timeout_next")
  T.has(err.msg, "agent main_a1: ask " .. rec.agents[2].ask.id .. " timed out: no answer within 10s", "message")
  T.has(err.hint, "raymond answer r1 " .. rec.agents[2].ask.id, "hint")
  T.eq(assert(raymond.json_encode(rec)), before, "unchanged")
  -- An ask with a timeout route cannot be answered after its deadline.
  ok, err = ask.settle(rec, { ask_id = rec.agents[1].ask.id, input = "late" }, 5000)
  T.eq(ok, nil, "timed out with a route")
  T.has(err.msg, "ask " .. rec.agents[1].ask.id .. " timed out at ", "message")
  T.has(err.msg, "goes on at LATE.sh instead", "names the route")
  T.eq(assert(raymond.json_encode(rec)), before, "still unchanged")
  -- Answering the one without a route late is allowed; the other times out.
  assert(ask.settle(rec, { input = "late" }, 5000))
  T.eq(rec.agents[1].state, "LATE.sh", "timeout route")
  T.eq(rec.agents[1].input, nil, "no input on the timeout route")
  T.eq(rec.agents[2].state, "YES.sh", "answered late")
  T.eq(rec.resolved_inputs[2].timed_out, true, "recorded as timed out")
  -- Before the deadline nothing times out.
  rec = asking_record({ "main" }, { 'timeout="10s" timeout_next="LATE"' })
  assert(ask.settle(rec, {}, 105))
  T.eq(rec.agents[1].status, "asking", "not yet")
end)

T.test("state file: an asking agent round-trips; a bad ask is refused naming the field", function()
  local rec = asking_record({ "main" }, { 'timeout="1h" timeout_next="LATE"' })
  local text = assert(runstate.encode(rec))
  local back = assert(runstate.decode(text, "s.json"))
  T.same(back.agents[1].ask, rec.agents[1].ask, "ask")
  T.eq(back.launch.on_ask, "pause", "on_ask")
  local function refused(edit, want)
    local r = assert(runstate.decode(text, "s.json"))
    edit(r)
    local _, err = runstate.decode(assert(raymond.json_encode(r)), "s.json")
    T.has(err or "", want, want)
  end
  refused(function(r) r.agents[1].ask.next = "../x.sh" end, "agents[1].ask.next '../x.sh' is not a state")
  refused(function(r) r.agents[1].ask.id = "ask_other_1" end, "agents[1].ask.id 'ask_other_1' is not an ask id of agent main")
  refused(function(r) r.agents[1].ask.timeout = "soon" end, "agents[1].ask.timeout 'soon' is not a duration")
  refused(function(r) r.agents[1].ask = nil end, "agents[1].ask should be a table")
  refused(function(r) r.agents[1].status = nil end, "agents[1].ask is set, but the agent's status is not asking")
  refused(function(r) r.launch.on_ask = "sometimes" end, "launch.on_ask 'sometimes' is not reject, pause or prompt")
end)

T.test("report: the original's keys, the oldest ask first, every pending one listed", function()
  local rec = asking_record({ "main", "main_a1" })
  rec.agents[2].ask.prompt = 'say "hi"\n\27[2J'
  local j = raymond.cjson.decode(ask.report(rec))
  T.eq(j.status, "asking", "status")
  T.eq(j.run_id, "r1", "run_id")
  T.eq(j.workflow, DIR:match("([^/]+)$"), "workflow")
  T.same(j.asking, { ask_id = rec.agents[1].ask.id, agent_id = "main", prompt = "q1" }, "asking")
  T.eq(j.pending_count, 2, "pending_count")
  T.eq(j.resume, 'raymond --resume r1 --input "[your response]"', "resume")
  T.eq(j.pending[2].prompt, 'say "hi"\n\27[2J', "prompt escaped and read back")
  if ask.report(rec):find("\27", 1, true) then error("a control character reached the output raw") end
end)

T.test("policy: an allowed <ask> entry allows it, is never implicit, and shows in the reminder", function()
  local pol = assert(policy.parse({ allowed_transitions = { { tag = "ask", next = "YES", timeout_next = "LATE" } } }, "S.md"))
  T.eq(policy.implicit_entry(pol), nil, "not implicit")
  local tags = assert(raymond.parse_tags('<ask next="YES.sh" timeout="1h" timeout_next="LATE">ok?</ask>'))
  T.eq(policy.check(pol, tags, DIR), nil, "allowed")
  tags = assert(raymond.parse_tags('<ask next="START">ok?</ask>'))
  T.has(policy.check(pol, tags, DIR) or "", "<ask>...</ask> is not one of the allowed transitions", "other next")
  T.has(policy.reminder(pol, "why"), '<ask next="YES" timeout_next="LATE">', "reminder")
end)

T.test("lint and the launch check see an <ask> in a script and in allowed_transitions", function()
  local analyse = require("raymond.analyse")
  local lint = require("raymond.lint")
  local wf = T.tmpdir()
  T.put(wf .. "/START.sh", 'echo "<goto>REVIEW.md</goto>"\n')
  T.put(wf .. "/REVIEW.md", "---\nallowed_transitions:\n  - { tag: ask, timeout: 5x }\n---\nAsk.\n")
  local model = assert(analyse.load(wf, "/"))
  local checks = {}
  for _, d in ipairs(lint.run(model)) do checks[d.check] = (checks[d.check] or 0) + 1 end
  T.eq(checks["missing-ask-next"], 1, "missing-ask-next")
  T.eq(checks["invalid-ask-timeout"], 1, "invalid-ask-timeout")
  local refusal = ask.refusal(model, "wf", function(p) return p end)
  T.has(refusal.msg, "REVIEW.md:3", "names file and line")
  analyse.close(model)
end)
