-- raymond.runstate: the run record and the files that keep it.
--
-- Every save makes the whole record durable before the next state starts,
-- in one of two files (docs/architecture.md, "State on disk"):
--
--   .raymond/state/<id>.json     the snapshot, replaced atomically (see
--                                src/atomicfile.h): at the first save, at
--                                most RAYMOND_SNAPSHOT_INTERVAL seconds
--                                (default 1) after any later one, and at
--                                the end of the process
--   .raymond/state/<id>.journal  the saves in between, appended with one
--                                fdatasync each (see src/journal.h)
--
-- Each save counts up `revision`, and a load takes whichever of the two
-- holds the higher one, so a crash between writing the snapshot and
-- starting a new journal reads the same record either way.
--
-- The record holds everything a resume needs; docs/protocol.md describes
-- the format.  It is written by raymond.json_encode (exact numbers, sorted
-- keys, see src/json.h) and read by cjson, which decodes every number as a
-- float: whole numbers are turned back into integers on load, and an empty
-- list, written as {}, is read as the empty table it is.

local raymond = require("raymond")
local isolation = require("raymond.isolation")
local join = require("raymond.join")
local states = require("raymond.states")
local tags = require("raymond.tags")
local cjson = raymond.cjson

local M = {}

M.FORMAT = 1

local function iso(t)
  local sec = math.floor(t)
  return os.date("!%Y-%m-%dT%H:%M:%S", sec) .. string.format(".%06dZ", math.floor((t - sec) * 1e6))
end
M.iso = iso

function M.new(id, scope, entry, launch)
  local now = iso(raymond.now())
  return {
    format = M.FORMAT, id = id, workflow = scope, entry = entry, status = "running",
    created_at = now, updated_at = now, launch = launch, steps = 0,
    agents = {}, fork_counters = {}, data = {},
  }
end

-- Returns the text, or nil and a message naming the value JSON cannot hold.
function M.encode(run)
  run.updated_at = iso(raymond.now())
  run.revision = (run.revision or 0) + 1
  return raymond.json_encode(run)
end

-- cjson decodes 3 as 3.0; whole numbers in hook data become integers
-- again.  A number JSON allows but a state cannot hold (1e400 is infinite
-- here, and could never be written back) makes the file invalid.
-- Nesting deeper than the state's writer allows (src/json.c) is refused
-- too: such a file would load but could never be saved again.  The limit
-- is the writer's own, so whatever was saved loads again.
local MAX_DEPTH = raymond.JSON_MAX_DEPTH

-- The integer a decoded number stands for, if it is one the writer can
-- write back exactly (at most 2^53 either way, as src/json.c holds it);
-- a larger whole number stays a float, which reads back as itself.
local MAX_EXACT = 2 ^ 53

local function exact_integer(v)
  if v < -MAX_EXACT or v > MAX_EXACT then return nil end
  return math.tointeger(v)
end

local function integers(t, where, depth)
  depth = depth or 1
  if depth > MAX_DEPTH then error(where .. " is nested too deeply", 0) end
  for k, v in pairs(t) do
    if type(v) == "number" then
      if v ~= v or v == math.huge or v == -math.huge then
        error(string.format("%s.%s is not a finite number", where, tostring(k)), 0)
      end
      t[k] = exact_integer(v) or v
    elseif type(v) == "table" then
      integers(v, where .. "." .. tostring(k), depth + 1)
    end
  end
end

-- Type checks for a decoded record: a file that parses as JSON but is not
-- a state file is reported as precisely as a syntax error.
local function expect(v, ty, where)
  if type(v) ~= ty then
    error(string.format("%s should be a %s, found %s", where, ty, v == cjson.null and "null" or type(v)), 0)
  end
  return v
end

-- A JSON list: a table whose keys are exactly 1..n.  A JSON object with
-- keys "1", "3" would otherwise read as an empty list, silently dropping
-- what it holds.
local function list(v, where)
  expect(v, "table", where)
  local n = 0
  for _ in pairs(v) do n = n + 1 end
  for k in pairs(v) do
    if math.type(k) ~= "integer" or k < 1 or k > n then
      error(string.format("%s should be a list without gaps, found the key %s", where,
        type(k) == "string" and ("'" .. k .. "'") or tostring(k)), 0)
    end
  end
  return v
end

-- A state name as the engine writes it: a file name of the workflow
-- with the extension of a kind raymond runs, never a path.
local function state_name(v, where)
  expect(v, "string", where)
  local why
  if v:find("[/\\]") then
    why = "it contains a path separator"
  elseif v == "" or v == "." or v == ".." or v:find("%c") then
    why = "it is not a file name"
  elseif not states.of(v) then
    why = "it is not a .md or .sh state file"
  end
  if why then error(string.format("%s '%s' is not a state of the workflow: %s", where, v, why), 0) end
  return v
