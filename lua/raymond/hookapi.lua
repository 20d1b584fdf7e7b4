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
-- fresh session, nothing resumed); its cost is added to the run's, so the
-- budget sees it.  Commands run in the directory raymond was started from
-- unless `cwd` says otherwise.

local raymond = require("raymond")
local claude = require("raymond.claude")
local console = require("raymond.console")

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

-- A wait the limit cut short ends the hook call, as its limit says.
local function check_cut(res, cut)
  if cut and res.timed_out then error("hook exceeded its time limit", 3) end
end

function M.new(ctx)
  local api = {}

  function api.exec(t)
    if type(t) ~= "table" then error("raymond.exec takes a table: {\"cmd\", \"arg\", cwd=, timeout=, env=}", 2) end
    local argv = {}
    for i, a in ipairs(t.argv or t) do argv[i] = tostring(a) end
    if #argv == 0 then error("raymond.exec: no command given", 2) end
    local env = {}
    for k, v in pairs(ctx.environ) do env[k] = v end
    for k, v in pairs(t.env or {}) do env[k] = tostring(v) end
    local timeout, cut = bounded(t.timeout)
    local res = raymond.spawn({ argv = argv, cwd = t.cwd or ctx.cwd, env = env,
                                timeout = timeout, capture = true })
    if res.spawn_error then return nil, res.spawn_error end
    check_cut(res, cut)
    return { code = res.exit, signal = res.signal, stdout = res.stdout, stderr = res.stderr,
             timed_out = res.timed_out }
  end

  function api.evaluate(t)
    if type(t) ~= "table" or type(t.prompt) ~= "string" then
      error("raymond.evaluate takes a table with a prompt: {prompt=, model=, timeout=}", 2)
    end
    local launch = ctx.run.launch
    local spec = {
      claude = launch.claude, prompt = t.prompt, model = t.model, effort = t.effort,
      skip_permissions = launch.skip_permissions, session = { mode = "fresh", id = raymond.uuid() },
    }
    local reader = claude.reader(nil)
    local timeout, cut = bounded(t.timeout or launch.timeout)
    local req = { argv = claude.argv(spec), env = ctx.environ, cwd = ctx.cwd,
                  timeout = timeout, lines = reader.line }
    ctx.run.steps = ctx.run.steps + 1
    if ctx.debug_dir then
      local base = string.format("%s/%05d_hook_evaluate", ctx.debug_dir, ctx.run.steps)
      req.stdout_file, req.stderr_file = base .. ".stream.jsonl", base .. ".stderr"
      console.write_file(base .. ".prompt", t.prompt)
    end
    local res = raymond.spawn(req)
    check_cut(res, cut)
    local out = claude.outcome(res, reader)
    ctx.run.cost = (ctx.run.cost or 0) + (out.cost or 0)
    raymond.mark_dirty()
    if out.kind ~= "ok" then return nil, out.msg or ("evaluation " .. out.kind) end
    return (out.text:gsub("^%s+", ""):gsub("%s+$", "")), out.cost
  end

  return api
end

return M
