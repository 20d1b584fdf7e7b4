-- raymond.hooks: loading hook files and calling their handlers.
--
-- A hook file is Lua text returning a table: handlers keyed by event name
-- (PreTransition = function(ev) ... end; raymond.events lists the events
-- and the decisions each takes), and optionally
--   on_error = "warn"     a failing handler is reported and ignored
--                         (default "stop": the run stops, resumable)
--   frontmatter = { max_visits = "number", ... }
--                         frontmatter fields this file reads, so they are
--                         not reported as unknown
--   tools = { "Bash", "Edit|Write", "mcp__github__*" }
--                         the tools whose events (PreToolUse, PostToolUse,
--                         PostToolUseFailure) this file's handlers want;
--                         or a function(ev) giving them per state (ev.state,
--                         ev.frontmatter, ev.agent, ev.run), nil for none.
--                         Without it a file's tool handlers want every tool;
--                         an empty list wants none.
--
-- Order (docs/hooks.md): the default hooks compiled in from hooks/ (unless
-- --no-default-hooks), then hooks.lua in the workflow folder (for a YAML
-- workflow, the hooks its hooks: key lists), then the folder's hooks/*.lua
-- by name, then each --hooks FILE as given.
--
-- Each file lives in a room of its own: its globals are its own, and the
-- standard libraries and the raymond table it sees are read-only proxies
-- made for that file, so a file that assigns string.format breaks only
-- itself, with an error naming the line.  There is no io, os.execute,
-- os.exit, require, dofile, loadfile, bytecode, coroutine library (a
-- coroutine would run outside the limits) or __gc metamethod (a finalizer
-- runs whenever the collector decides, outside any limit).
--
-- Everything a file's code does runs under the limits of one hook call
-- (src/lua_limit.c: instructions, wall clock, memory): loading the file
-- and reading the table it returns, each handler, and reading the
-- decision it returns.  Tables coming back from hook code are read with
-- next and rawget only, so no metamethod of theirs runs in engine code.

local raymond = require("raymond")
local console = require("raymond.console")
local events = require("raymond.events")
local text = require("raymond.text")

local M = {}

local field_types = { string = true, number = true, boolean = true, table = true, list = true }

local function env_number(name, default)
  return tonumber(os.getenv(name) or "") or default
end

-- Per hook call: RAYMOND_HOOK_INSTRUCTIONS (default 100 million, about a
-- second of Lua) and RAYMOND_HOOK_SECONDS of wall clock (default 600, room
-- for raymond.evaluate and raymond.exec).
M.instructions = env_number("RAYMOND_HOOK_INSTRUCTIONS", 100000000)
M.seconds = env_number("RAYMOND_HOOK_SECONDS", 600)

-- A read-only view of `t` named `name` in messages.
local function readonly(t, name)
  return setmetatable({}, {
    __index = t,
    __newindex = function(_, k)
      error(string.format("%s.%s cannot be changed: the libraries a hook sees are read-only",
        name, tostring(k)), 2)
    end,
    __pairs = function() return next, t, nil end,
    __len = function() return #t end,
    __metatable = false,
  })
end

local function log(...)
  local t = table.pack(...)
  for i = 1, t.n do t[i] = tostring(t[i]) end
  console.say("[hook] " .. table.concat(t, "\t") .. "\n")
end

-- The hook calls whose wait (raymond.exec, evaluate or sleep) a stop of
-- the run cut short, by coroutine.  What such a call decides rests on a
-- result the uninterrupted run would not have seen (a command killed by
-- the stop, a sleep that did not last), so emit() discards it, even when
-- the hook caught the error and went on.
local cut = setmetatable({}, { __mode = "k" })

-- End the hook call running in this coroutine because the run is
-- stopping: its decision will not apply.  `level` as for error().
function M.stopped(level)
  cut[coroutine.running()] = true
  error("the run is stopping", level + 1)
end

-- The hooks' raymond.sleep: a wait that would outlast the call ends it,
-- and a stop of the run ends the hook at once.
local function hook_sleep(s)
  local left = raymond.limit_left()
  if left and s >= left then
    if not raymond.sleep(left) then M.stopped(2) end
    error("hook exceeded its time limit", 2)
  end
  if not raymond.sleep(s) then M.stopped(2) end
  return true
end

local function json_decode(s)
  local ok, v = pcall(raymond.cjson.decode, s)
  if ok then return v end
  return nil, tostring(v)
end

