-- raymond.engine: the loop that drives the agents of one run.
--
-- Every agent is a coroutine (raymond.go) looping: run the current state
-- (raymond.states: its kind's module returns an outcome), let hooks see
-- the transition, apply it through its tag's handler (raymond.tags), mark
-- the run dirty.  The host saves the run once per loop iteration before
-- starting any new state (see src/lua_host.h), so a state never runs
-- before the transition that led to it is on disk.
--
--   start(opts)   a new run    } return the raymond.run object, or nil
--   resume(opts)  an old one   } and an error table {msg, detail, hint}
--   finish(run, crashed, signo) -> exit status, after the loop drained
--
-- The run ends when its last agent ends (completed), at the first fatal
-- error (failed: every other running state is stopped), when a hook stops
-- it (stopped), or on SIGINT/SIGTERM (interrupted).  Only completed is
-- final; the others can be continued with --resume.

local raymond = require("raymond")
local ask = require("raymond.ask")
local console = require("raymond.console")
local hookapi = require("raymond.hookapi")
local hooks = require("raymond.hooks")
local isolation = require("raymond.isolation")
local join = require("raymond.join")
local leftovers = require("raymond.leftovers")
local launchers = require("raymond.launchers")
local record = require("raymond.record")
local resolve = require("raymond.resolve")
local runstate = require("raymond.runstate")
local states = require("raymond.states")
local tags = require("raymond.tags")
local transition = require("raymond.transition")
local workspace = require("raymond.workspace")
local xworkflow = require("raymond.xworkflow")
local Run = require("raymond.run")

local M = {}

-- Options a run keeps in its state file; given again on --resume they win
-- (but for name, which the command line refuses on --resume: a run keeps
-- the name it was started with).
M.LAUNCH_OPTIONS = { "timeout", "max_parallel", "budget", "model", "effort", "claude",
                     "skip_permissions", "no_wait", "hooks", "no_default_hooks", "allow_cd",
                     "max_agents", "max_repeats", "on_ask", "name", "record", "launcher" }

-- The default cap on live agents (--max-agents): far above any fan-out
-- the benchmarks and examples make (1001 agents), far below the tens of
-- thousands a fork bomb reaches before memory runs out.
M.MAX_AGENTS = 2000

-- The launch options a new run gets when neither the command line nor a
-- config file gives them.
M.DEFAULTS = { timeout = 600, max_parallel = 32, budget = 10 }

-- ------------------------------------------------------------------ agents

local agent_loop

-- Enforce the deadlines of pending asks while other agents run, and
-- with --on-ask prompt ask them on the terminal (raymond.ask).
local function watch_asks(run)
  local function restart(a) raymond.go(agent_loop, run, a) end
  if run.rec.launch.on_ask == "prompt" then ask.prompt(run, restart) end
  ask.watch(run, restart)
end

