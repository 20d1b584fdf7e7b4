-- raymond.launchers: where a child runs (docs/cluster.md).
--
--   local l, err = launchers.choose(run, agent, own)   -- by a state
--   local res = launchers.spawn(run, job, req)      -- from raymond.executor
--   launchers.finish(run)                           -- after the last save
--
-- A launcher is a built-in (M.BUILTIN: local, slurm, ssh, kubernetes, one
-- module each under raymond.launchers) or one the config defines under
-- launchers: (raymond.launchers.template), kept in rec.launch.launchers
-- so a resume runs with the definitions the run began with (those the
-- config has then laid over them).  Three kinds:
--
--   local   the command is raymond's child, as always
--   spool   raymond writes a spool folder and starts its follower, which
--           submits the task and copies its output back
--           (raymond.launchers.spool)
--   stream  raymond starts the launcher's run: argv (ssh, kubectl) with
--           the task script on its stdin (raymond.launchers.stream)
--
-- Which one runs a state: the state's own (frontmatter launcher:, a YAML
-- state's launcher:, a script's header block), else the agent's (a
-- <fork launcher=NAME> worker's agent.launcher), else the run's
-- (--launcher, config launcher:, rec.launch.launcher), else local.  The
-- state's own may be a name or a mapping {name:, partition:, cpus:, mem:,
-- time:, gpus:, args: [...]}, whose resources win over the launcher's.
--
-- Crash safety: before a remote launch the agent gets agent.launch = {
-- job = NAME, launcher = L, state = STATE, cancel = ARGV }, saved before the child
-- starts; a resume that finds it for the agent's state launches under the
-- same job name, so a spool launch attaches to the job (or replays its
-- output) instead of running it again, and a stream launch's old remote
-- command is cancelled first.  It is cleared when the launch ends.

local raymond = require("raymond")
local template = require("raymond.launchers.template")

local M = {}

M.BUILTIN_NAMES = { "local", "slurm", "ssh", "kubernetes" }
M.BUILTIN = {}
for _, name in ipairs(M.BUILTIN_NAMES) do
  M.BUILTIN[name] = require("raymond.launchers." .. name)
end

-- The keys of a state's own launcher mapping besides name.
M.RESOURCES = { partition = "text", cpus = "number", mem = "text", time = "text", gpus = "number",
                args = "list" }

-- The launchers the run's config defined (name -> definition), for the
-- checks that have no run at hand (a <fork launcher=> while a reply is
-- decided).  Set when a run opens (M.use).
local configured = {}

-- Take the run's launch options: its configured launchers, and check the
-- run's own launcher.  nil and a message when that is unknown.
function M.use(launch)
  configured = launch.launchers or {}
  if launch.launcher and not M.known(launch.launcher) then
    return nil, string.format("launcher %s: %s", launch.launcher, M.unknown_text())
  end
  return true
end

function M.known(name, defs)
  return M.BUILTIN[name] ~= nil or (defs or configured)[name] ~= nil
end