-- The raymond table hooks see; `api` holds the functions that need the
-- run (exec, evaluate: raymond.hookapi).
local function raymond_api(api)
  local r = {
    version = raymond.version, log = log, parse_tags = raymond.parse_tags,
    read_file = raymond.read_file, write_atomic = raymond.write_atomic,
    now = raymond.now, sleep = hook_sleep, hash = raymond.hash, trim = text.trim,
    json = readonly({ encode = raymond.json_encode, decode = json_decode }, "raymond.json"),
  }
  for k, v in pairs(api or {}) do r[k] = v end
  return r
end

-- The environment of one hook file.
local function room(api)
  local env = {}
  local base = {
    assert = assert, error = error, ipairs = ipairs, next = next, pairs = pairs,
    pcall = pcall, select = select, tonumber = tonumber, tostring = tostring,
    type = type, xpcall = xpcall, rawequal = rawequal, rawget = rawget,
    rawset = rawset, rawlen = rawlen, _VERSION = _VERSION, print = log,
    string = readonly(string, "string"), table = readonly(table, "table"),
    math = readonly(math, "math"), utf8 = readonly(utf8, "utf8"),
    os = readonly({ time = os.time, clock = os.clock, date = os.date, getenv = os.getenv }, "os"),
    raymond = readonly(raymond_api(api), "raymond"),
  }
  base.setmetatable = function(t, mt)
    if type(mt) == "table" and rawget(mt, "__gc") ~= nil then
      error("a __gc metamethod is not allowed in a hook: it would run outside the hook's limits", 2)
    end
    return setmetatable(t, mt)
  end
  -- The string metatable is the engine's too; a hook sees none.
  base.getmetatable = function(v)
    if type(v) == "string" then return nil end
    return getmetatable(v)
  end
  -- Text only, in this file's environment unless another is given.
  base.load = function(chunk, name, _, chunk_env)
    return load(chunk, name, "t", chunk_env == nil and env or chunk_env)
  end
  base._G = env
  return setmetatable(env, { __index = base })
end

-- A plain copy of a table hook code returned, read raw (no metamethod
-- runs); nested tables to `depth` levels, other values as they are.  A
-- table with a metatable is refused: its meaning would depend on code
-- the engine will not run.
local function plain(t, depth)
  if type(t) ~= "table" then return t end
  if debug.getmetatable(t) ~= nil then
    error("a hook must return plain tables; this one has a metatable", 3)
  end
  local c = {}
  local k, v = next(t)
  while k ~= nil do
    c[k] = depth > 1 and plain(v, depth - 1) or v
    k, v = next(t, k)
  end
  return c
end

local function plain_copy(t) return plain(t, 2) end

local limited_call = raymond.limited_call

-- Run fn(arg) within the limits of one hook call, and copy a table it
-- returns with plain() within limits too (a second call, made only when
-- there is a table: most handlers return nothing).  Returns ok, the value
-- or a message, and why a limit stopped it.
local function limited(fn, arg)
  local ok, v, why = limited_call(fn, arg, M.instructions, M.seconds)
  if ok and type(v) == "table" then
    ok, v, why = limited_call(plain_copy, v, M.instructions, M.seconds)
  end
  return ok, v, why
end