end

-- A directory as the engine writes it: absolute.
local function dir(v, where)
  expect(v, "string", where)
  if v:sub(1, 1) ~= "/" then error(string.format("%s '%s' is not an absolute path", where, v), 0) end
  return v
end

local function opt(v, ty, where)
  if v ~= nil then expect(v, ty, where) end
  return v
end

local function int(v, where)
  expect(v, "number", where)
  local i = math.tointeger(v)
  if not i then error(where .. " should be a whole number", 0) end
  if not exact_integer(v) then error(where .. " is beyond 2^53, more than a state holds", 0) end
  return i
end

-- Where an agent or a frame is when it is in another workflow than the
-- run's (raymond.xworkflow): an absolute path, an archive's SHA-256, and
-- a nesting depth the engine could have made.
local function place(t, where)
  if t.workflow ~= nil then dir(t.workflow, where .. ".workflow") end
  if opt(t.sha256, "string", where .. ".sha256") and not t.sha256:find("^%x+$") then
    error(where .. ".sha256 is not a SHA-256 in hexadecimal", 0)
  end
  if t.depth ~= nil then
    t.depth = int(t.depth, where .. ".depth")
    local max = require("raymond.xworkflow").MAX_DEPTH
    if t.depth < 0 or t.depth > max then
      error(string.format("%s.depth is %d; cross-workflow calls nest 0 to %d deep", where, t.depth, max), 0)
    end
  end
end

-- The pending question of an asking agent (raymond.ask).
local function check_ask(a, w)
  local q = expect(a.ask, "table", w .. ".ask")
  expect(q.id, "string", w .. ".ask.id")
  if q.id ~= string.format("ask_%s_", a.id) .. (q.id:match("(%d+)$") or "x") then
    error(string.format("%s.ask.id '%s' is not an ask id of agent %s (ask_%s_<ns>)", w, q.id, a.id, a.id), 0)
  end
  expect(q.prompt, "string", w .. ".ask.prompt")
  state_name(q.next, w .. ".ask.next")
  if q.timeout_next ~= nil then state_name(q.timeout_next, w .. ".ask.timeout_next") end
  if q.timeout ~= nil then
    local _, why = require("raymond.ask").duration(expect(q.timeout, "string", w .. ".ask.timeout"))
    if why then error(w .. ".ask.timeout " .. why, 0) end
    expect(q.deadline, "number", w .. ".ask.deadline")
  end
  opt(q.deadline, "number", w .. ".ask.deadline")
  expect(q.asked_at, "number", w .. ".ask.asked_at")
end

-- An agent's worktree plan (raymond.isolation).
local function worktree(wt, where)
  expect(wt, "table", where)
  expect(wt.name, "string", where .. ".name")
  local bad = isolation.name_error(wt.name)
  if bad then error(where .. ".name: " .. bad, 0) end
  dir(wt.repo, where .. ".repo")
  dir(wt.from, where .. ".from")
  expect(wt.base, "string", where .. ".base")
  if not wt.base:find("^%x+$") then error(where .. ".base is not a commit id", 0) end
  if wt.path ~= nil then dir(wt.path, where .. ".path") end
  opt(wt.branch, "string", where .. ".branch")
  opt(wt.ready, "boolean", where .. ".ready")
end

-- A launcher's name (raymond.launchers); whether it exists is the
-- launch's to say, as the config may have changed since.
local function launcher_name(v, where)
  expect(v, "string", where)
  if not v:find("^[A-Za-z0-9_.-]+$") then error(string.format("%s '%s' is not a launcher name", where, v), 0) end
  return v
end

