-- raymond.markdown: running a markdown state with the Claude Code CLI.
--
-- run(E, agent) reads the state's frontmatter policy, renders the prompt,
-- lets hooks adjust it (PreState), invokes the CLI, counts the cost
-- (Cost), and decides the transition.  It returns the transition, or nil
-- and an error table {msg=, detail=, hint=}, or nil and nil when the run
-- is stopping.  E is the engine's interface: ctx, emit, stop, debug_base.
--
-- Sessions.  Before a launch the planned session goes into agent.turn and
-- the run is marked dirty, so the id is on disk before the CLI starts:
--
--   agent.session and agent.branch   branch:  --resume S --fork-session --session-id NEW
--   agent.session                    resume:  --resume S
--   no session                       fresh:   --session-id NEW
--
-- After a success agent.session is the turn's id.  A retry, or a resume
-- after a crash, launches the same turn again; if the CLI says the fresh
-- id is already in use (the lost attempt got that far) the turn resumes
-- it instead, and if a resumed id does not exist it is started as planned.
--
-- Policy.  With allowed_transitions, a missing, extra or disallowed tag is
-- answered by re-prompting the same session with a reminder, up to three
-- invocations; a single non-result transition is used implicitly when no
-- tag is emitted.  Without a policy a missing or doubled tag is an error.

local raymond = require("raymond")
local claude = require("raymond.claude")
local console = require("raymond.console")
local policy = require("raymond.policy")
local template = require("raymond.template")
local transition = require("raymond.transition")

local M = {}

M.ATTEMPTS = 3 -- invocations per state for reminders, and for retries

local function env_number(name, default)
  return tonumber(os.getenv(name) or "") or default
end

local function trim(s) return (s:gsub("^%s+", ""):gsub("%s+$", "")) end

-- The state file's policy and body, warning once per file about unknown fields.
local function load(E, name)
  local file = E.ctx.scope.path .. "/" .. name
  local text, err = E.ctx.scope:read(name)
  if not text then return nil, { msg = err } end
  local meta, body = raymond.frontmatter(text)
  if not meta then return nil, { msg = body, hint = "fix the frontmatter, then: raymond --resume " .. E.ctx.run.id } end
  local pol, warnings = policy.parse(meta, console.rel(file, E.ctx.cwd), E.ctx.hooks.frontmatter)
  if not pol then return nil, { msg = warnings } end
  E.ctx.warned = E.ctx.warned or {}
  if not E.ctx.warned[file] then
    E.ctx.warned[file] = true
    for _, w in ipairs(warnings) do console.warn("%s", w) end
  end
  return pol, body, meta
end

local function decide(E, pol, text, vars)
  local dir = E.ctx.scope
  local function render(s) return template.render(s, vars) end
  if pol.force_implicit then return policy.implicit(pol, dir, render) end
  local tags, perr = raymond.parse_tags(text)
  if not tags then return nil, perr end
  if #tags == 0 and policy.implicit_entry(pol) then return policy.implicit(pol, dir, render) end
  local tr, err = transition.decide(tags, dir)
  if not tr then return nil, err end
  if policy.has_policy(pol) then
    local why = policy.check(pol, tags, dir)
    if why then return nil, why end
  end
  if tr.tag == "result" then tr.payload = trim(tr.payload) end
  return tr
end

-- Wait until `t` (epoch seconds), showing a countdown.  False if the run
-- is stopping.
local function wait_until(E, agent, t, why)
  while true do
    local left = t - raymond.now()
    if left <= 0 then return true end
    console.progress("[%s] %s; waiting %dm%02ds (until %s UTC)", agent.id, why,
      math.floor(left / 60), math.floor(left % 60), os.date("!%H:%M:%S", math.floor(t)))
    if not raymond.sleep(math.min(left, left > 120 and 60 or 10)) then return false end
  end
end

-- The session of the next invocation: reuse a planned turn, else plan one.
local function plan(agent)
  if agent.turn then return agent.turn end
  local t
  if agent.session and agent.branch then
    t = { mode = "branch", from = agent.session, id = raymond.uuid() }
  elseif agent.session then
    t = { mode = "resume", id = agent.session }
  else
    t = { mode = "fresh", id = raymond.uuid() }
  end
  t.planned = t.mode
  agent.turn = t
  raymond.mark_dirty()
  return t
