-- raymond.engine: runs the agents of one run.
--
-- Every agent is a coroutine (raymond.go) looping: run the current state,
-- decide the transition from its output, let hooks see it, apply it, mark
-- the run dirty.  The host writes the state file once per loop iteration
-- before starting any new state (see src/lua_host.h), so a state never
-- runs before the transition that led to it is on disk.
--
-- The run ends when its last agent ends (completed), at the first fatal
-- error (failed: every other running state is stopped), when a hook stops
-- it (stopped), or on SIGINT/SIGTERM (interrupted).  Only completed is
-- final; the others can be continued with --resume.

local raymond = require("raymond")
local console = require("raymond.console")
local hookapi = require("raymond.hookapi")
local hooks = require("raymond.hooks")
local markdown = require("raymond.markdown")
local resolve = require("raymond.resolve")
local runstate = require("raymond.runstate")
local transition = require("raymond.transition")
local workspace = require("raymond.workspace")

local M = {}

local STDERR_LINES = 10

-- Options a run keeps in its state file; given again on --resume they win.
M.LAUNCH_OPTIONS = { "timeout", "max_parallel", "budget", "model", "effort", "claude",
                     "skip_permissions", "no_wait", "hooks", "no_default_hooks" }

-- ---------------------------------------------------------------- context

-- One run per process; `ctx` holds what is not persisted.
local ctx

local function where(agent)
  return string.format("%s (agent %s)",
    console.rel(ctx.run.workflow .. "/" .. agent.state, ctx.cwd), agent.id)
end

