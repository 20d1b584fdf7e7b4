-- raymond.hooks: loading hook files and calling their handlers.
--
-- A hook file is Lua text that returns a table of handlers keyed by event
-- name, e.g. { PreTransition = function(ev) ... end }.  Files load in
-- order: the default hooks compiled in from hooks/, then hooks.lua in the
-- workflow folder.  Each file runs in an environment of its own whose
-- reads fall back to a shared, restricted base (no io, no os.execute, no
-- loading of files or bytecode), so hooks cannot reach around the engine.
--
-- emit(set, name, ev) calls every handler for `name` in load order inside
-- the caller's coroutine.  A handler returns nil (no opinion) or a
-- decision table; see docs/protocol.md.  The first decision that overrides
-- a transition or stops the run wins; later handlers still see the event.

local raymond = require("raymond")
local console = require("raymond.console")

local M = {}

M.events = {
  RunStart = true, Resume = true, PreState = true, Cost = true, PreTransition = true,
  PostTransition = true, AgentFork = true, AgentExit = true, RunEnd = true,
}

local decision_fields = {
  transition = "table", continue = "boolean", stopReason = "string",
  decision = "string", reason = "string", additionalContext = "string",
  -- PreState, for markdown states
  model = "string", effort = "string", prompt = "string", maxBudgetUsd = "number",
}

local function safe_base()
  local base = {
    assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
    pcall = pcall, select = select, tonumber = tonumber, tostring = tostring,
    type = type, xpcall = xpcall, rawequal = rawequal, rawget = rawget,
    rawset = rawset, rawlen = rawlen, setmetatable = setmetatable,
    getmetatable = getmetatable, string = string, table = table, math = math,
    utf8 = utf8, _VERSION = _VERSION,
    os = { time = os.time, clock = os.clock, date = os.date, getenv = os.getenv },
  }
  base.print = function(...)
    local t = table.pack(...)
    for i = 1, t.n do t[i] = tostring(t[i]) end
    raymond.stderr(table.concat(t, "\t") .. "\n")
  end
  base.raymond = {
    version = raymond.version,
    parse_tags = raymond.parse_tags,
    read_file = raymond.read_file,
    write_atomic = raymond.write_atomic,
    now = raymond.now,
    sleep = raymond.sleep,
    json = { encode = raymond.json_encode, decode = raymond.cjson.decode },
    log = function(...) base.print(...) end,
  }
  -- load is allowed for text only, in the caller's environment by default.
  base.load = function(chunk, name, _, env)
    return load(chunk, name, "t", env)
  end
  return base
end

-- Load one hook file.  Returns {name=, handlers=} or nil and a message.
local function load_one(name, source, base)
  local env = setmetatable({}, { __index = base })
  local chunk, err = load(source, "@" .. name, "t", env)
  if not chunk then
    return nil, string.format("hook file %s does not load: %s", name, err)
  end
  local ok, handlers = xpcall(chunk, debug.traceback)
  if not ok then
    return nil, string.format("hook file %s raised while loading: %s", name, handlers)
  end
  if type(handlers) ~= "table" then
    return nil, string.format("hook file %s must return a table of handlers keyed by event name, "
      .. "got %s", name, type(handlers))
  end
  for k, v in pairs(handlers) do
    if not M.events[k] then
      console.warn("hook file %s: unknown event '%s' (ignored)", name, tostring(k))
    elseif type(v) ~= "function" then
      return nil, string.format("hook file %s: handler for %s must be a function, got %s",
        name, k, type(v))
    end
  end
  return { name = name, handlers = handlers }
end

-- files: list of {name=, source=}.  Returns a hook set or nil and a message.
function M.load(files)
  local base = safe_base()
  local set = { files = {} }
  for _, f in ipairs(files) do
    local h, err = load_one(f.name, f.source, base)
    if not h then return nil, err end
    set.files[#set.files + 1] = h
  end
  return set
end

-- The list of files to load for a workflow folder, in order.
function M.discover(scope)
  local files = {}
  local defaults = raymond.embedded("hooks/")
  local names = {}
  for name in pairs(defaults) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    files[#files + 1] = { name = name, source = defaults[name] }
  end
  local path = scope .. "/hooks.lua"
  if raymond.stat(path) == "file" then
    local source, err = raymond.read_file(path)
    if not source then return nil, err end
    files[#files + 1] = { name = path, source = source }
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
-- empty) or nil and a message naming the hook file and line.
function M.emit(set, name, ev)
  local merged = {}
  if not set then return merged end
  ev.hook_event_name = name
  for _, file in ipairs(set.files) do
    local fn = file.handlers[name]
    if fn then
      local ok, d = xpcall(fn, debug.traceback, ev)
      if not ok then
        return nil, string.format("hook %s failed in %s: %s", file.name, name, tostring(d))
      end
      if d ~= nil then
        local cd, err = check_decision(file, fn, name, d)
        if not cd then return nil, err end
        for k, v in pairs(cd) do
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

return M
