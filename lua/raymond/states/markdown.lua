-- raymond.states.markdown: a state that is a prompt for the Claude Code CLI.
--
-- run(run, agent) reads the state's frontmatter policy, renders the
-- prompt, lets hooks adjust it (PreState), invokes the CLI through the
-- executor, counts the cost (Cost), and decides the transition.  See
-- raymond.states for the outcomes it returns.
--
-- Sessions.  Before a launch the planned session goes into agent.turn and
-- the run is marked dirty, so the id is on disk before the CLI starts:
--
--   agent.session and agent.branch   branch:  --resume S --fork-session --session-id NEW
--   agent.session                    resume:  --resume S
--   no session                       fresh:   --session-id NEW
--
-- After a success agent.session is the turn's id.  A resume after a crash
-- launches the same turn again; if the CLI says the fresh id is already in
-- use (the lost attempt got that far) the turn resumes it instead, and if
-- a resumed id does not exist it is started as planned.  A retry after a
-- transient error plans a fresh or branched turn anew, with a new id: the
-- failed attempt may have left a conversation under the old one, and
-- starting it again would only be refused as "already in use".
--
-- Policy.  With allowed_transitions, a missing, extra or disallowed tag is
-- answered by re-prompting the same session with a reminder, up to three
-- invocations; a single transition (a result only with a fixed payload)
-- is used implicitly when no tag is emitted.  Without a policy a missing
-- or doubled tag is an error.
--
-- Agent settings.  The frontmatter's allowed_tools, disallowed_tools,
-- permission_mode, mcp_config, append_system_prompt and max_turns
-- (raymond.policy) go into the invocation, PreState hooks may replace
-- them, and they are checked once more, the MCP file read through the
-- run's scope, before the first launch; a bad one fails the state naming
-- the file or the hook that gave it.  A turn that reaches max_turns fails
-- the state: another attempt would only run out of turns again.
--
-- Launcher.  The frontmatter's launcher:, else the agent's or the run's,
-- says where the CLI runs (raymond.launchers); a launch that fails
-- (launch_error) fails the state naming the launcher, without retries.

local raymond = require("raymond")
local bridge = require("raymond.bridge")
local claude = require("raymond.claude")
local console = require("raymond.console")
local executor = require("raymond.executor")
local launchers = require("raymond.launchers")
local policy = require("raymond.policy")
local states = require("raymond.states")
local template = require("raymond.template")
local text = require("raymond.text")
local transition = require("raymond.transition")

local M = {}

M.ATTEMPTS = 3 -- invocations per state for reminders, and for retries

local function env_number(name, default)
  return tonumber(os.getenv(name) or "") or default
end

local trim = text.trim

-- The state file's policy and body, warning once per file about unknown fields.
local function load(run, agent)
  local name, scope, set = agent.state, run:scope_of(agent), run:hooks_of(agent)
  -- A YAML workflow's state is named by its line in the file.
  local file = scope.label and scope:label(name) or (scope.path .. "/" .. name)
  local source, err = scope:read(name)
  -- A read a signal stopped (a big archive) ends the step like a killed one.
  if not source and raymond.stopping() then return nil, states.STOPPED end
  if not source then return nil, states.error(err) end
  local meta, body = raymond.frontmatter(source, policy.types(set.frontmatter))
  if not meta then return nil, states.error(body, nil, "fix the frontmatter, then: raymond --resume " .. run.rec.id) end
  local pol, warnings = policy.parse(meta, console.rel(file, run.cwd), set.frontmatter)
  if not pol then return nil, states.error(warnings) end
  if not run.warned[file] then
    run.warned[file] = true
    for _, w in ipairs(warnings) do console.warn("%s", w) end
  end
  return pol, body, meta
end

local function decide(run, agent, pol, reply, vars)
  local dir = run:scope_of(agent)
  local function render(s) return template.render(s, vars) end
  if pol.force_implicit then return policy.implicit(pol, dir, render) end
  local tags, perr = raymond.parse_tags(reply)
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
local function wait_until(agent, t, why)
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

-- One launch of the CLI, opened and closed as a turn of the run (its
-- budget share reserved before, its cost counted after, however it ended).
-- What the stream's tool calls are shown as, and told to the gate.
local function on_tool(agent, gate)
  local show = not console.quiet
  if not show and not gate then return nil end
  return function(block)
    if gate then gate:saw_use(block) end
    local line = show and claude.tool_line(block, agent.cwd)
    if line then console.activity(agent.id, line) end
  end
end

