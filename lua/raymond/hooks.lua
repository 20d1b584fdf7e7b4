-- raymond.hooks: loading hook files and calling their handlers.
--
-- A hook file is Lua text returning a table: handlers keyed by event name
-- (PreTransition = function(ev) ... end), and optionally
--   on_error = "warn"     a failing handler is reported and ignored
--                         (default "stop": the run stops, resumable)
--   frontmatter = { max_visits = "number", ... }
--                         frontmatter fields this file reads, so they are
--                         not reported as unknown
--
-- Order (docs/hooks.md): the default hooks compiled in from hooks/ (unless
-- --no-default-hooks), then hooks.lua in the workflow folder, then the
-- folder's hooks/*.lua by name, then each --hooks FILE as given.
--
-- Each file runs in an environment of its own whose reads fall back to a
-- shared, restricted base: no io, os.execute, os.exit, io.popen, require,
-- dofile, loadfile or bytecode, and no coroutine library (a coroutine made
-- inside a hook would run outside its limits).  Handlers run inside the calling agent's
-- coroutine, each call bounded by an instruction budget and a wall-clock
-- limit (src/lua_limit.c); the whole Lua state has a memory cap.

local raymond = require("raymond")
local console = require("raymond.console")

local M = {}

M.events = {
  RunStart = true, Resume = true, PreState = true, PostState = true, Cost = true,
  PreTransition = true, PostTransition = true, AgentFork = true, AgentExit = true,
  Error = true, RunEnd = true,
}

local decision_fields = {
  transition = "table", continue = "boolean", stopReason = "string",
  decision = "string", reason = "string", additionalContext = "string",
  -- PreState, for markdown states
  model = "string", effort = "string", prompt = "string", maxBudgetUsd = "number",
}

local field_types = { string = true, number = true, boolean = true, table = true, list = true }

local function env_number(name, default)
  return tonumber(os.getenv(name) or "") or default
end

-- Per hook call: RAYMOND_HOOK_INSTRUCTIONS (default 100 million, about a
-- second of Lua) and RAYMOND_HOOK_SECONDS of wall clock (default 600, room
-- for raymond.evaluate and raymond.exec).
M.instructions = env_number("RAYMOND_HOOK_INSTRUCTIONS", 100000000)
M.seconds = env_number("RAYMOND_HOOK_SECONDS", 600)

