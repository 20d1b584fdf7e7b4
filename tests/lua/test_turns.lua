-- The ledger of Claude turns (raymond.run): a turn that waits for turns in
-- flight never waits for one that nothing runs.
local T = require("testing")
local raymond = require("raymond")
local hooks = require("raymond.hooks")
local run_mod = require("raymond.run")

T.test("a turn told to wait for turns in flight closes an open turn nothing runs, at its usage, and goes on", function()
  local set = assert(hooks.load({ { name = "wait.lua", source = [[
    return { PreTurn = function(ev) if ev.run.open_turns > 0 then return { waitForTurns = true } end end }
  ]] } }))
  local agent = { id = "main", state = "START.md", stack = {} }
  local rec = { id = "r", workflow = "wf", launch = {}, agents = { agent },
                open_turns = { stray = { usd = 1, seen = 0.25, agent = "main" } } }
  local run = run_mod.new({ rec = rec, hooks = set, cwd = "." })
  local entry, done
  raymond.go(function()
    entry = run:open_turn(agent, "t2", { id = "t2", purpose = "state" })
    done = true
  end)
  for _ = 1, 600 do
    if done then break end
    raymond.sleep(0.1)
  end
  -- A wait that never ended is woken by a stop, so the file still ends.
  if not done then raymond.stop() end
  T.eq(done, true, "open_turn returned")
  assert(entry, "no turn opened")
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