-- The inactivity limit a turn ran out of, and where a state's own limit
-- is written (a YAML state's timeout:), for the message.
local function timeout_note(run, agent, inv)
  local own, where
  local scope = run:scope_of(agent)
  if scope.timeout_of then own, where = scope:timeout_of(agent.state) end
  if own and own == inv.timeout then
    return string.format(" (%g seconds, the per-state timeout in %s)", inv.timeout, console.rel(where, run.cwd))
  end
  return string.format(" (%g seconds)", inv.timeout)
end

local function spawn(run, agent, inv, turn, meta)
  local launch = run.rec.launch
  -- The tool policy first: a turn the hooks want to watch never runs
  -- without them.
  local gate, gerr = bridge.open(run, agent, meta)
  if gerr then return { kind = "fatal", msg = gerr, cost = 0 } end
  local info = { id = turn.id, purpose = "state", model = inv.model, max_budget_usd = inv.max_budget_usd,
                 tool_hooks = gate ~= nil }
  local entry = run:open_turn(agent, turn.id, info)
  if not entry then
    if gate then gate:close() end
    return { kind = "stopped", cost = 0 }
  end
  if gate then gate.turn = turn.id end
  local spec = {
    claude = launch.claude or "claude", model = inv.model, effort = inv.effort,
    skip_permissions = launch.skip_permissions, session = turn, max_budget_usd = entry.cap,
    settings = gate and gate.settings,
  }
  for k, v in pairs(inv.agent_settings) do spec[k] = v end
  local argv = claude.argv(spec)
  local reader = claude.reader(not console.quiet and function(t)
    for line in t:gmatch("[^\n]+") do console.activity(agent.id, line) end
  end or nil, function(usd) run:saw(entry, usd) end, on_tool(agent, gate),
    gate and function(block) gate:saw_result(block) end)
  local res, step = executor.run(run, {
    argv = argv, stdin = inv.prompt, cwd = agent.cwd, timeout = inv.timeout, lines = reader.line, lines_max = claude.LINE_MAX,
    name = agent.id .. "_" .. agent.state, keep = { prompt = inv.prompt }, env = gate and gate.env,
    hold = gate and gate.hold, launcher = inv.launcher,
    turn = { agent = agent, state = agent.state, purpose = "state", prompt = inv.prompt, session = turn, gate = gate },
  })
  if gate then gate:close() end
  local out = claude.outcome(res, reader)
  if res.launch_error then
    out = { kind = "fatal", cost = out.cost or 0, msg = string.format("launcher %s: %s", res.launcher, res.launch_error),
            hint = "fix it, then: raymond --resume " .. run.rec.id }
  end
  if res.timed_out and out.kind == "transient" then out.msg = out.msg .. timeout_note(run, agent, inv) end
  if gate and gate.prompt_blocked and out.kind ~= "stopped" then
    out.kind, out.msg = "fatal", gate.prompt_blocked
    out.hint = "change the prompt or the hook, then continue with: raymond --resume " .. run.rec.id
  end
  if step then
    step:finish({
      duration = res.duration, exit = res.exit, signal = res.signal,
      timed_out = res.timed_out, cost_usd = out.cost, session = out.session or turn.id,
      session_mode = turn.mode, outcome = out.kind, message = out.msg,
    })
  end
  info.max_budget_usd = entry.cap
  if not run:close_turn(agent, turn.id, info, out) then return { kind = "stopped", cost = out.cost } end
  out.shared = entry.shared
  return out
end

-- One successful invocation (kind ok, or budget when the turn reached a
-- cap of its own), after retries, session fixes, usage-limit waits and
-- continuations of a turn that used its share of the budget; or nil and
-- an error; or nil, nil.
local function invoke(run, agent, inv, meta)
  local rec = run.rec
  local failures, fixes = 0, 0
  while true do
    local paused = rec.paused_until
    if paused and paused > raymond.now() then
      if not wait_until(agent, paused, "usage limit reached") then return nil, nil end
      rec.paused_until = nil
      raymond.mark_dirty()
    end
    local turn = plan(agent)
    local out = spawn(run, agent, inv, turn, meta)
    if out.kind == "ok" or (out.kind == "budget" and not out.shared) then return out end
    if out.kind == "stopped" then return nil, nil end
    if out.kind == "fatal" then return nil, { msg = out.msg, detail = console.tail(out.stderr, 10), hint = out.hint } end
    if out.kind == "max_turns" then
      -- Another attempt would only take as many turns again.
      return nil, { msg = string.format("%s reached max_turns (%s) before it finished: the model was still "
        .. "at work when its turns ran out", agent.state, tostring(inv.agent_settings.max_turns)),
        hint = string.format("raise max_turns in %s (or split the work into smaller states), then: "
          .. "raymond --resume %s", agent.state, rec.id) }
    end
    if out.kind == "budget" then
      -- The turn used its share of the budget: it goes on in the same
      -- session with a new share, until the budget cannot pay for one.
      console.progress("[%s] %s: the turn used its share of the budget ($%.4f); continuing it", agent.id,
        agent.state, out.cost)
      agent.turn = { mode = "resume", id = turn.id, planned = turn.planned, from = turn.from }
      raymond.mark_dirty()
    elseif out.kind == "session" and fixes < 2 then
      fixes = fixes + 1
      local fix
      if out.reason == "in_use" then
        agent.turn, fix = { mode = "resume", id = turn.id, planned = turn.planned, from = turn.from }, "resuming it"
      elseif turn.mode == "resume" and turn.planned ~= "resume" then
        agent.turn = { mode = turn.planned, id = turn.id, planned = turn.planned, from = turn.from }
        fix = "starting it as planned"
      else
        return nil, { msg = string.format("%s (%s)", out.msg, turn.id),
          hint = "the conversation is gone from Claude Code's store; start a new run" }
      end
      console.progress("[%s] %s: %s (%s); %s", agent.id, agent.state, out.msg, turn.id, fix)
      raymond.mark_dirty()
    elseif out.kind == "limit" then
      local reset = out.reset or (raymond.now() + 3600)
      local resume_at = reset + env_number("RAYMOND_LIMIT_MARGIN", 300)
      if rec.launch.no_wait then
        run:stop(agent, string.format("usage limit reached (%s); it resets at %s UTC: continue after that with "
          .. "raymond --resume %s", out.msg, os.date("!%Y-%m-%d %H:%M", math.floor(reset)), rec.id))
        return nil, nil
      end
      rec.paused_until = resume_at
      raymond.mark_dirty()
    else
      failures = failures + 1
      if failures >= M.ATTEMPTS then
        return nil, { msg = string.format("Claude Code failed %d times: %s", failures, out.msg),
          detail = console.tail(out.stderr, 10) }
      end
      if turn.mode ~= "resume" then
        agent.turn = nil
        raymond.mark_dirty()
      end
      local delay = env_number("RAYMOND_RETRY_DELAY", 2) * 2 ^ (failures - 1)
      console.progress("[%s] %s: %s; retrying in %gs (attempt %d of %d)", agent.id, agent.state,
        out.msg, delay, failures + 1, M.ATTEMPTS)
      if not raymond.sleep(delay) then return nil, nil end
    end
  end
end

-- Setting `key`'s value `v` as the CLI takes it, the MCP configuration
-- read through the run's scope; or nil and why not.
local function setting(run, agent, key, v)
  local val, why = policy.setting(key, v)
  if val ~= nil and key == "mcp_config" then return policy.mcp_text(run:scope_of(agent), val) end
  return val, why
end

-- Whether the hook file of handler `where` ("file:line") says on_error = "warn".
local function lenient(run, agent, where)
  local set = run:hooks_of(agent)
  for _, f in ipairs(set and set.files or {}) do
    if where:sub(1, #f.name + 1) == f.name .. ":" then return f.on_error == "warn" end
  end
  return false
end

-- The agent settings of `inv` as the CLI takes them; or nil and a message
-- naming the state file, or the PreState hook (`by`, field -> "file:line")
-- that set the bad value.  A bad value from a file that says on_error =
-- "warn" is reported and the frontmatter's (`own`) used instead.
local function agent_settings(run, agent, inv, by, own)
  local out = {}
  for _, s in ipairs(policy.SETTINGS) do
    local v, from = inv[s.key], by[s.field]
    local val, why = setting(run, agent, s.key, v)
    if v ~= nil and val == nil and from and lenient(run, agent, from) then
      console.warn("%s: PreState decision field '%s' %s (ignored: the file says on_error = \"warn\")", from,
        s.field, why)
      v, from = own[s.key], nil
      val, why = setting(run, agent, s.key, v)
    end
    if v ~= nil and val == nil and from then
      return nil, string.format("%s: PreState decision field '%s' %s", from, s.field, why)
    elseif v ~= nil and val == nil then
      return nil, string.format("%s: %s %s", console.rel(run:scope_of(agent).path .. "/" .. agent.state, run.cwd),
        s.key, why)
    end
    out[s.key] = val
  end
  return out
end

-- An error table from invoke() or judge() as an outcome; nil: stopped.
local function failed(err)
  if not err then return states.STOPPED end
  return states.error(err.msg, err.detail, err.hint)
end

function M.run(run, agent)
  local rec = run.rec
  local pol, body, meta = load(run, agent)
  if not pol then return body end
  local vars = template.vars(rec, agent)
  pol = policy.rendered(pol, function(s) return template.render(s, vars) end)
  local launch = rec.launch
  local inv = {
    prompt = template.render(body, vars), model = pol.model or launch.model,
    effort = pol.effort or launch.effort, timeout = pol.timeout or launch.timeout,
  }
  local where, lerr = launchers.choose(run, agent, pol.launcher)
  if not where then
    -- The engine names the state's file; a YAML state's line is added.
    local scope = run:scope_of(agent)
    local at = scope.label and (console.rel(scope:label(agent.state), run.cwd) .. ": ") or ""
    return states.error(at .. lerr, nil, "fix it, then: raymond --resume " .. rec.id)
  end
  local own = pol.settings
  if own.append_system_prompt then own.append_system_prompt = template.render(own.append_system_prompt, vars) end
  for k, v in pairs(own) do inv[k] = v end
  if agent.context then inv.prompt = inv.prompt .. "\n\n" .. agent.context end
  local pre = run:decide("PreState", agent, { kind = "markdown", invocation = inv, frontmatter = meta }, inv)
  if not pre then return states.STOPPED end
  if pre.kind == "transition" then return states.transition(pre.transition) end
  if pre.kind == "error" then return states.error(pre.msg) end
  local settings, serr = agent_settings(run, agent, inv, pre.by, own)
  if not settings then return states.error(serr, nil, "correct it, then: raymond --resume " .. rec.id) end
  inv.agent_settings = settings
  -- Set after PreState, whose hooks see the invocation as data.
  inv.launcher = where
  local base_prompt = inv.prompt
  local state_cost = 0 -- every attempt of this state, reminders included
  for attempt = 1, M.ATTEMPTS do
    local out, err = invoke(run, agent, inv, meta)
    if not out then return failed(err) end
    -- The id raymond chose is the conversation's id in every mode (fresh,
    -- resumed, branched), and it is the one already on disk.
    agent.session, agent.branch, agent.turn = agent.turn.id, nil, nil
    raymond.mark_dirty()
    state_cost = state_cost + out.cost
    -- A reply's <print> text shows once, as a script's does, whatever
    -- becomes of the reply; a reply whose tags do not parse prints nothing.
    local parsed, printed = raymond.parse_tags(out.text)
    if parsed then console.print(printed, agent.id) end
    if out.kind == "budget" then
      return states.error(out.msg .. " before it finished", nil, "raise --budget, then: raymond --resume " .. rec.id)
    end
    local tr, why, blocked = M.judge(run, agent, pol, out, vars, meta)
    if tr == nil and why == nil then return failed(blocked) end -- stopped, or an error table
    if tr then
      agent.context = nil
      tr.cost = state_cost
      return states.transition(tr)
    end
    local quoted = console.tail(out.text, 20)
    if not blocked and not policy.has_policy(pol) then
      return states.error(why, quoted,
        "make the prompt end with exactly one tag, or give it allowed_transitions so raymond can remind the model")
    end
    if attempt == M.ATTEMPTS then
      return states.error(string.format("%s, after %d attempts", why, M.ATTEMPTS), quoted)
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

local function blocked_it(v)
  return "a hook (" .. tostring(v.by) .. ") blocked it: " .. (v.reason or "no reason given")
end

-- Weigh one reply: hooks first (PostState may replace the transition or
-- block the reply), then the tags, then PreTransition (which may block).
-- Returns the transition; or nil, why, blocked for a reply to re-prompt;
-- or nil, nil, err-or-nil when the run fails or stops.  The transition
-- carries its PreTransition verdict (tr.pre), which the engine acts on.
function M.judge(run, agent, pol, out, vars, meta)
  local post = run:decide("PostState", agent, { kind = "markdown", output = out.text, cost_usd = out.cost,
    duration = out.duration, exit_code = out.exit, frontmatter = meta })
  if not post then return nil, nil, nil end
  if post.kind == "block" then return nil, blocked_it(post), true end
  if post.kind == "error" then return nil, nil, { msg = post.msg } end
  if post.kind == "transition" then return post.transition end
  local tr, why = decide(run, agent, pol, out.text, vars)
  if not tr then return nil, why, false end
  local pre = run:pre_transition(agent, tr)
  if not pre then return nil, nil, nil end
  if pre.kind == "block" then return nil, blocked_it(pre), true end
  return tr
end

return M