-- A `tools` pattern: tool names separated by "|", each of letters, digits,
-- "_" and "-", which may end in "*" (a prefix), or "*" alone (every tool).
-- Returns the list of alternatives, or nil and what is wrong.
function M.tool_pattern(p)
  if type(p) ~= "string" then return nil, "is a " .. type(p) .. ", not a string" end
  local alts = {}
  for alt in (p .. "|"):gmatch("([^|]*)|") do
    if alt ~= "*" and not alt:match("^[%a_][%w_%-]*%*?$") then
      return nil, string.format("%q is not a valid tool pattern: give tool names (letters, digits, _ and -) "
        .. "separated by |, a name may end in * (e.g. \"Bash\", \"Edit|Write\", \"mcp__github__*\")", p)
    end
    alts[#alts + 1] = alt
  end
  return alts
end

-- The patterns of a `tools` list, checked: a list of alternatives, or nil
-- and a message.
local function tool_list(name, v)
  if type(v) ~= "table" then
    return nil, string.format("hook file %s: tools must be a list of tool patterns or a function, got %s",
      name, type(v))
  end
  local alts = {}
  for i, p in ipairs(v) do
    local a, err = M.tool_pattern(p)
    if not a then return nil, string.format("hook file %s: tools[%d] %s", name, i, err), p end
    for _, x in ipairs(a) do alts[#alts + 1] = x end
  end
  return alts
end

local function check_fields(name, t, warn)
  local file = { name = name, handlers = {}, on_error = "stop", frontmatter = {} }
  for k, v in pairs(t) do
    if k == "tools" then
      if type(v) == "function" then
        file.tools = v
      else
        local alts, err, bad = tool_list(name, v)
        if not alts then return nil, err, bad end
        file.tools = alts
      end
    elseif k == "on_error" then
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
    elseif not events.by_name[k] then
      warn(name, string.format("hook file %s: unknown event '%s' (ignored)", name, tostring(k)))
    elseif type(v) ~= "function" then
      return nil, string.format("hook file %s: handler for %s must be a function, got %s", name, k, type(v))
    else
      file.handlers[k] = v
    end
  end
  return file
end

-- Load one hook file.  Returns {name=, handlers=, on_error=, frontmatter=}
-- or nil and a message.
local function load_one(name, source, api, warn)
  local chunk, err = load(source, "@" .. name, "t", room(api))
  if not chunk then
    return nil, string.format("hook file %s does not load: %s", name, err)
  end
  local ok, t = limited(chunk, nil)
  if not ok then
    return nil, string.format("hook file %s raised while loading: %s", name, tostring(t))
  end
  if type(t) ~= "table" then
    return nil, string.format("hook file %s must return a table of handlers keyed by event name, "
      .. "got %s", name, type(t))
  end
  local file, err, bad = check_fields(name, t, warn)
  -- A bad value written in the file: the message names its line.
  local at = type(bad) == "string" and bad ~= "" and source:find(bad, 1, true)
  if at then
    local _, lines = source:sub(1, at):gsub("\n", "")
    err = err:gsub("^hook file " .. name:gsub("%p", "%%%0") .. ":", function()
      return string.format("hook file %s:%d:", name, lines + 1)
    end)
  end
  return file, err
end

-- A warning of a loaded file, shown on stderr unless the caller takes it.
local function show_warning(_, msg) console.warn("%s", msg) end

-- files: list of {name=, source=}.  Returns a hook set, or nil, a message
-- and the name of the file that failed.  `warn(file, message)` takes the
-- warnings (default: shown on stderr).
function M.load(files, api, warn)
  local set = { files = {}, frontmatter = {}, handled = {} }
  for _, f in ipairs(files) do
    local h, err = load_one(f.name, f.source, api, warn or show_warning)
    if not h then return nil, err, f.name end
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
  if scope.hooks then
    local own, err = scope:hooks()
    if not own then return nil, err end
    table.move(own, 1, #own, #files + 1, files)
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

-- The event whose handlers are running in each coroutine.  A handler's
-- raymond.evaluate emits PreTurn and Cost from inside it; those handlers
-- run under the limits of the call that is already running (a coroutine
-- has one limit at a time), which still bound all the code involved.
local running = setmetatable({}, { __mode = "k" })

-- The event being handled in this coroutine, or nil.
function M.running()
  return running[coroutine.running()]
end

local function call(fn, ev, nested)
  if nested then
    local ok, d = xpcall(fn, debug.traceback, ev)
    if ok and type(d) == "table" then ok, d = pcall(plain_copy, d) end
    return ok, d
  end
  return limited(fn, ev)
end

local function where(file, fn)
  local info = debug.getinfo(fn, "S")
  return string.format("%s:%d", file.name, info.linedefined)
end

-- Call every handler for `name`.  Returns the merged decision (possibly
-- empty; the first file to set a field wins) or nil and a message naming
-- the hook file and line.  merged.by names, per field, the handler
-- ("file:line") that set it; merged.made lists, per handler whose fields
-- won, { where = "file:line", fields = {...} }, for the decision lines
-- (raymond.run).  Until a field wins, by and made are one shared empty
-- table, read and never written: most emits of a run decide nothing, and
-- they run at every step.
local NONE = setmetatable({}, { __newindex = function() error("hooks: the empty decision is read-only", 2) end })

-- Whether decision field `k` of value `v` replaces `cur` in the merge:
-- first-wins, unless the field is ranked (events.fields) and `v` ranks
-- higher.
local function wins(k, v, cur)
  if cur == nil then return true end
  local f = events.fields[k]
  return f ~= nil and f.rank ~= nil and (f.rank[v] or 0) > (f.rank[cur] or 0)
end

-- `accept(file)`, when given, chooses the files asked (the tool events ask
-- only the files whose `tools` select the tool).
function M.emit(set, name, ev, accept)
  local merged = { by = NONE, made = NONE }
  if not set then return merged end
  ev.hook_event_name = name
  local co = coroutine.running()
  local outer = running[co]
  for _, file in ipairs(set.files) do
    local fn = file.handlers[name]
    if fn and (accept == nil or accept(file)) then
      -- A nested emit (PreTurn inside raymond.evaluate) must not clear the
      -- mark of the call it runs in.
      if outer == nil then cut[co] = nil end
      running[co] = name
      local ok, d, why = call(fn, ev, outer ~= nil)
      running[co] = outer
      local err
      -- A signal cut the call short, or a stop cut one of its waits: the
      -- run is stopping, nobody failed, and no decision of this event
      -- applies (--resume asks again).  Only the outermost call looks:
      -- the mark belongs to it, and a nested emit that took it would let
      -- the outer call's decision apply.
      if outer == nil and (why == "interrupt" or cut[co]) then
        cut[co] = nil
        return nil, string.format("hook %s in %s: cut short because the run is stopping", file.name, name)
      end
      if not ok then
        err = string.format("hook %s failed in %s: %s", file.name, name, tostring(d))
      elseif d ~= nil then
        d, err = events.check(name, d, where(file, fn))
        if d then
          for _, w in ipairs(err) do console.warn("%s", w) end
          err = nil
        end
      end
      if err and file.on_error == "warn" then
        console.warn("%s (ignored: the file says on_error = \"warn\")", err)
      elseif err then
        return nil, err
      elseif d then
        local won, at = {}, where(file, fn)
        for k, v in pairs(d) do
          if not events.companion[k] and wins(k, v, merged[k]) then
            if merged.by == NONE then merged.by, merged.made = {}, {} end
            merged[k], won[k], merged.by[k] = v, v, at
            for _, w in ipairs(events.fields[k] and events.fields[k].with or {}) do
              merged[w], won[w], merged.by[w] = d[w], d[w], at
            end
          end
        end
        if next(won) then merged.made[#merged.made + 1] = { where = at, fields = won } end
      end
    end
  end
  return merged
end

-- Whether tool `name` is one of the alternatives `alts` (M.tool_pattern).
function M.tool_matches(alts, name)
  for _, a in ipairs(alts) do
    if a == "*" or a == name or (a:sub(-1) == "*" and name:sub(1, #a - 1) == a:sub(1, -2)) then
      return true
    end
  end
  return false
end

-- Whether `file` handles any of the events Claude Code asks through the
-- hook bridge.
local function wants_tool_events(file)
  for _, e in ipairs(events.list) do
    if e.tool and file.handlers[e.name] then return true end
  end
  return false
end

-- The tools `file` wants in a state: its `tools` list, what its `tools`
-- function answers for `ev` (called within the limits of a hook call),
-- or every tool.  Nil when the function wants none here; nil and a
-- message when it fails or answers something that is not a list of
-- patterns.
local function file_tools(file, ev)
  if type(file.tools) == "table" then return #file.tools > 0 and file.tools or nil end
  if file.tools == nil then return { "*" } end
  local ok, v = limited(file.tools, ev)
  if not ok then return nil, string.format("hook %s failed in its tools function: %s", file.name, tostring(v)) end
  if v == nil or (type(v) == "table" and next(v) == nil) then return nil end
  if type(v) ~= "table" then
    return nil, string.format("hook %s: its tools function returned a %s; return a list of tool patterns, "
      .. "or nil for none", file.name, type(v))
  end
  return tool_list(file.name, v)
end

-- Which files want which tool events in one state, for the settings a
-- Claude turn gets (raymond.bridge): { [event name] = { {file =, tools =
-- alternatives}, ... } }, or nil when no file wants any (the turn then
-- gets no settings at all).  `ev` is what a `tools` function sees.  A
-- failing `tools` function is an error, or, in a file with on_error =
-- "warn", a warning, and the file then wants every tool: a policy that
-- cannot say what it wants is asked about everything.
function M.tool_plan(set, ev)
  if not set then return nil end
  local plan
  for _, file in ipairs(set.files) do
    if wants_tool_events(file) then
      local tools, err = file_tools(file, ev)
      if err and file.on_error ~= "warn" then return nil, err end
      if err then
        console.warn("%s (every tool is asked: the file says on_error = \"warn\")", err)
        tools = { "*" }
      end
      if tools then
        plan = plan or {}
        for _, e in ipairs(events.list) do
          if e.tool and file.handlers[e.name] then
            plan[e.name] = plan[e.name] or {}
            table.insert(plan[e.name], { file = file, tools = tools })
          end
        end
      end
    end
  end
  return plan
end

-- Names of the files in load order, for --status.
function M.names(files)
  local names = {}
  for i, f in ipairs(files) do names[i] = f.name end
  return names
end

return M