end

local function spawn(E, agent, inv, turn)
  local ctx = E.ctx
  local launch = ctx.run.launch
  local spec = {
    claude = launch.claude or "claude", prompt = inv.prompt, model = inv.model, effort = inv.effort,
    skip_permissions = launch.skip_permissions, session = turn, max_budget_usd = inv.max_budget_usd,
  }
  local argv = claude.argv(spec)
  local reader = claude.reader(not console.quiet and function(text)
    for line in text:gmatch("[^\n]+") do console.progress("[%s] %s", agent.id, line) end
  end or nil)
  local base = E.debug_base(agent)
  local req = { argv = argv, env = ctx.environ, cwd = agent.cwd, timeout = inv.timeout, lines = reader.line }
  if base then
    req.stdout_file, req.stderr_file = base .. ".stream.jsonl", base .. ".stderr"
    console.write_file(base .. ".prompt", inv.prompt)
    console.write_file(base .. ".argv.json", raymond.json_encode(argv) or "")
  end
  local t0 = raymond.now()
  local res = raymond.spawn(req)
  local out = claude.outcome(res, reader)
  if base then
    console.write_file(base .. ".meta.json", raymond.json_encode({
      started_at = t0, duration = res.duration, exit = res.exit, signal = res.signal,
      timed_out = res.timed_out, cost_usd = out.cost, session = out.session or turn.id,
      session_mode = turn.mode, outcome = out.kind, message = out.msg,
    }) or "")
  end
  return out
end

-- One successful invocation (kind ok or budget), after retries, session
-- fixes and usage-limit waits; or nil and an error; or nil, nil.
local function invoke(E, agent, inv)
  local ctx = E.ctx
  local failures, fixes = 0, 0
  while true do
    local paused = ctx.run.paused_until
    if paused and paused > raymond.now() then
      if not wait_until(E, agent, paused, "usage limit reached") then return nil, nil end
      ctx.run.paused_until = nil
      raymond.mark_dirty()
    end
    local turn = plan(agent)
    local out = spawn(E, agent, inv, turn)
    if out.kind == "ok" or out.kind == "budget" then return out end
    if out.kind == "stopped" then return nil, nil end
    if out.kind == "fatal" then return nil, { msg = out.msg, detail = console.tail(out.stderr, 10), hint = out.hint } end
    if out.kind == "session" and fixes < 2 then
      fixes = fixes + 1
      if out.reason == "in_use" then
        agent.turn = { mode = "resume", id = turn.id, planned = turn.planned, from = turn.from }
      elseif turn.mode == "resume" and turn.planned ~= "resume" then
        agent.turn = { mode = turn.planned, id = turn.id, planned = turn.planned, from = turn.from }
      else
        return nil, { msg = string.format("%s (%s)", out.msg, turn.id),
          hint = "the conversation is gone from Claude Code's store; start a new run" }
      end
      raymond.mark_dirty()
    elseif out.kind == "limit" then
      local reset = out.reset or (raymond.now() + 3600)
      local resume_at = reset + env_number("RAYMOND_LIMIT_MARGIN", 300)
      if ctx.run.launch.no_wait then
        E.stop(agent, string.format("usage limit reached (%s); it resets at %s UTC: continue after that with "
          .. "raymond --resume %s", out.msg, os.date("!%Y-%m-%d %H:%M", math.floor(reset)), ctx.run.id))
        return nil, nil
      end
      ctx.run.paused_until = resume_at
      raymond.mark_dirty()
    else
      failures = failures + 1
      if failures >= M.ATTEMPTS then
        return nil, { msg = string.format("Claude Code failed %d times: %s", failures, out.msg),
          detail = console.tail(out.stderr, 10) }
      end
      local delay = env_number("RAYMOND_RETRY_DELAY", 2) * 2 ^ (failures - 1)
      console.progress("[%s] %s: %s; retrying in %gs (attempt %d of %d)", agent.id, agent.state,
        out.msg, delay, failures + 1, M.ATTEMPTS)
      if not raymond.sleep(delay) then return nil, nil end
    end
  end
end

