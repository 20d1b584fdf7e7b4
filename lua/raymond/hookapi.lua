-- raymond.hookapi: the functions hooks call that need the run.
--
--   raymond.exec{"make", "test", cwd=, timeout=, env=}
--       -> {code=, signal=, stdout=, stderr=, timed_out=} | nil, message
--   raymond.evaluate{prompt=, model=, effort=, timeout=}
--       -> text, cost | nil, message
--
-- Both yield to the event loop while they wait, so other agents go on.
-- `timeout` is seconds without output (0: none); it never reaches past the
-- hook call's own time limit.  evaluate is a stateless Claude turn (a
-- fresh session, nothing resumed), opened and closed like any turn of the
-- run (raymond.run): PreTurn hooks give it its share of the budget, and
-- its cost, even when it failed, is counted and told to the Cost hooks;
-- when the hook call's limit cuts it after the turn opened, the turn is
-- closed once the call has ended, at the usage its stream showed
-- (raymond.run, call_hooks), with a warning instead of a Cost event.
-- A PreTurn or Cost handler cannot evaluate: that turn would need a
-- PreTurn of its own.  Its turn has no tools (no built-in tool, no MCP
-- server) and so needs no permissions: a prompt that quotes what a model
-- wrote, a tool call's input, cannot talk it into running anything.  A
-- tool hook's evaluation never waits for the turn paused in that hook
-- (raymond.run, Run:pause).  Commands run in the directory raymond was
-- started from unless `cwd` says otherwise.

local raymond = require("raymond")
local claude = require("raymond.claude")
local executor = require("raymond.executor")
local hooks = require("raymond.hooks")
local text = require("raymond.text")

local M = {}

-- The timeout a waiting call may use within the hook call's limit, and
-- whether the limit cut it; with no time left the call is not made (0
-- would mean "no timeout").
local function bounded(timeout)
  local left = raymond.limit_left()
  timeout = tonumber(timeout) or 0
  if not left then return timeout, false end
  if left <= 0 then error("hook exceeded its time limit", 3) end
  if timeout > 0 and timeout < left then return timeout, false end
  return left, true
end

-- A wait the limit cut short ends the hook call, as its limit says; one
-- a stop of the run cut short (the command killed, or never started)
-- ends it without its decision applying (raymond.hooks.stopped).
local function check_cut(res, cut)
  if raymond.stopping() then hooks.stopped(3) end
  if cut and res.timed_out then error("hook exceeded its time limit", 3) end
end

-- The functions for hooks of `run` (a raymond.run object).
function M.new(run)
  local api = {}

  function api.exec(t)
    if type(t) ~= "table" then error("raymond.exec takes a table: {\"cmd\", \"arg\", cwd=, timeout=, env=}", 2) end
    local argv = {}
    for i, a in ipairs(t.argv or t) do argv[i] = tostring(a) end
    if #argv == 0 then error("raymond.exec: no command given", 2) end
    local timeout, cut = bounded(t.timeout)
    local res = executor.run(run, { argv = argv, cwd = t.cwd, env = t.env, timeout = timeout, capture = true })
    if res.spawn_error then return nil, res.spawn_error end
    check_cut(res, cut)
    return { code = res.exit, signal = res.signal, stdout = res.stdout, stderr = res.stderr,
             timed_out = res.timed_out }
  end

  function api.evaluate(t)
    if type(t) ~= "table" or type(t.prompt) ~= "string" then
      error("raymond.evaluate takes a table with a prompt: {prompt=, model=, timeout=}", 2)
    end
    local inside = hooks.running()
    if inside == "PreTurn" or inside == "Cost" then
      error("raymond.evaluate cannot be called from a " .. inside .. " handler: its turn would need "
        .. "a PreTurn of its own", 2)
    end
    local launch = run.rec.launch
    local agent, id = run:agent_now(), raymond.uuid()
    local info = { id = id, purpose = "evaluate", model = t.model }
    local entry = run:open_turn(agent, id, info)
    if not entry then return nil, "the run is stopping" end
    -- After open_turn, which may have waited for other turns.  A turn
    -- left open by an error from here on is closed when the hook call
    -- ends (raymond.run).
    local timeout, cut = bounded(t.timeout or launch.timeout)
    local spec = {
      claude = launch.claude, model = t.model, effort = t.effort, no_tools = true,
      session = { mode = "fresh", id = id }, max_budget_usd = entry.cap,
    }
    local reader = claude.reader(nil, function(usd) run:saw(entry, usd) end)
    local res = executor.run(run, {
      argv = claude.argv(spec), stdin = t.prompt, timeout = timeout, lines = reader.line, lines_max = claude.LINE_MAX,
      name = "hook_evaluate", keep = { prompt = t.prompt },
      turn = { agent = agent, state = agent and agent.state, purpose = "evaluate", prompt = t.prompt,
               session = spec.session },
    })
    -- The call's time may have run out while the CLI ran (its output kept
    -- the turn going): the call ends here, whatever instruction count
    -- its limit last looked at, and the turn left open is closed when
    -- the call ends.
    if raymond.limit_left() == 0 then error("hook exceeded its time limit", 2) end
    local out = claude.outcome(res, reader)
    info.max_budget_usd = entry.cap
    local going = run:close_turn(agent, id, info, out)
    check_cut(res, cut)
    if not going then return nil, "the run is stopping" end
    if out.kind ~= "ok" then return nil, out.msg or ("evaluation " .. out.kind) end
    return text.trim(out.text), out.cost
  end

  return api
end

return M