-- The base every hook file's environment reads from.  `api` holds the
-- functions the engine supplies (exec, evaluate).
local function safe_base(api)
  local base = {
    assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
    pcall = pcall, select = select, tonumber = tonumber, tostring = tostring,
    type = type, xpcall = xpcall, rawequal = rawequal, rawget = rawget,
    rawset = rawset, rawlen = rawlen, setmetatable = setmetatable,
    getmetatable = getmetatable, string = string, table = table, math = math,
    utf8 = utf8, _VERSION = _VERSION,
    os = { time = os.time, clock = os.clock, date = os.date, getenv = os.getenv },
  }
  local function log(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    raymond.stderr("[hook] " .. table.concat(t, "\t") .. "\n")
  end
  base.print = log
  base.raymond = {
    version = raymond.version,
    log = log,
    parse_tags = raymond.parse_tags,
    read_file = raymond.read_file,
    write_atomic = raymond.write_atomic,
    now = raymond.now,
    sleep = function(s)
      local left = raymond.limit_left()
      if left and s >= left then
        -- The wait would outlast the call: wait out the time, then stop.
        raymond.sleep(left)
        error("hook exceeded its time limit", 2)
      end
      return raymond.sleep(s)
    end,
    hash = raymond.hash,
    json = {
      encode = raymond.json_encode,
      decode = function(s)
        local ok, v = pcall(raymond.cjson.decode, s)
        if ok then return v end
        return nil, tostring(v)
      end,
    },
  }
  for k, v in pairs(api or {}) do base.raymond[k] = v end
  -- load is allowed for text only, in the caller's environment by default.
  base.load = function(chunk, name, _, env)
    return load(chunk, name, "t", env)
  end
  return base
end

-- Load one hook file.  Returns {name=, handlers=, on_error=, frontmatter=}
-- or nil and a message.
local function load_one(name, source, base)
  local env = setmetatable({}, { __index = base })
  local chunk, err = load(source, "@" .. name, "t", env)
  if not chunk then
    return nil, string.format("hook file %s does not load: %s", name, err)
  end
  local ok, t = xpcall(chunk, debug.traceback)
  if not ok then
    return nil, string.format("hook file %s raised while loading: %s", name, t)
  end
  if type(t) ~= "table" then
    return nil, string.format("hook file %s must return a table of handlers keyed by event name, "
      .. "got %s", name, type(t))
  end
  local file = { name = name, handlers = {}, on_error = "stop", frontmatter = {} }
  for k, v in pairs(t) do
    if k == "on_error" then
      if v ~= "stop" and v ~= "warn" then
        return nil, string.format("hook file %s: on_error must be \"stop\" or \"warn\", got %s", name, tostring(v))
      end
      file.on_error = v
    elseif k == "frontmatter" then
      if type(v) ~= "table" then
        return nil, string.format("hook file %s: frontmatter must be a table of field = type", name)
      end
      for field, ty in pairs(v) do
        if not field_types[ty] then
          return nil, string.format("hook file %s: frontmatter field %s has unknown type %s", name,
            tostring(field), tostring(ty))
        end
        file.frontmatter[field] = ty
      end
    elseif not M.events[k] then
      console.warn("hook file %s: unknown event '%s' (ignored)", name, tostring(k))
    elseif type(v) ~= "function" then
      return nil, string.format("hook file %s: handler for %s must be a function, got %s", name, k, type(v))
    else
      file.handlers[k] = v
    end
  end
  return file
end

-- files: list of {name=, source=}.  Returns a hook set or nil and a message.
function M.load(files, api)
  local base = safe_base(api)
  local set = { files = {}, frontmatter = {}, handled = {} }
  for _, f in ipairs(files) do
    local h, err = load_one(f.name, f.source, base)
    if not h then return nil, err end
    set.files[#set.files + 1] = h
    for field, ty in pairs(h.frontmatter) do set.frontmatter[field] = ty end
    for name in pairs(h.handlers) do set.handled[name] = true end
  end
  return set
end

-- Whether any file handles `name` (so callers can skip building events).
function M.handles(set, name)
  return set ~= nil and set.handled[name] == true
end

local function read(files, name, path)
  local source, err = raymond.read_file(path)
  if not source then return nil, err end
  files[#files + 1] = { name = name, source = source }
  return true
end

-- The files to load, in order, from a scope (raymond.scope) and the
-- options no_default_hooks and hooks (paths).  An archive can hold only
-- hooks.lua: its layout has no room for a hooks/ folder.
function M.discover(scope, opts)
  opts = opts or {}
  local files = {}
  if not opts.no_default_hooks then
    local defaults = raymond.embedded("hooks/")
    local names = {}
    for name in pairs(defaults) do names[#names + 1] = name end
    table.sort(names)
    for _, name in ipairs(names) do files[#files + 1] = { name = name, source = defaults[name] } end
  end
  if scope:has("hooks.lua") then
    local source, err = scope:read("hooks.lua")
    if not source then return nil, err end
    files[#files + 1] = { name = scope.path .. "/hooks.lua", source = source }
  end
  local folder = scope.path .. "/hooks"
  if scope.kind == "dir" and raymond.stat(folder) == "dir" then
    for _, n in ipairs(raymond.listdir(folder) or {}) do
      if n:match("%.lua$") then
        local ok, err = read(files, folder .. "/" .. n, folder .. "/" .. n)
        if not ok then return nil, err end
      end
    end
  end
  for _, path in ipairs(opts.hooks or {}) do
    local ok, err = read(files, path, path)
    if not ok then return nil, "cannot load --hooks file: " .. err end
  end
  return files
end

local function where(file, fn)
  local info = debug.getinfo(fn, "S")
  return string.format("%s:%d", file.name, info.linedefined)
end

local function check_decision(file, fn, event, d)
  if type(d) ~= "table" then
    return nil, string.format("%s: %s handler returned a %s; return nil or a decision table",
      where(file, fn), event, type(d))
  end
  for k, v in pairs(d) do
    local want = decision_fields[k]
    if not want then
      console.warn("%s: %s decision has unknown field '%s' (ignored)", where(file, fn), event, tostring(k))
    elseif type(v) ~= want then
      return nil, string.format("%s: %s decision field '%s' should be a %s, got %s",
        where(file, fn), event, k, want, type(v))
    end
  end
  if d.decision ~= nil and d.decision ~= "block" then
    return nil, string.format("%s: %s decision field 'decision' must be \"block\", got \"%s\"",
      where(file, fn), event, d.decision)
  end
  if d.transition and type(d.transition.tag) ~= "string" then
    return nil, string.format("%s: %s decision 'transition' needs a string 'tag'", where(file, fn), event)
  end
  return d
end

-- Call every handler for `name`.  Returns the merged decision (possibly
-- empty; the first file to set a field wins) or nil and a message naming
-- the hook file and line.
function M.emit(set, name, ev)
  local merged = {}
  if not set then return merged end
  ev.hook_event_name = name
  for _, file in ipairs(set.files) do
    local fn = file.handlers[name]
    if fn then
      -- Within the limits (src/lua_limit.c): ok and the decision, or false
      -- and a message with a traceback.
      local ok, d = raymond.limited_call(fn, ev, M.instructions, M.seconds)
      local err
      if not ok then
        err = string.format("hook %s failed in %s: %s", file.name, name, tostring(d))
      elseif d ~= nil then
        d, err = check_decision(file, fn, name, d)
      end
      if err and file.on_error == "warn" then
        console.warn("%s (ignored: the file says on_error = \"warn\")", err)
      elseif err then
        return nil, err
      elseif d then
        for k, v in pairs(d) do
          if merged[k] == nil then
            merged[k] = v
            if k == "transition" or k == "continue" or k == "decision" then merged.by = where(file, fn) end
          end
        end
      end
    end
  end
  return merged
end

-- Names of the files in load order, for --status.
function M.names(files)
  local names = {}
  for i, f in ipairs(files) do names[i] = f.name end
  return names
end

return M