-- Count the cost of one invocation and let hooks (the budget) react.
local function count(E, agent, out)
  local run = E.ctx.run
  agent.cost = (agent.cost or 0) + out.cost
  run.cost = (run.cost or 0) + out.cost
  raymond.mark_dirty()
  local d = E.emit("Cost", agent, { cost_usd = out.cost, total_cost_usd = run.cost })
  if not d then return false end
  if d.continue == false then
    E.stop_by_hook(agent, d)
    return false
  end
  return true
end

function M.run(E, agent)
  local ctx = E.ctx
  local pol, body, meta = load(E, agent.state)
  if not pol then return nil, body end
  local vars = template.vars(ctx.run, agent)
  local launch = ctx.run.launch
  local inv = {
    prompt = template.render(body, vars), model = pol.model or launch.model,
    effort = pol.effort or launch.effort, timeout = pol.timeout or launch.timeout,
  }
  if agent.context then inv.prompt = inv.prompt .. "\n\n" .. agent.context end
  local d = E.emit("PreState", agent, { kind = "markdown", invocation = inv, frontmatter = meta })
  local pre, perr = E.state_decision(agent, d, false)
  if pre ~= "go" then return pre, perr end
  inv.model = d.model or inv.model
  inv.effort = d.effort or inv.effort
  inv.prompt = d.prompt or inv.prompt
  inv.max_budget_usd = d.maxBudgetUsd
  local base_prompt = inv.prompt
  local state_cost = 0 -- every attempt of this state, reminders included
  for attempt = 1, M.ATTEMPTS do
    local out, err = invoke(E, agent, inv)
    if not out then return nil, err end
    -- The id raymond chose is the conversation's id in every mode (fresh,
    -- resumed, branched), and it is the one already on disk.
    agent.session, agent.branch, agent.turn = agent.turn.id, nil, nil
    raymond.mark_dirty()
    state_cost = state_cost + out.cost
    if not count(E, agent, out) then return nil, nil end
    if out.kind == "budget" then
      return nil, { msg = out.msg .. " before it finished", hint = "raise --budget, then: raymond --resume " .. ctx.run.id }
    end
    local tr, why, blocked = M.judge(E, agent, pol, out, vars, meta)
    if tr == nil and why == nil then return nil, blocked end -- stopped, or an error table
    if tr then
      agent.context = nil
      tr.cost = state_cost
      return tr
    end
    local quoted = console.tail(out.text, 20)
    if not blocked and not policy.has_policy(pol) then
      return nil, { msg = why, detail = quoted,
        hint = "make the prompt end with exactly one tag, or give it allowed_transitions so raymond can remind the model" }
    end
    if attempt == M.ATTEMPTS then
      return nil, { msg = string.format("%s, after %d attempts", why, M.ATTEMPTS), detail = quoted }
    end
    console.progress("[%s] %s: %s; reminding the model (attempt %d of %d)", agent.id, agent.state, why,
      attempt + 1, M.ATTEMPTS)
    local reminder = "your last reply was not accepted: " .. why .. "."
    if policy.has_policy(pol) then
      inv.prompt = base_prompt .. policy.reminder(pol, reminder)
    else
      inv.prompt = base_prompt .. "\n\n---\nREMINDER: " .. reminder .. "\n---"
    end
  end
end

-- Weigh one reply: hooks first (PostState may replace the transition or
-- block the reply), then the tags, then PreTransition (which may block).
-- Returns the transition; or nil, why, blocked for a reply to re-prompt;
-- or nil, nil, err-or-nil when the run fails or stops.
function M.judge(E, agent, pol, out, vars, meta)
  local d = E.emit("PostState", agent, { kind = "markdown", output = out.text, cost_usd = out.cost,
    duration = out.duration, exit_code = out.exit, frontmatter = meta })
  if d and d.decision == "block" then
    return nil, "a hook (" .. tostring(d.by) .. ") blocked it: " .. (d.reason or "no reason given"), true
  end
  local post, perr = E.state_decision(agent, d, false)
  if post == nil then return nil, nil, perr end
  if post ~= "go" then return post end
  local tr, why = decide(E, pol, out.text, vars)
  if not tr then return nil, why, false end
  local pre = E.pre_transition(agent, tr)
  if not pre then return nil, nil, nil end
  if pre.decision == "block" then
    return nil, "a hook (" .. tostring(pre.by) .. ") blocked it: " .. (pre.reason or "no reason given"), true
  end
  return tr
end

return M