local function start_workers(run, parent, workers)
  for _, w in ipairs(workers) do
    run.rec.agents[#run.rec.agents + 1] = w
    if not run:emit("AgentFork", w, { parent_id = parent.id }) then return end
  end
  for _, w in ipairs(workers) do raymond.go(agent_loop, run, w) end
end

local function remove_agent(run, agent)
  for i, a in ipairs(run.rec.agents) do
    if a == agent then table.remove(run.rec.agents, i) return end
  end
end

-- A member of a join ended ("ok", with its payload) or failed ("failed",
-- with the error): it is gathered into its group, and when that fires
-- the summary agent starts (raymond.join).  The agent is already out of
-- the run; the run completes if no agent is left.
local function gathered(run, agent, status, value, detail)
  local s, parent, cancelled = join.settle(run, agent, status, value, detail, tags.worker_id)
  if not s then return end
  for _, a in ipairs(cancelled) do isolation.left(run, a, "its join no longer waits for it") end
  start_workers(run, { id = parent }, { s })
end

-- A state of `agent` failed: the run fails, unless the agent is a member
-- of a join, whose failures are data for the summary (raymond.join).
local function failed(run, agent, msg, detail, hint)
  if not agent.join or raymond.stopping() then
    run:fail(agent, msg, detail, hint)
    return
  end
  console.warn("%s: %s; gathered as a failure by its join", run:where(agent), msg)
  isolation.left(run, agent, "it failed, and its join gathered the failure")
  remove_agent(run, agent)
  raymond.mark_dirty()
  gathered(run, agent, "failed", msg, detail)
  if #run.rec.agents == 0 then run:complete() end
end

local function describe(run, out, tr)
  if out.workers then
    local ids = {}
    for i, w in ipairs(out.workers) do ids[i] = w.id .. " (" .. w.state .. ")" end
    return string.format("fork %s; continue at %s%s", table.concat(ids, ", "), tr.next,
      tr.join and string.format("; join at %s (wait %s)", tr.join, tr.wait) or "")
  end
  return (out.ended and "result (agent done)" or transition.describe(tr))
    .. (tr.cost and string.format(" ($%.4f, run total $%.4f)", tr.cost, run.rec.cost or 0) or "")
end

-- Let hooks weigh in on a decided transition, then apply it.  Returns
-- true to go on.
local function take_transition(run, agent, tr)
  local from = agent.state
  local v = run:pre_transition(agent, tr)
  if not v then return false end
  if v.kind == "block" then
    failed(run, agent, "transition blocked by " .. v.why)
    return false
  end
  if v.kind == "error" then
    run:fail(agent, v.msg)
    return false
  end
  if v.kind == "transition" then tr = v.transition end
  -- A join that fired early has cancelled this agent (raymond.join).
  if agent.cancelled then return false end
  if tr.tag == "ask" and (run.rec.launch.on_ask or "reject") == "reject" then
    run:fail(agent, "<ask> in a run that takes no questions (--on-ask reject, the default)", nil,
      "continue with: raymond --resume " .. run.rec.id .. " --on-ask pause")
    return false
  end
  local cap = run.rec.launch.max_agents or M.MAX_AGENTS
  if tr.forks and cap > 0 and #run.rec.agents + #tr.forks > cap then
    run:fail(agent, string.format("<fork> would make %d live agents, more than the cap of %d (--max-agents)",
      #run.rec.agents + #tr.forks, cap), nil,
      string.format("if the workflow means to run that many, continue with: raymond --resume %s --max-agents %d",
        run.rec.id, math.max(2 * cap, #run.rec.agents + #tr.forks)))
    return false
  end
  for k, value in pairs(v.set) do agent[k] = value end
  -- Worktrees (raymond.isolation): the repository is checked before
  -- anything changes; an agent's own is removed or kept as it ends.  A
  -- stop meanwhile (its git killed) leaves the transition unapplied, so
  -- the resume takes the state again.
  local cwds = transition.cwds(agent, tr, run.cd_roots)
  local planned, perr = true, nil
  if cwds then planned, perr = isolation.plan(run, agent, tr, cwds) end
  if not planned then
    if not raymond.stopping() then run:fail(agent, perr) end
    return false
  end
  if tr.tag == "result" and #agent.stack == 0 and not isolation.release(run, agent) then return false end
  local out, aerr = transition.apply(run.rec, agent, tr, run.cd_roots)
  if not out then
    failed(run, agent, aerr)
    return false
  end
  if out.workers and tr.join then join.open(run.rec, agent, tr, out.workers) end
  if run.trace then run.trace:transition(agent, from, tr, not out.ended and agent.state or nil) end
  if run.cassette then run.cassette:transition(agent, from, tr, not out.ended and agent.state or nil) end
  raymond.mark_dirty()
  run:log_transition(agent, from, describe(run, out, tr))
  if out.workers then start_workers(run, agent, out.workers) end
  if not run:emit("PostTransition", agent, { transition = tr, from = from }) then return false end
  if out.asked then
    -- The agent waits for its answer with its loop ended (raymond.ask).
    ask.announce(run, agent)
    watch_asks(run)
    return false
  end
  if out.ended then
    remove_agent(run, agent)
    if agent.id == "main" then run.rec.result = out.payload end
    if agent.join then gathered(run, agent, "ok", out.payload) end
    if not run:emit("AgentExit", agent, { result = out.payload }) then return false end
    if #run.rec.agents == 0 then run:complete() end
    return false
  end
  return true
end

local function agent_steps(run, agent)
  while not raymond.stopping() do
    local scope, serr = run:scope_of(agent)
    if not scope then
      failed(run, agent, serr, nil, "put the workflow back as it was, then: raymond --resume " .. run.rec.id)
      return
    end
    if not scope:has(agent.state) then
      failed(run, agent, "state file is missing", nil, "restore " .. agent.state .. " in " .. scope.path
        .. ", then: raymond --resume " .. run.rec.id)
      return
    end
    local ready, ierr = isolation.prepare(run, agent)
    if not ready then
      if not raymond.stopping() then run:fail(agent, ierr) end
      return
    end
    local out = states.run(run, agent)
    if agent.cancelled then return end
    if out.kind == "error" then
      failed(run, agent, out.msg, out.detail, out.hint)
      return
    end
    if out.kind ~= "transition" then return end
    -- A state that finished is recorded even if the run is stopping.
    if not take_transition(run, agent, out.transition) then return end
  end
end

-- run.looping counts the agents whose loop runs, for the live view.
function agent_loop(run, agent)
  -- A member of a join runs its commands under a canceller, which the
  -- join uses when it fires without waiting for it (raymond.join).
  run.cancellers[coroutine.running()] = join.canceller(agent)
  run.looping = run.looping + 1
  agent_steps(run, agent)
  run.looping = run.looping - 1
end

-- ------------------------------------------------------------------ start

local function absolute(cwd, path)
  return path:sub(1, 1) == "/" and path or (cwd .. "/" .. path)
end

-- The environment children start from: raymond's own, except that a
-- child must not think it runs inside Claude Code.
local function base_environ()
  local env = raymond.environ()
  env.CLAUDECODE = nil
  -- A test's case and kill point are the engine's, not its children's
  -- (raymond.model, raymond.trace).
  env.RAYMOND_TEST_CASE, env.RAYMOND_TEST_KILL_AT = nil, nil
  return env
end

-- The real directories a cd= may lead into: the one the run was started
-- in, the run's worktrees (raymond.isolation), then every --allow-cd,
-- which are kept as real paths.
local function cd_roots(opts, launch, ws, id)
  local here, err = raymond.realpath(opts.cwd)
  if not here then return nil, err end
  local root = raymond.realpath(ws.root)
  local roots = { here, root and isolation.worktrees_root({ root = root }, id) }
  for i, path in ipairs(launch.allow_cd or {}) do
    local real = raymond.stat(absolute(opts.cwd, path)) == "dir" and raymond.realpath(absolute(opts.cwd, path))
    if not real then return nil, string.format("--allow-cd %s: not a directory", path) end
    launch.allow_cd[i], roots[#roots + 1] = real, real
  end
  return roots
end

-- The run object around record `rec`, with its hooks loaded; `roots` are
-- its cd_roots, computed once by the caller.  When the
-- hooks cannot be loaded, the run object comes back as a third value, so
-- a new run can be saved for --resume once the hook is fixed.
local function open_run(opts, ws, rec, scope, roots)
  -- A run keeps one coroutine and one record per agent; collecting when
  -- the heap has grown by 20% rather than doubled keeps a 1000-agent
  -- fan-out near 19 MB instead of 25, for a few percent more collector
  -- work.
  collectgarbage("incremental", 120)
  local run = Run.new({
    ws = ws, rec = rec, scope = scope, cwd = opts.cwd, environ = base_environ(),
    store = runstate.store(workspace.state_path(ws, rec.id)),
  })
  console.quiet = opts.quiet
  run.cd_roots = roots
  if rec.launch.debug then
    local ok, err = raymond.mkdir_p(ws.debug_root)
    if not ok then return nil, err end
    run.record, err = record.open(workspace.debug_path(ws, rec.id))
    if not run.record then return nil, err end
  end
  -- Under raymond test, a scripted model stands in for the children it
  -- replaces, and the run keeps a trace for the runner (raymond.model).
  local case = os.getenv("RAYMOND_TEST_CASE")
  if case then
    local model, merr = require("raymond.model").open(case, rec.revision)
    if not model then return nil, merr end
    run.model, run.trace = model, model.trace
    -- A test's run must outlive a kill of raymond (raymond test --chaos),
    -- which the page cache sees to, not a power cut.
    raymond.set_sync(false)
  end
  -- --record: every model exchange goes to the cassette (raymond.cassette).
  if rec.launch.record then
    local cas, cerr = require("raymond.cassette").attach(run, opts, scope)
    if not cas then return nil, cerr end
    run.cassette = cas
  end
  raymond.set_max_parallel(rec.launch.max_parallel or 0)
  raymond.set_flush(function() run:flush() end)
  if scope.kind == "zip" or scope.kind == "yaml" then
    scope.workdir = workspace.extract_path(ws, rec.id)
    -- Checked again when the copy is made: a link may have been planted
    -- since the run began (by a state, or a model's tool call).
    scope.check_workdir = function() return workspace.refuse_links(ws, rec.id) end
  end
  local files, ferr = hooks.discover(scope, rec.launch)
  if not files then return nil, ferr, run end
  local set, herr = hooks.load(files, hookapi.new(run))
  if not set then return nil, herr, run end
  run.hooks = set
  local lok, lerr = launchers.use(rec.launch)
  if not lok then return nil, lerr end
  -- A YAML state's field that neither raymond nor a hook reads is refused
  -- once the hooks say which fields they read.
  local bad_field = scope.check_fields and scope:check_fields(set.frontmatter)
  if bad_field then return nil, bad_field end
  -- Where each child is recorded before it starts (raymond.leftovers).
  local children = workspace.children_dir(ws, rec.id)
  local ok, derr = raymond.mkdir_p(children)
  if not ok then return nil, derr end
  run.children = children
  return run
end

local function start_agents(run, event_name)
  if not run:decide(event_name, nil, {}) then return end
  raymond.mark_dirty()
  local asking = false
  -- A copy: an agent that ends before its first yield (a hook's route to
  -- <result>, a test's scripted step) leaves run.rec.agents at once, and
  -- the one after it would be skipped.
  for _, a in ipairs(table.move(run.rec.agents, 1, #run.rec.agents, 1, {})) do
    if a.status == "asking" then asking = true else raymond.go(agent_loop, run, a) end
  end
  if asking then watch_asks(run) end
  console.open_view(run)
end

-- The options of a new run, from the command line's.
local function launch_options(opts)
  local launch = { debug = opts.debug ~= false, cwd = opts.cwd }
  for k, v in pairs(M.DEFAULTS) do launch[k] = v end
  for _, k in ipairs(M.LAUNCH_OPTIONS) do
    if opts[k] ~= nil then launch[k] = opts[k] end
  end
  launch.launchers = opts.launchers
  launch.claude = launch.claude or os.getenv("RAYMOND_CLAUDE") or "claude"
  -- States run in other directories, so relative paths are made absolute.
  if launch.claude:find("/", 1, true) then launch.claude = absolute(opts.cwd, launch.claude) end
  for i, path in ipairs(launch.hooks or {}) do launch.hooks[i] = absolute(opts.cwd, path) end
  return launch
end

-- The id of a new run: --workflow-id, checked, or a fresh one.
local function new_id(opts, ws)
  local id = opts.workflow_id
  if not id then return workspace.new_id(ws) end
  local ok, err = workspace.valid_id(id)
  if not ok then return nil, { msg = err } end
  if raymond.stat(workspace.state_path(ws, id)) then
    return nil, { msg = "run " .. id .. " already exists",
      hint = "choose another --workflow-id, or continue it with: raymond --resume " .. id }
  end
  return id
end

-- The first field of a YAML workflow's states that neither raymond nor
-- its hooks read, as an error table; checked before a run is made, so a
-- refused file leaves nothing behind.  Hooks that do not load are left
-- to open_run, which says why.
local function unread_field(scope, launch)
  if not scope.check_fields then return nil end
  local files = hooks.discover(scope, launch)
  local set = files and hooks.load(files, nil, function() end)
  local err = set and scope:check_fields(set.frontmatter)
  return err and { msg = err, hint = "correct the key, or remove it" } or nil
end

-- A new run.  Returns the run, or nil and an error table.
function M.start(opts)
  local scope, entry = resolve.workflow(opts.workflow)
  if not scope then return nil, { msg = entry } end
  local unread = unread_field(scope, launch_options(opts))
  if unread then return nil, unread end
  local lok, lerr = launchers.use(launch_options(opts))
  if not lok then return nil, { msg = lerr, hint = "give a launcher that exists to --launcher (or launcher: in the config)" } end
  local ws = workspace.new(opts.cwd)
  local ok, err, hint = workspace.prepare(ws)
  if not ok then return nil, { msg = err, hint = hint } end
  local id, iderr = new_id(opts, ws)
  if not id then return nil, iderr end
  ok, err, hint = workspace.lock(ws, id)
  if not ok then return nil, { msg = err, hint = hint } end
  local rec = runstate.new(id, scope.path, entry, launch_options(opts))
  rec.sha256 = scope.sha256
  rec.agents[1] = { id = "main", state = entry, stack = {}, cwd = opts.cwd,
                    input = opts.input, vars = {}, data = {} }
  local roots, cerr = cd_roots(opts, rec.launch, ws, id)
  if not roots then return nil, { msg = cerr } end
  local run, rerr, half = open_run(opts, ws, rec, scope, roots)
  if not run then
    if not half then return nil, { msg = rerr } end
    -- Saved as failed, the run can go on once the hook file is fixed.
    rec.status, rec.error = "failed", rerr
    half:save(true)
    workspace.unlock(ws, id)
    return nil, { msg = rerr, hint = "fix the hook, then continue with: raymond --resume " .. id }
  end
  console.progress("raymond: run %s: %s (entry %s)", id, console.rel(scope.path, opts.cwd), entry)
  start_agents(run, "RunStart")
  return run
end

-- The first directory of `rec`'s agents and stack frames that does not
-- exist or lies outside the cd roots, as an error table: a hand-edited
-- state must not move an agent out of the project any more than a
-- model's cd= may.
local function stray_dir(rec, roots, path)
  local bad = "state file " .. path .. " is not a valid raymond state: "
  local left = "the file was left as it is; "
  local dirs = {}
  for i, a in ipairs(rec.agents) do
    local whose = "the directory of agent " .. a.id
    dirs[#dirs + 1] = { a.cwd, string.format("agents[%d].cwd", i), whose }
    for j, f in ipairs(a.stack) do
      if f.cwd then dirs[#dirs + 1] = { f.cwd, string.format("agents[%d].stack[%d].cwd", i, j), whose } end
    end
  end
  -- A join's summary starts in the directory its group keeps (raymond.join).
  local gids = {}
  for gid in pairs(rec.joins or {}) do gids[#gids + 1] = gid end
  table.sort(gids)
  for _, gid in ipairs(gids) do
    dirs[#dirs + 1] = { rec.joins[gid].cwd, "joins." .. gid .. ".cwd",
                        "where the join of agent " .. rec.joins[gid].parent .. " starts its summary" }
  end
  for _, d in ipairs(dirs) do
    -- Only the resolved path says where a directory is: the text of
    -- PROJECT/missing/../../etc starts inside the project.
    local real = raymond.realpath(d[1])
    if not real or raymond.stat(real) ~= "dir" then
      return { msg = string.format("%s%s '%s', %s, %s", bad, d[2], d[1], d[3],
                 real and "is not a directory" or "does not exist"),
               hint = left .. "create the directory again, restore the file from a backup, or start a new run" }
    end
    if not transition.inside(roots, real) then
      return { msg = string.format("%s%s %s is %s", bad, d[2], real, transition.outside(roots, real)),
               hint = left .. "restore it from a backup or start a new run" }
    end
  end
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
  local hint
  ok, err, hint = workspace.lock(ws, id)
  if not ok then return nil, { msg = err, hint = hint } end
  local rec, lerr = runstate.load(path)
  if not rec then
    return nil, { msg = lerr, hint = "the file was left as it is; restore it from a backup or start a new run" }
  end
  if rec.status == "completed" then
    return nil, { msg = "run " .. id .. " already completed", hint = "start a new run instead" }
  end
  -- An answer is applied to the record before anything runs, so the
  -- first save holds it (raymond.ask).
  local settled, aerr = ask.settle(rec, opts, raymond.now())
  if not settled then return nil, aerr end
  -- A raymond killed with the run's children running left them running.
  local stopped, serr0 = leftovers.stop(workspace.children_dir(ws, id), id)
  if not stopped then return nil, serr0 end
  local scope, serr = resolve.reopen(rec.workflow, rec.sha256)
  if not scope then
    return nil, { msg = serr, hint = "put the workflow back as it was, or start a new run" }
  end
  -- Options given now win over the ones the run was launched with.
  for _, k in ipairs(M.LAUNCH_OPTIONS) do
    if opts[k] ~= nil then rec.launch[k] = opts[k] end
  end
  if opts.debug == false then rec.launch.debug = false end
  -- The config's launchers as they are now, over those the run began with.
  for name, def in pairs(opts.launchers or {}) do
    rec.launch.launchers = rec.launch.launchers or {}
    rec.launch.launchers[name] = def
  end
  rec.status, rec.error = "running", nil
  local roots, cerr = cd_roots(opts, rec.launch, ws, id)
  if not roots then return nil, { msg = cerr } end
  isolation.reopen(rec)
  local stray = stray_dir(rec, roots, path)
  if stray then return nil, stray end
  local run, rerr = open_run(opts, ws, rec, scope, roots)
  if not run then return nil, { msg = rerr } end
  stray = xworkflow.check_record(run, roots, path)
  if stray then return nil, stray end
  local lost, lost_usd = run:close_lost()
  if lost > 0 then
    console.progress("raymond: %d Claude turn(s) ended with the last process; counted at the usage they "
      .. "showed: $%.4f", lost, lost_usd)
  end
  local list = {}
  for i, a in ipairs(rec.agents) do list[i] = a.id .. " at " .. a.state end
  console.progress("raymond: resuming run %s: %s", id, table.concat(list, ", "))
  start_agents(run, "Resume")
  return run
end

-- Called after the loop has drained; returns the exit status.  The run's
-- lock file goes with it.
function M.finish(run, crashed, signo)
  if not run then return 1 end
  local code = run:finish(crashed, signo)
  launchers.finish(run)
  if run.cassette then run.cassette:finish(run, code) end
  -- Empty once every child has ended; left with the files of any that
  -- could not be waited for.
  os.remove(workspace.children_dir(run.ws, run.rec.id))
  workspace.unlock(run.ws, run.rec.id)
  return code
end

return M