-- The rest of the message for an unknown launcher.
function M.unknown_text(defs)
  local names = {}
  for n in pairs(defs or configured) do names[#names + 1] = n end
  table.sort(names)
  return string.format("no such launcher (built in: %s; configured: %s)", table.concat(M.BUILTIN_NAMES, ", "),
    #names > 0 and table.concat(names, ", ") or "none, see launchers: in docs/cluster.md")
end

-- nil when `v` is a launcher a state may name (a name, or a mapping of a
-- name and resources), else why not.  Whether the name exists is the
-- caller's to check (the config may define it).
function M.spec_error(v)
  if type(v) == "string" then
    if not v:find(template.NAME) then return string.format("launcher '%s' is not a launcher name", v) end
    return nil
  end
  if type(v) ~= "table" or v[1] ~= nil then
    return "launcher must be a name or a mapping {name: NAME, cpus: N, ...}"
  end
  if type(v.name) ~= "string" then return "launcher needs name: (the launcher's name)" end
  for k, x in pairs(v) do
    local kind = M.RESOURCES[k]
    if k ~= "name" and not kind then
      local keys = {}
      for r in pairs(M.RESOURCES) do keys[#keys + 1] = r end
      table.sort(keys)
      return string.format("launcher has unknown key '%s'; it takes name, %s", tostring(k), table.concat(keys, ", "))
    end
    if kind == "list" and (type(x) ~= "table" or (next(x) ~= nil and x[1] == nil)) then
      return "launcher " .. k .. " must be a list"
    end
    if kind == "number" and not (tonumber(x) and tonumber(x) >= 0) then
      return string.format("launcher %s must be a number, not '%s'", k, tostring(x))
    end
    if kind == "text" and type(x) ~= "string" then return "launcher " .. k .. " must be a single value" end
  end
  if not v.name:find(template.NAME) then return string.format("launcher '%s' is not a launcher name", v.name) end
  return nil
end

-- The name a state's own launcher value names.
function M.name_of(v)
  if type(v) == "table" then return v.name end
  return v
end

-- The launcher of a script state's header: a block of comment lines
-- right after the shebang, between "# ---" lines, read as frontmatter.
-- Returns the launcher value (nil without one), or nil and a message.
function M.script_header(source)
  local rest = source:match("^#![^\n]*\n(.*)$")
  if not rest or not rest:match("^#[ \t]*%-%-%-[ \t]*\n") then return nil end
  local lines, closed = {}, false
  local first = true
  for line in rest:gmatch("([^\n]*)\n") do
    if first then
      first = false
    elseif line:match("^#[ \t]*%-%-%-[ \t]*$") then
      closed = true
      break
    elseif line:match("^#") then
      lines[#lines + 1] = line:gsub("^# ?", "")
    else
      break
    end
  end
  if not closed then return nil end
  local meta, err = raymond.frontmatter("---\n" .. table.concat(lines, "\n") .. "\n---\n", {})
  if not meta then return nil, "the header block: " .. err end
  local v = meta.launcher
  if v == nil then return nil end
  local why = M.spec_error(v)
  if why then return nil, why end
  return v
end

local function copy(t)
  local c = {}
  for k, v in pairs(t or {}) do c[k] = v end
  return c
end

-- Launcher `name` with the resources of `own` (a state's mapping), as
-- the table a launch uses; or nil and a message.  `defs` are the run's
-- configured launchers.
function M.resolve(name, own, defs)
  local def = (defs or configured)[name]
  local b = M.BUILTIN[def and def.base or name]
  if not def and not b then return nil, M.unknown_text(defs) end
  local l = copy(b)
  l.name, l.module = name, b
  for k, v in pairs(def or {}) do l[k] = v end
  -- A template without base: is the kind its commands say.
  if not b then l.kind = l.submit and "spool" or "stream" end
  if type(own) == "table" then
    for k in pairs(M.RESOURCES) do
      if own[k] ~= nil then l[k] = own[k] end
    end
  end
  if l.needs and not l[l.needs] then
    return nil, string.format("a %s launcher needs %s: in the config (launchers: {NAME: {base: %s, %s: ...}}, "
      .. "docs/cluster.md)", l.module.name, l.needs, l.module.name, l.needs)
  end
  return l
end

-- The launcher that runs `agent`'s current state, `own` being the
-- state's own launcher value (or nil).  Returns the launcher table, or
-- nil and "launcher NAME: why".
function M.choose(run, agent, own)
  local name = M.name_of(own) or agent.launcher or run.rec.launch.launcher or "local"
  local l, err = M.resolve(name, own, run.rec.launch.launchers)
  if not l then return nil, string.format("launcher %s: %s", name, err) end
  return l
end

-- A job name for `agent`: ray-<agent id, at most 40 characters>-<8 hex
-- digits>, the id in lower case with any character but letters, digits
-- and '-' made '-': a name Slurm takes, and Kubernetes too, whose pod and
-- Job names are DNS labels (main_w1 is refused there); the hex digits
-- keep two ids made alike apart.
function M.job_name(agent_id)
  local id = agent_id:lower():gsub("[^a-z0-9-]", "-"):sub(1, 40)
  return "ray-" .. id .. "-" .. raymond.uuid():gsub("-", ""):sub(1, 8)
end

-- The environment a remote command gets: what a local child would get,
-- or with the launcher's env: list, only those of raymond's own
-- environment, plus the job's own variables.
local function remote_env(run, job, req, l)
  if not l.env then return req.env end
  local env = {}
  for _, k in ipairs(l.env) do env[k] = run.environ[k] end
  for k, v in pairs(job.env or {}) do env[k] = tostring(v) end
  return env
end

-- The placeholder values of launch `name` of `req` with `l`.
local function values(l, name, req)
  return {
    job = name, cwd = req.cwd, command = template.command(req.argv), host = l.host, image = l.image,
    namespace = l.namespace, partition = l.partition, cpus = l.cpus, mem = l.mem, time = l.time,
    gpus = l.gpus,
  }
end

-- The resource arguments of `l` ({resources}).
local function resources(l)
  if l.module and l.module.resources then return l.module.resources(l) end
  return l.args or {}
end

-- raymond's own environment for the local process of a launch (the
-- follower, ssh, kubectl), with the record of its process group.
local function local_env(run, req)
  local env = copy(run.environ)
  env.RAYMOND_PROCESS_GROUP = req.env.RAYMOND_PROCESS_GROUP
  return env
end

-- Run `argv` once, bounded, its output discarded: a cancel.  While the
-- run stops, the scheduler starts no more children, so it runs
-- synchronously then.
function M.run_once(argv, env)
  if raymond.stopping() then
    local cmd = template.command(argv)
    os.execute("if command -v timeout >/dev/null 2>&1; then timeout 30 " .. cmd .. "; else " .. cmd
      .. "; fi </dev/null >/dev/null 2>&1")
    return
  end
  raymond.spawn({ argv = argv, env = env, timeout = 30, capture = true })
end

-- Spool folders of launches that ended (run.spool_done, by agent id)
-- go once the step's outcome is on disk, so that a crash after a removal
-- never finds the agent at the state whose folder is gone: those of the
-- agent's last launch and of ended agents, as they are when a launch
-- starts, go when it has started its child (the scheduler saved the run
-- first); all of them when the run ends.
local function sweepable(run, agent_id, all)
  local done, gone = run.spool_done, {}
  if not done or next(done) == nil then return gone end
  local live = {}
  for _, a in ipairs(run.rec.agents) do live[a.id] = true end
  for id, dir in pairs(done) do
    if all or id == agent_id or not live[id] then gone[id] = dir end
  end
  return gone
end

local function sweep(run, gone)
  for id, dir in pairs(gone) do
    raymond.rmtree(dir)
    if run.spool_done[id] == dir then run.spool_done[id] = nil end
  end
end

function M.spool_root(run) return require("raymond.workspace").spool_path(run.ws, run.rec.id) end

-- Start the child of `job` (raymond.executor's request `req`) where its
-- launcher says: job.launcher, from M.choose; none is local.  Returns
-- raymond.spawn's result, with `launcher` and, when the launch itself
-- failed, `launch_error`.
function M.spawn(run, job, req)
  local l = job.launcher
  local who = job.turn or job.script
  if not l or l.kind == "local" or not who then return raymond.spawn(req) end
  local agent = who.agent
  local gone = sweepable(run, agent.id)
  -- The same state's launch, cut short by a killed raymond, goes on
  -- under its name if its kind can attach; any other is cancelled.
  local old, name = agent.launch, nil
  if old and old.state == who.state and old.launcher == l.name and l.kind == "spool" then name = old.job end
  if old and not name and old.cancel then M.run_once(old.cancel, local_env(run, req)) end
  local resumed = name ~= nil
  name = name or M.job_name(agent.id)
  local vals, args = values(l, name, req), resources(l)
  local launch = { job = name, launcher = l.name, state = who.state,
                   cancel = l.cancel and template.expand(l.cancel, vals, args) }
  agent.launch = launch
  -- The job's name is on disk before the child starts: the scheduler
  -- saves a dirty run before it starts the next child.
  raymond.mark_dirty()
  local kind = require("raymond.launchers." .. l.kind)
  local res, dir = kind.run({
    run = run, job = job, req = req, l = l, name = name, resumed = resumed, values = vals, resources = args,
    cancel = launch.cancel,
    env = remote_env(run, job, req, l), local_env = local_env(run, req),
  })
  res.launcher = l.name
  agent.launch = nil
  raymond.mark_dirty()
  -- Only a spool launch that could not write its folder started no child.
  if l.kind ~= "spool" or dir then sweep(run, gone) end
  if dir then
    run.spool_done = run.spool_done or {}
    run.spool_done[agent.id] = dir
  end
  return res
end

-- After the run's last save: the spool folders of ended launches go, and
-- all of the run's once it completed.
function M.finish(run)
  local gone = sweepable(run, nil, true)
  if next(gone) then
    raymond.flush()
    sweep(run, gone)
  end
  if run.rec.status == "completed" then raymond.rmtree(M.spool_root(run)) end
end

return M