local function event(agent, fields)
  local ev = {
    run_id = ctx.run.id,
    workflow = ctx.run.workflow,
    run = { id = ctx.run.id, data = ctx.run.data, cost_usd = ctx.run.cost or 0,
            budget_usd = ctx.run.launch.budget },
  }
  if agent then
    ev.agent_id = agent.id
    ev.state = agent.state
    ev.agent = { id = agent.id, data = agent.data, state = agent.state, cwd = agent.cwd,
                 depth = #agent.stack, cost_usd = agent.cost or 0 }
  end
  for k, v in pairs(fields or {}) do ev[k] = v end
  return ev
end

-- RunEnd, once per process, when hooks can run (in a coroutine).
local function run_end(fields)
  if ctx.run_ended or not ctx.hooks or not coroutine.isyieldable() then return end
  ctx.run_ended = true
  -- The run is over whatever a handler says; a failing one is reported.
  local d, err = hooks.emit(ctx.hooks, "RunEnd", event(nil, fields))
  if not d then console.warn("%s", err) end
end

local function resume_hint()
  return "fix the cause, then continue with: raymond --resume " .. ctx.run.id
end

-- Record the run's first fatal error and stop every running state.
local function fail(agent, msg, detail, hint)
  if ctx.failed then return end
  local text = agent and (where(agent) .. ": " .. msg) or msg
  ctx.failed = text
  ctx.run.status = "failed"
  ctx.run.error = text
  console.error(text, detail, hint or resume_hint())
  raymond.mark_dirty()
  raymond.stop()
  -- Hooks hear of it when we are in a coroutine (not in the flush); what
  -- they return, or a failure of theirs, cannot change the outcome.
  if ctx.hooks and coroutine.isyieldable() then
    local d, err = hooks.emit(ctx.hooks, "Error", event(agent, { error = text }))
    if not d then console.warn("%s", err) end
    run_end({ status = "failed", error = text })
  end
end

-- Returns true once the run is durable; on failure reports it and stops.
local function save(final)
  local ok, err = ctx.store:save(ctx.run, final)
  if ok then return true end
  if not ctx.failed then
    ctx.failed = "cannot save the run state"
    local hint = "the saved state still holds the last completed transition; free the disk or fix "
      .. "permissions, then run: raymond --resume " .. ctx.run.id
    if err:find("cannot encode", 1, true) then
      hint = "a hook stored a value JSON cannot hold in run.data or agent.data; fix the hook, "
        .. "then run: raymond --resume " .. ctx.run.id
    end
    console.error("cannot save the run state: " .. err, nil, hint)
  end
  raymond.stop()
  return false
end

-- The flush the host calls before starting states; it must not raise.
local function flush()
  local ok, err = pcall(save)
  if not ok then fail(nil, "cannot save the run state: " .. tostring(err)) end
end

local function log_transition(agent, from, text)
  console.progress("[%s] %s -> %s", agent.id, from, text)
  if ctx.debug_dir then
    raymond.append_file(ctx.debug_dir .. "/transitions.log",
      string.format("%s [%s] %s -> %s\n", runstate.iso(raymond.now()), agent.id, from, text))
  end
end

-- ------------------------------------------------------------------ hooks

-- Emit `name`; on a hook failure the run fails and nil is returned.
local function emit(name, agent, fields)
  if not hooks.handles(ctx.hooks, name) then return {} end
  local d, err = hooks.emit(ctx.hooks, name, event(agent, fields))
  if not d then
    fail(agent, err, nil, "fix the hook, then continue with: raymond --resume " .. ctx.run.id)
    return nil
  end
  raymond.mark_dirty() -- handlers may have changed run.data or agent.data
  return d
end

-- End the run cleanly before `agent`'s transition applies; --resume runs
-- the state again.
local function stop(agent, why)
  if ctx.stopped or ctx.failed then return end
  ctx.stopped = why
  ctx.run.status = "stopped"
  ctx.run.error = why
  raymond.stderr(string.format("raymond: %s%s\n", agent and ("[" .. agent.id .. "] ") or "", why))
  raymond.mark_dirty()
  raymond.stop()
  run_end({ status = "stopped", error = why })
end

local function stop_by_hook(agent, d)
  stop(agent, string.format("stopped by %s: %s", d.by or "a hook", d.stopReason or "a hook stopped the run"))
end

-- A hook's {tag=, target=, ...} goes through the same checks as a tag.
local function from_hook(t)
  local attrs = {}
  for k, v in pairs(t) do
    if k ~= "tag" and k ~= "target" and k ~= "payload" then attrs[k] = tostring(v) end
  end
  local body = t.tag == "result" and (t.payload or "") or (t.target or "")
  return transition.decide({ { name = t.tag, body = tostring(body), attrs = attrs } }, ctx.scope)
end

-- What a PreState or PostState decision means for the state: returns
-- "go" to run (or decide) as usual, a transition to take instead, or nil
-- and an error table, or nil and nil when the run stopped.  `block`
-- tells whether a block decision is possible here (it is not, before a
-- state has run).
local function state_decision(agent, d, block)
  if not d then return nil, nil end
  if d.continue == false then
    stop_by_hook(agent, d)
    return nil, nil
  end
  if block and d.decision == "block" then
    return nil, { msg = string.format("blocked by %s: %s", d.by, d.reason or "(no reason given)") }
  end
  if d.transition then
    local tr, err = from_hook(d.transition)
    if not tr then
      return nil, { msg = string.format("hook %s returned an invalid transition: %s", d.by, err) }
    end
    return tr
  end
  return "go"
end

-- The PreTransition decision for `tr`, emitted once; markdown states ask
-- for it themselves so that a block can re-prompt the model.
local function pre_transition(agent, tr)
  if not tr.pre then tr.pre = emit("PreTransition", agent, { transition = tr }) end
  return tr.pre
end

-- ------------------------------------------------------------ script states

local function script_env(agent, file)
  local env = {}
  for k, v in pairs(ctx.environ) do env[k] = v end
  for k, v in pairs(agent.vars) do env[k] = v end
  env.RAYMOND_WORKFLOW_ID = ctx.run.id
  env.RAYMOND_AGENT_ID = agent.id
  env.RAYMOND_STATE_DIR = ctx.scope.dir
  env.RAYMOND_STATE_FILE = file
  if agent.input then
    env.RAYMOND_INPUT = agent.input
    env.RAYMOND_RESULT = agent.input
  end
  return env
end

-- The path prefix of the next step's debug files, or nil without --debug.
-- Every script run and every Claude invocation is one step.
local function debug_base(agent)
  ctx.run.steps = ctx.run.steps + 1
  if not ctx.debug_dir then return nil end
  return string.format("%s/%05d_%s_%s", ctx.debug_dir, ctx.run.steps, agent.id, agent.state)
end

-- Run a script state; returns its transition, or nil and an error table
-- {msg=, detail=, hint=}, or nil and nil when the run stopped under it.
local function run_script(agent)
  local pre, perr = state_decision(agent, emit("PreState", agent, { kind = "script" }), false)
  if pre ~= "go" then return pre, perr end
  local file, serr = ctx.scope:script(agent.state)
  if not file then return nil, { msg = "cannot unpack the workflow archive: " .. serr } end
  local spec = {
    argv = { "bash", file }, env = script_env(agent, file), cwd = agent.cwd,
    timeout = ctx.run.launch.timeout, tags = true,
  }
  local base = debug_base(agent)
  if base then spec.stdout_file, spec.stderr_file = base .. ".stdout", base .. ".stderr" end
  local t0 = raymond.now()
  local res = raymond.spawn(spec)
  if base then
    console.write_file(base .. ".meta.json", raymond.json_encode({
      started_at = t0, duration = res.duration, exit = res.exit, signal = res.signal,
      timed_out = res.timed_out, killed = res.killed, input = agent.input,
    }) or "")
  end
  if res.killed and not res.timed_out then return nil, nil end
  local stderr = console.tail(res.stderr_tail, STDERR_LINES)
  if res.spawn_error then
    return nil, { msg = "cannot run the script: " .. res.spawn_error }
  end
  if res.timed_out then
    return nil, { msg = string.format("script produced no output for %g seconds; its process group was killed",
      ctx.run.launch.timeout), detail = stderr,
      hint = "raise --timeout (0 means no limit) or make the script print progress, then: raymond --resume "
        .. ctx.run.id }
  end
  if res.signal then
    return nil, { msg = "script was killed by signal " .. res.signal, detail = stderr }
  end
  if res.exit ~= 0 then
    return nil, { msg = "script exited with status " .. res.exit, detail = stderr }
  end
  if res.tag_error then
    return nil, { msg = res.tag_error }
  end
  local post, serr = state_decision(agent, emit("PostState", agent, {
    kind = "script", output = res.stdout_tail, exit_code = res.exit, duration = res.duration, cost_usd = 0,
  }), true)
  if post ~= "go" then return post, serr end
  local tr, err = transition.decide(res.tags, ctx.scope)
  if not tr then return nil, { msg = err, detail = console.tail(res.stdout_tail, 5) } end
  return tr
end

-- The interface raymond.markdown uses.
local E = {}

local function run_state(agent)
  if not ctx.scope:has(agent.state) then
    return nil, { msg = "state file is missing", hint = "restore " .. agent.state .. " in " .. ctx.scope.path
      .. ", then: raymond --resume " .. ctx.run.id }
  end
  if resolve.kind(agent.state) == "script" then return run_script(agent) end
  return markdown.run(E, agent)
end

-- ------------------------------------------------------------------ agents

local agent_loop

local function start_workers(parent, workers)
  for _, w in ipairs(workers) do
    ctx.run.agents[#ctx.run.agents + 1] = w
    if not emit("AgentFork", w, { parent_id = parent.id }) then return end
  end
  for _, w in ipairs(workers) do raymond.go(agent_loop, w) end
end

local function remove_agent(agent)
  for i, a in ipairs(ctx.run.agents) do
    if a == agent then table.remove(ctx.run.agents, i) return end
  end
end

local function end_run()
  ctx.run.status = "completed"
  raymond.mark_dirty()
  run_end({ status = "completed", result = ctx.run.result })
end

-- Let hooks weigh in on a decided transition, then apply it.  Returns
-- true to go on.
local function take_transition(agent, tr)
  local from = agent.state
  local err
  local d = pre_transition(agent, tr)
  if not d then return false end
  if d.continue == false then
    stop_by_hook(agent, d)
    return false
  end
  if d.decision == "block" then
    fail(agent, string.format("transition blocked by %s: %s", d.by, d.reason or "(no reason given)"))
    return false
  end
  if d.additionalContext then agent.context = d.additionalContext end
  if d.transition then
    tr, err = from_hook(d.transition)
    if not tr then
      fail(agent, string.format("hook %s returned an invalid transition: %s", d.by, err))
      return false
    end
  end
  local out, aerr = transition.apply(ctx.run, agent, tr)
  if not out then
    fail(agent, aerr)
    return false
  end
  raymond.mark_dirty()
  if out.workers then
    local ids = {}
    for i, w in ipairs(out.workers) do ids[i] = w.id .. " (" .. w.state .. ")" end
    log_transition(agent, from, string.format("fork %s; continue at %s", table.concat(ids, ", "), agent.state))
    start_workers(agent, out.workers)
  else
    log_transition(agent, from, (out.ended and "result (agent done)" or transition.describe(tr))
      .. (tr.cost and string.format(" ($%.4f, run total $%.4f)", tr.cost, ctx.run.cost or 0) or ""))
  end
  if not emit("PostTransition", agent, { transition = tr, from = from }) then return false end
  if out.ended then
    remove_agent(agent)
    if agent.id == "main" then ctx.run.result = out.payload end
    if not emit("AgentExit", agent, { result = out.payload }) then return false end
    if #ctx.run.agents == 0 then end_run() end
    return false
  end
  return true
end

function agent_loop(agent)
  while not raymond.stopping() do
    local tr, err = run_state(agent)
    if not tr then
      if err then fail(agent, err.msg, err.detail, err.hint) end
      return
    end
    -- A state that finished is recorded even if the run is stopping.
    if not take_transition(agent, tr) then return end
  end
end

E.emit, E.stop, E.stop_by_hook, E.debug_base = emit, stop, stop_by_hook, debug_base
E.state_decision, E.pre_transition = state_decision, pre_transition

-- ------------------------------------------------------------------ start

local function absolute(cwd, path)
  return path:sub(1, 1) == "/" and path or (cwd .. "/" .. path)
end

local function base_environ()
  local env = raymond.environ()
  env.CLAUDECODE = nil
  return env
end

local function setup(opts, ws, run, scope)
  ctx = {
    ws = ws, run = run, scope = scope, opts = opts, cwd = opts.cwd, t0 = raymond.clock(),
    store = runstate.store(workspace.state_path(ws, run.id)), environ = base_environ(),
  }
  E.ctx = ctx
  console.quiet = opts.quiet
  if run.launch.debug then
    ctx.debug_dir = workspace.debug_dir(ws, run.id)
    local ok, err = raymond.mkdir_p(ctx.debug_dir)
    if not ok then return nil, err end
  end
  raymond.set_max_parallel(run.launch.max_parallel or 0)
  raymond.set_flush(flush)
  if ctx.scope.kind == "zip" then ctx.scope.workdir = ws.root .. "/extract/" .. run.id end
  local files, ferr = hooks.discover(ctx.scope, run.launch)
  if not files then return nil, ferr end
  local set, herr = hooks.load(files, hookapi.new(ctx))
  if not set then return nil, herr end
  ctx.hooks = set
  return true
end

local function start_agents(event_name)
  local d = emit(event_name, nil, {})
  if not d then return end
  if d.continue == false then
    stop_by_hook(nil, d)
    return
  end
  raymond.mark_dirty()
  for _, a in ipairs(ctx.run.agents) do raymond.go(agent_loop, a) end
end

-- A new run.  Returns true, or nil and an error table.
function M.start(opts)
  local scope, entry = resolve.workflow(opts.workflow)
  if not scope then return nil, { msg = entry } end
  local workflow = scope.path
  local ws = workspace.new(opts.cwd)
  local ok, err = raymond.mkdir_p(ws.state_dir)
  if not ok then return nil, { msg = err } end
  local id = opts.workflow_id
  if id then
    ok, err = workspace.valid_id(id)
    if not ok then return nil, { msg = err } end
    if raymond.stat(workspace.state_path(ws, id)) then
      return nil, { msg = "run " .. id .. " already exists",
        hint = "choose another --workflow-id, or continue it with: raymond --resume " .. id }
    end
  else
    id = workspace.new_id(ws)
  end
  ok, err = workspace.lock(ws, id)
  if not ok then return nil, { msg = err } end
  local launch = { timeout = 600, max_parallel = 32, budget = 10, debug = opts.debug ~= false, cwd = opts.cwd }
  for _, k in ipairs(M.LAUNCH_OPTIONS) do
    if opts[k] ~= nil then launch[k] = opts[k] end
  end
  launch.claude = launch.claude or os.getenv("RAYMOND_CLAUDE") or "claude"
  -- States run in other directories, so relative paths are made absolute.
  if launch.claude:find("/", 1, true) then launch.claude = absolute(opts.cwd, launch.claude) end
  for i, path in ipairs(launch.hooks or {}) do launch.hooks[i] = absolute(opts.cwd, path) end
  local run = runstate.new(id, workflow, entry, launch)
  run.sha256 = scope.sha256
  run.agents[1] = { id = "main", state = entry, stack = {}, cwd = opts.cwd,
                    input = opts.input, vars = {}, data = {} }
  ok, err = setup(opts, ws, run, scope)
  if not ok then return nil, { msg = err } end
  console.progress("raymond: run %s: %s (entry %s)", id, console.rel(workflow, opts.cwd), entry)
  start_agents("RunStart")
  return true
end

-- Continue a run from its state file.
function M.resume(opts)
  local ws = workspace.new(opts.cwd)
  local id = opts.resume
  local ok, err = workspace.valid_id(id)
  if not ok then return nil, { msg = err } end
  local path = workspace.state_path(ws, id)
  if not raymond.stat(path) then
    return nil, { msg = "no run " .. id .. " in " .. ws.state_dir, hint = "list runs with: raymond --list" }
  end
  ok, err = workspace.lock(ws, id)
  if not ok then return nil, { msg = err } end
  local run, lerr = runstate.load(path)
  if not run then
    return nil, { msg = lerr, hint = "the file was left as it is; restore it from a backup or start a new run" }
  end
  if run.status == "completed" then
    return nil, { msg = "run " .. id .. " already completed", hint = "start a new run instead" }
  end
  local scope, serr = resolve.reopen(run.workflow, run.sha256)
  if not scope then
    return nil, { msg = serr, hint = "put the workflow back as it was, or start a new run" }
  end
  -- Options given now win over the ones the run was launched with.
  for _, k in ipairs(M.LAUNCH_OPTIONS) do
    if opts[k] ~= nil then run.launch[k] = opts[k] end
  end
  if opts.debug == false then run.launch.debug = false end
  run.status, run.error = "running", nil
  ok, err = setup(opts, ws, run, scope)
  if not ok then return nil, { msg = err } end
  local states = {}
  for i, a in ipairs(run.agents) do states[i] = a.id .. " at " .. a.state end
  console.progress("raymond: resuming run %s: %s", id, table.concat(states, ", "))
  start_agents("Resume")
  return true
end

-- Called after the loop has drained; returns the exit status.
function M.finish(crashed, signo)
  if not ctx then return 1 end
  local run = ctx.run
  local elapsed = raymond.clock() - ctx.t0
  if crashed then
    run.status = "failed"
    run.error = run.error or "internal error"
  elseif signo ~= 0 and run.status == "running" then
    run.status = "interrupted"
  elseif run.status == "running" and not ctx.failed then
    -- No agent is running and none ended the run: the engine lost track.
    run.status = "failed"
    run.error = "internal error: agents remain but none is running"
    console.error(run.error)
  end
  local saved = save(true)
  ctx.scope:close()
  if not saved then return 1 end
  if run.status == "completed" then
    console.progress("raymond: run %s completed: %d steps in %.2fs", run.id, run.steps, elapsed)
    console.result(run.result)
    return 0
  end
  if run.status == "stopped" then
    console.progress("raymond: run %s stopped; continue with: raymond --resume %s", run.id, run.id)
    return 0
  end
  if run.status == "interrupted" then
    raymond.stderr(string.format("raymond: run %s interrupted; continue with: raymond --resume %s\n",
      run.id, run.id))
    return 130
  end
  return 1
end

return M