-- `ids` maps the ids of the agents checked so far to their index.
local function check_agent(a, i, ids)
  local w = "agents[" .. i .. "]"
  expect(a, "table", w)
  expect(a.id, "string", w .. ".id")
  if a.id == "" or a.id:find("[/\\%c]") then
    error(string.format("%s.id '%s' is not an agent id raymond makes", w, a.id), 0)
  end
  if ids[a.id] then
    error(string.format("%s.id '%s' is also the id of agents[%d]; an agent id is unique", w, a.id, ids[a.id]), 0)
  end
  ids[a.id] = i
  state_name(a.state, w .. ".state")
  dir(a.cwd, w .. ".cwd")
  opt(a.input, "string", w .. ".input")
  opt(a.cost, "number", w .. ".cost")
  opt(a.session, "string", w .. ".session")
  place(a, w)
  a.stack = a.stack and list(a.stack, w .. ".stack") or {}
  for j, f in ipairs(a.stack) do
    local fw = string.format("%s.stack[%d]", w, j)
    expect(f, "table", fw)
    state_name(f.state, fw .. ".state")
    opt(f.session, "string", fw .. ".session")
    if f.cwd ~= nil then dir(f.cwd, fw .. ".cwd") end
    place(f, fw)
    if f.task_folder ~= nil then dir(f.task_folder, fw .. ".task_folder") end
  end
  if a.task_folder ~= nil then dir(a.task_folder, w .. ".task_folder") end
  if a.task_count ~= nil then int(a.task_count, w .. ".task_count") end
  if a.worktree ~= nil then worktree(a.worktree, w .. ".worktree") end
  if a.launcher ~= nil then launcher_name(a.launcher, w .. ".launcher") end
  if a.launch ~= nil then
    local l = expect(a.launch, "table", w .. ".launch")
    launcher_name(l.launcher, w .. ".launch.launcher")
    -- The job name is a folder of .raymond/spool: a plain name, never a path.
    expect(l.job, "string", w .. ".launch.job")
    if not l.job:find("^[A-Za-z0-9_.-]+$") or l.job:find("^%.") then
      error(string.format("%s.launch.job '%s' is not a job name raymond makes", w, l.job), 0)
    end
    state_name(l.state, w .. ".launch.state")
    if l.cancel ~= nil then
      for j, arg in ipairs(list(l.cancel, w .. ".launch.cancel")) do
        expect(arg, "string", string.format("%s.launch.cancel[%d]", w, j))
      end
    end
  end
  a.vars = opt(a.vars, "table", w .. ".vars") or {}
  for k, v in pairs(a.vars) do
    local bad = tags.var_error(k)
    if bad then error(w .. ".vars: " .. bad, 0) end
    expect(v, "string", w .. ".vars." .. k)
  end
  a.data = opt(a.data, "table", w .. ".data") or {}
  opt(a.status, "string", w .. ".status")
  opt(a.ask_id, "string", w .. ".ask_id")
  if a.status == "asking" then
    check_ask(a, w)
  elseif a.ask ~= nil then
    error(string.format("%s.ask is set, but the agent's status is not asking", w), 0)
  end
end

-- Decode and validate; returns the record or nil and a message.
function M.decode(text, path)
  local ok, run = pcall(cjson.decode, text)
  if not ok then
    return nil, string.format("state file %s is corrupt or truncated (%s)", path, tostring(run))
  end
  local vok, err = pcall(function()
    expect(run, "table", "the top level")
    if run.format ~= M.FORMAT then
      error(string.format("format is %s; this raymond reads format %d", tostring(run.format), M.FORMAT), 0)
    end
    expect(run.id, "string", "id")
    expect(run.workflow, "string", "workflow")
    expect(run.status, "string", "status")
    expect(run.launch, "table", "launch")
    opt(run.cost, "number", "cost")
    opt(run.error, "string", "error")
    opt(run.result, "string", "result")
    run.steps = int(run.steps, "steps")
    run.revision = run.revision and int(run.revision, "revision") or 0
    list(run.agents, "agents")
    local ids = {}
    for i, a in ipairs(run.agents) do check_agent(a, i, ids) end
    run.fork_counters = opt(run.fork_counters, "table", "fork_counters") or {}
    for k, v in pairs(run.fork_counters) do run.fork_counters[k] = int(v, "fork_counters." .. k) end
    run.data = opt(run.data, "table", "data") or {}
    for i, r in ipairs(run.resolved_inputs and list(run.resolved_inputs, "resolved_inputs") or {}) do
      expect(r, "table", "resolved_inputs[" .. i .. "]")
    end
    for i, k in ipairs(run.kept_worktrees and list(run.kept_worktrees, "kept_worktrees") or {}) do
      local kw = "kept_worktrees[" .. i .. "]"
      expect(k, "table", kw)
      for _, f in ipairs({ "agent", "path", "branch", "why" }) do expect(k[f], "string", kw .. "." .. f) end
    end
    for k, t in pairs(opt(run.open_turns, "table", "open_turns") or {}) do
      expect(t, "table", "open_turns." .. tostring(k))
      expect(t.usd, "number", "open_turns." .. tostring(k) .. ".usd")
      expect(t.seen, "number", "open_turns." .. tostring(k) .. ".seen")
      if not (t.seen >= 0 and t.seen <= 1000) then
        error("open_turns." .. tostring(k) .. ".seen is not a turn's cost (0 to 1000 dollars)", 0)
      end
    end
    run.format = math.tointeger(run.format)
    integers(run, "state")
    join.check(run, { expect = expect, opt = opt, list = list, int = int, state_name = state_name, dir = dir })
    -- The launch options a resume reads (engine.LAUNCH_OPTIONS), and
    -- list, status and watch show.
    for _, k in ipairs({ "timeout", "budget" }) do opt(run.launch[k], "number", "launch." .. k) end
    for _, k in ipairs({ "model", "effort", "claude", "cwd", "record" }) do opt(run.launch[k], "string", "launch." .. k) end
    if run.launch.launcher ~= nil then launcher_name(run.launch.launcher, "launch.launcher") end
    for name, def in pairs(opt(run.launch.launchers, "table", "launch.launchers") or {}) do
      launcher_name(name, "launch.launchers key")
      expect(def, "table", "launch.launchers." .. name)
    end
    if opt(run.launch.on_ask, "string", "launch.on_ask") and run.launch.on_ask ~= "reject"
        and run.launch.on_ask ~= "pause" and run.launch.on_ask ~= "prompt" then
      error("launch.on_ask '" .. run.launch.on_ask .. "' is not reject, pause or prompt", 0)
    end
    if opt(run.launch.name, "string", "launch.name") then
      local ok, why = require("raymond.text").printable_text(run.launch.name, 200)
      if not ok then error("launch.name " .. why, 0) end
    end
    if run.launch.hooks then
      for i, f in ipairs(list(run.launch.hooks, "launch.hooks")) do expect(f, "string", "launch.hooks[" .. i .. "]") end
    end
    for _, k in ipairs({ "max_parallel", "max_agents", "max_repeats" }) do
      if run.launch[k] then run.launch[k] = int(run.launch[k], "launch." .. k) end
    end
    if run.launch.allow_cd then
      for i, d in ipairs(list(run.launch.allow_cd, "launch.allow_cd")) do dir(d, "launch.allow_cd[" .. i .. "]") end
    end
  end)
  if not vok then
    return nil, string.format("state file %s is not a valid raymond state: %s", path, err)
  end
  return run
