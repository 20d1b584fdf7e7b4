-- The ledger of Claude turns (raymond.run): a turn that waits for turns in
-- flight never waits for one that nothing runs.
local T = require("testing")
local raymond = require("raymond")
local hooks = require("raymond.hooks")
local run_mod = require("raymond.run")

-- Open turn `key` in a coroutine of its own; wait() waits up to 60 s for
-- it to return and gives the entry.
local function open_in_background(run, agent, key, purpose)
  local o = {}
  raymond.go(function()
    o.entry = run:open_turn(agent, key, { id = key, purpose = purpose })
    o.done = true
  end)
  function o.wait()
    for _ = 1, 600 do
      if o.done then break end
      raymond.sleep(0.1)
    end
    -- A wait that never ended is woken by a stop, so the file still ends.
    if not o.done then raymond.stop() end
    T.eq(o.done, true, "open_turn returned")
    return assert(o.entry, "no turn opened")
  end
  return o
end

T.test("a turn told to wait for turns in flight closes an open turn nothing runs, at its usage, and goes on", function()
  local set = assert(hooks.load({ { name = "wait.lua", source = [[
    return { PreTurn = function(ev) if ev.run.open_turns > 0 then return { waitForTurns = true } end end }
  ]] } }))
  local agent = { id = "main", state = "START.md", stack = {} }
  local rec = { id = "r", workflow = "wf", launch = {}, agents = { agent },
                open_turns = { stray = { usd = 1, seen = 0.25, agent = "main" } } }
  local run = run_mod.new({ rec = rec, hooks = set, cwd = "." })
  local opening = open_in_background(run, agent, "t2", "state")
  local entry = opening.wait()
  T.eq(rec.open_turns.stray, nil, "the stray turn")
  T.eq(rec.open_turns.t2, entry, "the new turn")
  T.eq(rec.cost, 0.25, "run cost")
  T.eq(agent.cost, 0.25, "agent cost")
end)

T.test("a turn that waits records its hook's answer once, and the next turn's again", function()
  local set = assert(hooks.load({ { name = "wait.lua", source = [[
    local asks = 0
    return { PreTurn = function()
      asks = asks + 1
      if asks % 3 ~= 0 then return { waitForTurns = true } end
    end }
  ]] } }))
  local agent = { id = "main", state = "START.md", stack = {} }
  local rec = { id = "r", workflow = "wf", launch = {}, agents = { agent },
                open_turns = { busy = { usd = 1, seen = 0, agent = "other" } } }
  local lines = {}
  local record = { decision = function(_, line) lines[#lines + 1] = line end }
  local run = run_mod.new({ rec = rec, hooks = set, cwd = ".", record = record })
  -- The busy turn is in flight, so only a turn closing wakes the waiter.
  run.flight.busy = {}
  local opened = 0
  raymond.go(function()
    for n = 1, 2 do
      if run:open_turn(agent, "t" .. n, { id = "t" .. n, purpose = "state" }) then opened = opened + 1 end
    end
  end)
  for _ = 1, 600 do
    if opened == 2 then break end
    run.turns_closed = run.turns_closed + 1
    raymond.sleep(0.1)
  end
  if opened < 2 then raymond.stop() end
  T.eq(opened, 2, "turns opened")
  T.eq(#lines, 2, "decision lines: " .. table.concat(lines, " | "))
  T.eq(lines[1], "[main] wait.lua:2 PreTurn: set waitForTurns = true")
end)

T.test("a turn waiting for turns in flight stops waiting once the only one left is paused in a tool hook", function()
  local set = assert(hooks.load({ { name = "wait.lua", source = [[
    return { PreTurn = function(ev)
      ev.run.data.paused = ev.run.paused_turns
      if ev.run.open_turns > 0 then return { waitForTurns = true } end
    end }
  ]] } }))
  local agent = { id = "main", state = "START.md", stack = {} }
  local rec = { id = "r", workflow = "wf", launch = {}, agents = { agent }, data = {},
                open_turns = { busy = { usd = 1, seen = 0, agent = "main" } } }
  local run = run_mod.new({ rec = rec, hooks = set, cwd = "." })
  run.flight.busy = {}
  local opening = open_in_background(run, agent, "eval", "evaluate")
  raymond.sleep(0.3)
  T.eq(opening.done, nil, "waiting while the busy turn runs")
  -- Its CLI now waits for its hooks, whose evaluation is this turn.
  run:pause("busy", 1)
  opening.wait()
  T.eq(rec.data.paused, 1, "run.paused_turns")
  T.eq(rec.open_turns.busy.usd, 1, "the paused turn keeps its reservation")
  run:pause("busy", -1)
  T.eq(run:paused("busy"), false, "going again")
end)

-- The default budget hook, as raymond loads it.
local function budget_hook()
  local f = assert(io.open("hooks/budget.lua"))
  local src = f:read("a")
  f:close()
  return assert(hooks.load({ { name = "budget.lua", source = src } }))
end

local function pre_turn(set, run, turn)
  local d = assert(hooks.emit(set, "PreTurn", { run = run, turn = turn }))
  return d
end

T.test("the budget hook leaves a tenth of a turn's share free for its tool hooks' evaluations", function()
  local set = budget_hook()
  local run = { budget_usd = 10, cost_usd = 0, reserved_usd = 0, open_turns = 0, paused_turns = 0, agents = 1 }
  T.eq(pre_turn(set, run, { purpose = "state" }).maxBudgetUsd, 10, "without tool hooks")
  T.eq(pre_turn(set, run, { purpose = "state", tool_hooks = true }).maxBudgetUsd, 9, "with tool hooks")
  -- The evaluation of a hook of that turn, paused meanwhile.
  run.reserved_usd, run.open_turns, run.paused_turns = 9, 1, 1
  T.eq(pre_turn(set, run, { purpose = "evaluate" }).maxBudgetUsd, 1, "the evaluation")
end)

T.test("the budget hook waits for turns that run, and stops when only paused ones hold the budget", function()
  local set = budget_hook()
  local run = { budget_usd = 1, cost_usd = 0.5, reserved_usd = 0.5, open_turns = 2, paused_turns = 1, agents = 2 }
  T.eq(pre_turn(set, run, { purpose = "evaluate" }).waitForTurns, true, "one turn runs")
  run.paused_turns = 2
  local d = pre_turn(set, run, { purpose = "evaluate" })
  T.eq(d.continue, false, "stops")
  T.has(d.stopReason, "reserved by 2 turn(s) in flight (2 paused in a tool hook)")
  T.eq(d.resumeArgs, "--budget 2.00", "the raised budget counts what they hold")
end)