end

function M.journal_path(path) return (path:gsub("%.json$", "")) .. ".journal" end

-- The newer of the snapshot and the journal's last record.
function M.load(path)
  local text, err = raymond.read_file(path)
  if not text then return nil, err end
  local run, derr = M.decode(text, path)
  local jpath = M.journal_path(path)
  local jtext, jerr = raymond.journal_read(jpath)
  if jtext == nil then return nil, jerr end
  if not jtext then return run, derr end
  local jrun, jderr = M.decode(jtext, jpath)
  if not jrun then return nil, jderr end
  if run and run.revision > jrun.revision then return run end
  return jrun
end

local Store = {}
Store.__index = Store

local function interval()
  local v = tonumber(os.getenv("RAYMOND_SNAPSHOT_INTERVAL") or "")
  return (v and v >= 0) and v or 1
end

-- Where one run's saves go; see the top of this file.
function M.store(path)
  return setmetatable({ path = path, jpath = M.journal_path(path), interval = interval(),
                        snapped = -math.huge }, Store)
end

function Store:snapshot(text, final)
  local ok, err = raymond.write_atomic(self.path, text)
  if not ok then return nil, err end
  self.snapped = raymond.clock()
  if self.journal then self.journal:close() end
  self.journal = nil
  if final or self.interval == 0 then
    os.remove(self.jpath)
    return true
  end
  -- The snapshot holds all the old journal had, so it may start afresh.
  -- Without a journal (it could not be made) every save replaces the
  -- state file, which is slower but as safe: the state is durable now,
  -- and whatever an old journal still holds has a lower revision.
  self.journal = raymond.journal_open(self.jpath, #text)
  return true
end

-- Make `run` durable.  `final`: the process is about to end, so the
-- snapshot is written and the journal removed; the record goes to the
-- journal first, so a failing snapshot loses nothing.
function Store:save(run, final)
  local text, err = M.encode(run)
  if not text then return nil, "cannot encode the run state: " .. err end
  local due = self.snapped + self.interval - raymond.clock()
  if self.journal and (final or due > 0) then
    local ok, jerr, code = self.journal:append(text)
    if not final then
      -- The snapshot catches up within the interval even if nothing else happens.
      if ok then raymond.mark_dirty(due); return true end
      if code ~= raymond.EFULL then return nil, jerr end
    end
  end
  return self:snapshot(text, final)
end

return M
