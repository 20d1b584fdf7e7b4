-- raymond.testfile: a workflow's test file (`tests/NAME.test.yaml`),
-- read and checked for `raymond test`.
--
--   local tf, err = testfile.load(path, cwd)
--   -- tf.workflow   the workflow's static model (raymond.analyse); the
--   --               caller closes it (analyse.close)
--   -- tf.cases      { name =, line =, input =, start =, args = {...},
--   --                 env = {}, files = {}, answers = {}, timeout =,
--   --                 case = what the child reads (raymond.model),
--   --                 expect = {...} }, in the order written
--   -- err           "FILE:LINE: what is wrong"
--
-- The file is data, checked key by key against the schema below, so a
-- misspelt key, a wrong type, a state the workflow does not have, or an
-- expectation that could never hold is an error naming its line before
-- anything runs.  What must be computed is computed by the workflow's
-- own hooks and scripts, which the case runs for real; docs/testing.md
-- says why the file is YAML and not Lua.

local raymond = require("raymond")
local analyse = require("raymond.analyse")
local model = require("raymond.model")
local resolve = require("raymond.resolve")
local text = require("raymond.text")

local M = {}

-- The largest test file read, in bytes.
M.MAX_BYTES = 4 * 1024 * 1024

-- The per-case limit, in seconds, when a case gives none.
M.DEFAULT_TIMEOUT = 60

-- The run options a case may give, as `raymond run` spells them (with _
-- for -), and the kind of value each takes.
M.OPTIONS = {
  budget = "number", timeout = "number", max_parallel = "integer", max_agents = "integer", model = "string",
  effort = "string", no_default_hooks = "bool", loop_limit = "integer", allow_cd = "string", no_wait = "bool",
  no_lint = "bool", dangerously_skip_permissions = "bool", hooks = "string", on_ask = "string",
}

M.STATUSES = { completed = true, failed = true, stopped = true, asking = true }

-- ------------------------------------------------------------- the checker

-- A check raises { line =, msg = }; load() turns it into "FILE:LINE: msg".
local function fail(line, fmt, ...)
  error({ line = line, msg = string.format(fmt, ...) }, 0)
end

local function is_list(t, lines)
  local k = next(lines[t] or {})
  return k == nil and t[1] ~= nil or math.type(k) == "integer"
end

local function what(v, lines)
  if v == nil then return "nothing" end
  if type(v) ~= "table" then return string.format("%q", v) end
  return is_list(v, lines) and "a list" or "a mapping"
end

local C = {}
C.__index = C

function C:line_of(t, k) return (self.lines[t] or {})[k] or self.at end

function C:string(v, line, name)
  if type(v) ~= "string" then fail(line, "%s must be text, not %s", name, what(v, self.lines)) end
  return v
end

function C:number(v, line, name)
  local n = type(v) == "string" and tonumber(v)
  if not n or n ~= n or n < 0 or n > 1e9 then fail(line, "%s must be a number from 0 up, not %s", name, what(v, self.lines)) end
  return n
end

function C:integer(v, line, name)
  local n = self:number(v, line, name)
  if math.type(n) ~= "integer" and n ~= math.floor(n) then fail(line, "%s must be a whole number, not %s", name, v) end
  return math.tointeger(n)
end

function C:bool(v, line, name)
  local w = type(v) == "string" and v:lower()
  if w == "true" or w == "yes" or w == "on" then return true end
  if w == "false" or w == "no" or w == "off" then return false end
  fail(line, "%s must be true or false, not %s", name, what(v, self.lines))
end

-- An empty [] reads as an empty table, as {} does: both are an empty list.
function C:list(v, line, name)
  if type(v) ~= "table" or (next(v) ~= nil and not is_list(v, self.lines)) then
    fail(line, "%s must be a list, not %s", name, what(v, self.lines))
  end
  return v
end

-- A mapping whose keys must be among `known` (key -> true); returns its
-- keys in the order written.
function C:map(v, line, name, known)
  if type(v) ~= "table" or (next(v) ~= nil and is_list(v, self.lines)) then
    fail(line, "%s must be a mapping of keys, not %s", name, what(v, self.lines))
  end
  local keys = text.keys_by_line(v, self.lines)
  if known then
    for _, k in ipairs(keys) do
      if not known[k] then
        local names = {}
        for n in pairs(known) do names[#names + 1] = n end
        table.sort(names)
        local best, bd = nil, 3
        for _, n in ipairs(names) do
          local d = text.distance(k, n)
          if d < bd then best, bd = n, d end
        end
        fail(self:line_of(v, k), "%s has no key '%s'%s; it takes %s", name, k,
          best and (" (did you mean " .. best .. "?)") or "", table.concat(names, ", "))
      end
    end
  end
  return keys
end

-- Any YAML value as JSON would hold it (for data: and vars:): scalars are
-- compared as text, so they stay text.
function C:plain(v)
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = self:plain(x) end
  return out
end

local function set(...)
  local s = {}
  for _, k in ipairs({ ... }) do s[k] = true end
  return s
end

-- ------------------------------------------------------------------ states

-- The state file `name` stands for in the workflow, or an error at `line`.
function C:state(name, line, kind)
  local file, err = resolve.target(self.wf.lookup, name)
  if not file or not self.wf.by_name[file] then
    fail(line, "the workflow has no state %s (%s)", name, err or "not found")
  end
  if kind and resolve.kind(file) ~= kind then
    fail(line, "%s is a %s state, not a %s state", file, resolve.kind(file), kind)
  end
  return file
end

-- ------------------------------------------------------------------ the model

local WHEN = set("agent", "index", "vars", "prompt", "model")
local EVAL_WHEN = set("agent", "index", "vars", "prompt", "model", "state", "visit")

function C:when(v, line, evaluate)
  local out = {}
  for _, k in ipairs(self:map(v, line, "when", evaluate and EVAL_WHEN or WHEN)) do
    local l = self:line_of(v, k)
    if k == "index" or k == "visit" then out[k] = self:integer(v[k], l, "when." .. k)
    elseif k == "state" then out.state = self:state(self:string(v[k], l, k), l)
    elseif k == "vars" then
      out.vars = {}
      for _, n in ipairs(self:map(v[k], l, "when.vars")) do out.vars[n] = self:string(v[k][n], self:line_of(v[k], n), n) end
    else out[k] = self:string(v[k], l, "when." .. k) end
  end
  return out
end

local TOOL = set("tool", "input", "result", "error")

function C:tool(v, line)
  self:map(v, line, "a tool call", TOOL)
  if v.tool == nil then fail(line, "a tool call needs tool: (the tool's name, such as Bash)") end
  local call = { tool = self:string(v.tool, self:line_of(v, "tool"), "tool") }
  if v.input ~= nil then
    self:map(v.input, self:line_of(v, "input"), "input")
    call.input = self:plain(v.input)
  end
  if v.result ~= nil then call.result = self:string(v.result, self:line_of(v, "result"), "result") end
  if v.error ~= nil then call.error = self:bool(v.error, self:line_of(v, "error"), "error") end
  return call
end

local TURN = set("reply", "error", "errors", "cost", "tokens", "tools", "delay", "when")
local EVALUATE = set("answer", "cost", "when")
local TOKENS = set("input", "output")
local ERROR_NAMES = "overloaded, usage_limit, crash, auth"

function C:error_name(v, line)
  self:string(v, line, "error")
  if not model.ERRORS[v] then fail(line, "error '%s' is not one raymond test can script; it knows %s", v, ERROR_NAMES) end
  return v
end

function C:turn(v, line, evaluate)
  if type(v) == "string" then return { reply = { v } } end
  local known = TURN
  if evaluate then known = EVALUATE end
  local e = {}
  for _, k in ipairs(self:map(v, line, evaluate and "an evaluate answer" or "a turn", known)) do
    local x, l = v[k], self:line_of(v, k)
    if k == "reply" or k == "answer" then
      if type(x) == "table" then
        e.reply = {}
        for i, r in ipairs(self:list(x, l, k)) do e.reply[i] = self:string(r, self:line_of(x, i), k) end
      else
        e.reply = { self:string(x, l, k) }
      end
    elseif k == "error" then e.errors = { self:error_name(x, l) }
    elseif k == "errors" then
      e.errors = {}
      for i, r in ipairs(self:list(x, l, k)) do e.errors[i] = self:error_name(r, self:line_of(x, i)) end
    elseif k == "cost" or k == "delay" then e[k] = self:number(x, l, k)
    elseif k == "tokens" then
      e.tokens = {}
      for _, n in ipairs(self:map(x, l, "tokens", TOKENS)) do
        e.tokens[n] = self:integer(x[n], self:line_of(x, n), "tokens." .. n)
      end
    elseif k == "tools" then
      e.tools = {}
      for i, t in ipairs(self:list(x, l, k)) do e.tools[i] = self:tool(t, self:line_of(x, i)) end
    elseif k == "when" then e.when = self:when(x, l, evaluate)
    end
  end
  if not e.reply and not evaluate then
    if not e.errors then fail(line, "a turn needs reply: (the model's text, its tag included)") end
    -- A turn that only fails fails at every attempt.
  end
  if evaluate and not e.reply then fail(line, "an evaluate answer needs answer:") end
  return e
end

function C:turns(v, line, evaluate)
  if type(v) == "table" and is_list(v, self.lines) then
    local out = {}
    for i, x in ipairs(v) do out[i] = self:turn(x, self:line_of(v, i), evaluate) end
    return out
  end
  return { self:turn(v, line, evaluate) }
end

function C:model(v, line)
  local out = {}
  for _, name in ipairs(self:map(v, line, "model")) do
    local l = self:line_of(v, name)
    out[self:state(name, l, "markdown")] = self:turns(v[name], l)
  end
  return out
end

local STUB = set("stdout", "stderr", "exit", "when")

-- One stub: the script's output as text, or { stdout, stderr, exit, when }.
function C:stub(s, l)
  if type(s) == "string" then return { stdout = s } end
  local stub = {}
  for _, k in ipairs(self:map(s, l, "a script stub", STUB)) do
    local kl = self:line_of(s, k)
    if k == "exit" then
      stub.exit = self:integer(s[k], kl, "exit")
      if stub.exit > 255 then fail(kl, "exit must be from 0 to 255, not %d", stub.exit) end
    elseif k == "when" then
      stub.when = self:when(s[k], kl)
    else
      stub[k] = self:string(s[k], kl, k)
    end
  end
  return stub
end

-- A state's stubs, picked as turns are: by when, then by visit (the last
-- repeats).  A run of the script that no stub fits runs it for real.
function C:scripts(v, line)
  local out = {}
  for _, name in ipairs(self:map(v, line, "scripts")) do
    local l, s = self:line_of(v, name), v[name]
    local stubs = {}
    if type(s) == "table" and next(s) ~= nil and is_list(s, self.lines) then
      for i, x in ipairs(s) do stubs[i] = self:stub(x, self:line_of(s, i)) end
    else
      stubs[1] = self:stub(s, l)
    end
    out[self:state(name, l, "script")] = stubs
  end
  return out
end

-- ---------------------------------------------------------------- expect

-- A relative path inside the sandbox.
function C:rel_path(p, line)
  if p == "" or p:sub(1, 1) == "/" or ("/" .. p .. "/"):find("/%.%./") then
    fail(line, "'%s' must be a path inside the case's folder (relative, without ..)", p)
  end
  return p
end

local MATCH = set("contains", "match", "absent")

-- Text, or { contains = } / { match = } (a Lua pattern).
function C:text_match(v, line, name, absent_ok)
  if type(v) == "string" then return { equals = v } end
  local keys = self:map(v, line, name, MATCH)
  if #keys ~= 1 then fail(line, "%s takes one of contains:, match:%s", name, absent_ok and ", absent:" or "") end
  local k = keys[1]
  local l = self:line_of(v, k)
  if k == "absent" then
    if not absent_ok then fail(l, "%s cannot be absent", name) end
    return { absent = self:bool(v[k], l, "absent") }
  end
  local s = self:string(v[k], l, k)
  if k == "match" and not pcall(string.find, "", s) then fail(l, "'%s' is not a valid Lua pattern", s) end
  return { [k] = s }
end

-- A path of states: names of the workflow's states and "...".
function C:path(v, line, name, check_states)
  local out = {}
  for i, s in ipairs(self:list(v, line, name)) do
    local l = self:line_of(v, i)
    s = self:string(s, l, "a state in " .. name)
    if s ~= "..." and check_states then s = self:state(s, l) end
    out[i] = s
  end
  return out
end

local COST = set("min", "max")
local EXPECT = set("path", "paths", "result", "exit", "status", "error", "cost", "files", "prints", "data", "tools")

local TOOL_EXPECT = set("tool", "call", "state", "agent", "denied", "reason")

-- An expected tool call: which calls (tool, call: text in its main
-- argument, state, agent) and what the policy did with every one of them.
function C:tool_expect(v, line)
  local out = { line = line }
  for _, k in ipairs(self:map(v, line, "an expected tool call", TOOL_EXPECT)) do
    local l = self:line_of(v, k)
    if k == "denied" then out.denied = self:bool(v[k], l, k)
    elseif k == "state" then out.state = self:state(self:string(v[k], l, k), l, "markdown")
    else out[k] = self:string(v[k], l, k) end
  end
  if not out.tool then fail(line, "an expected tool call needs tool: (the tool's name, such as Bash)") end
  if out.reason and out.denied == false then fail(self:line_of(v, "reason"), "a call that ran has no denial reason") end
  return out
end

function C:expect(v, line)
  local ex = {}
  for _, k in ipairs(self:map(v, line, "expect", EXPECT)) do
    local x, l = v[k], self:line_of(v, k)
    ex.lines = ex.lines or {}
    ex.lines[k] = l
    if k == "path" then ex.path = self:path(x, l, "path", true)
    elseif k == "paths" then
      ex.paths = {}
      for _, id in ipairs(self:map(x, l, "paths")) do
        ex.paths[#ex.paths + 1] = { agent = id, path = self:path(x[id], self:line_of(x, id), "paths." .. id, false),
                                    line = self:line_of(x, id) }
      end
    elseif k == "result" then ex.result = self:text_match(x, l, "result")
    elseif k == "error" then
      -- A run's error or stop reason is a long sentence naming files and
      -- sums, so plain text is a part of it, not all of it.
      ex.error = self:text_match(x, l, "error")
      if ex.error.equals then ex.error = { contains = ex.error.equals } end
    elseif k == "exit" then
      ex.exit = self:integer(x, l, "exit")
      if ex.exit > 255 then fail(l, "exit must be from 0 to 255, not %d", ex.exit) end
    elseif k == "status" then
      ex.status = self:string(x, l, "status")
      if not M.STATUSES[ex.status] then fail(l, "status must be completed, failed, stopped or asking, not %s", ex.status) end
    elseif k == "cost" then
      if type(x) == "string" then
        ex.cost = { equals = self:number(x, l, "cost") }
      else
        ex.cost = {}
        for _, n in ipairs(self:map(x, l, "cost", COST)) do ex.cost[n] = self:number(x[n], self:line_of(x, n), "cost." .. n) end
        if ex.cost.min and ex.cost.max and ex.cost.min > ex.cost.max then
          fail(l, "cost can never be both at least %g and at most %g", ex.cost.min, ex.cost.max)
        end
      end
    elseif k == "files" then
      ex.files = {}
      for _, p in ipairs(self:map(x, l, "files")) do
        local pl = self:line_of(x, p)
        ex.files[#ex.files + 1] = { path = self:rel_path(p, pl), want = self:text_match(x[p], pl, p, true), line = pl }
      end
    elseif k == "prints" then
      ex.prints = {}
      for i, s in ipairs(self:list(x, l, "prints")) do ex.prints[i] = self:string(s, self:line_of(x, i), "a print") end
    elseif k == "data" then
      self:map(x, l, "data")
      ex.data = self:plain(x)
    elseif k == "tools" then
      ex.tools = {}
      for i, t in ipairs(self:list(x, l, k)) do ex.tools[i] = self:tool_expect(t, self:line_of(x, i)) end
    end
  end
  if ex.status == "completed" and ex.exit and ex.exit ~= 0 then
    fail(ex.lines.exit, "a completed run exits with 0, so exit %d can never be seen", ex.exit)
  end
  if ex.result and ex.status and ex.status ~= "completed" then
    fail(ex.lines.result, "only a completed run has a result, and status is %s", ex.status)
  end
  return ex
end

-- ------------------------------------------------------------------ cases

local CASE = set("name", "input", "start", "options", "env", "files", "answers", "timeout", "model", "scripts",
  "evaluate", "expect")

function C:options(v, line)
  local args = {}
  for _, k in ipairs(self:map(v, line, "options", M.OPTIONS)) do
    local l, kind = self:line_of(v, k), M.OPTIONS[k]
    local flag = "--" .. k:gsub("_", "-")
    if kind == "bool" then
      if self:bool(v[k], l, k) then args[#args + 1] = flag end
    else
      args[#args + 1] = flag
      args[#args + 1] = tostring(self[kind](self, v[k], l, k))
    end
  end
  return args
end

function C:strings(v, line, name)
  local out = {}
  for _, k in ipairs(self:map(v, line, name)) do out[k] = self:string(v[k], self:line_of(v, k), k) end
  return out
end

function C:case(v, line, seen)
  self:map(v, line, "a case", CASE)
  if v.name == nil then fail(line, "a case needs name:") end
  local c = { line = line, env = {}, files = {}, answers = {}, timeout = M.DEFAULT_TIMEOUT, args = {}, options = {},
              case = { model = {}, scripts = {}, evaluate = {} } }
  c.name = self:string(v.name, self:line_of(v, "name"), "name")
  if seen[c.name] then fail(self:line_of(v, "name"), "a case named '%s' is already on line %d", c.name, seen[c.name]) end
  seen[c.name] = line
  for _, k in ipairs(text.keys_by_line(v, self.lines)) do
    local x, l = v[k], self:line_of(v, k)
    if k == "input" then c.input = self:string(x, l, k)
    elseif k == "start" then c.start = self:state(self:string(x, l, k), l)
    elseif k == "options" then c.args, c.options = self:options(x, l), x
    elseif k == "env" then c.env = self:strings(x, l, "env")
    elseif k == "files" then
      for p, body in pairs(self:strings(x, l, "files")) do c.files[self:rel_path(p, self:line_of(x, p))] = body end
    elseif k == "answers" then
      for i, s in ipairs(self:list(x, l, k)) do c.answers[i] = self:string(s, self:line_of(x, i), "an answer") end
    elseif k == "timeout" then
      c.timeout = self:number(x, l, k)
      if c.timeout <= 0 then fail(l, "timeout must be more than 0 seconds") end
    elseif k == "model" then c.case.model = self:model(x, l)
    elseif k == "scripts" then c.case.scripts = self:scripts(x, l)
    elseif k == "evaluate" then c.case.evaluate = self:turns(x, l, true)
    elseif k == "expect" then c.expect = self:expect(x, l)
    end
  end
  if not c.expect then fail(line, "case '%s' has no expect: block, so it could never fail", c.name) end
  -- A case that answers questions, even none (answers: [] to see the run
  -- stop at its first <ask>), runs with --on-ask pause: each ask saves
  -- the run and exits with status 2, and the runner resumes it with the
  -- next answer.
  if v.answers ~= nil then
    c.args[#c.args + 1] = "--on-ask"
    c.args[#c.args + 1] = "pause"
  end
  return c
end

-- ------------------------------------------------------------------ loading

-- The workflow a test file tests: workflow: (relative to the file), or
-- the folder that holds the file's tests/ folder.
local function workflow_of(doc, lines, path)
  local dir = path:match("^(.*)/[^/]*$") or "."
  if doc.workflow ~= nil then
    if type(doc.workflow) ~= "string" then fail(lines[doc].workflow, "workflow must be a path") end
    local w = doc.workflow
    return w:sub(1, 1) == "/" and w or (dir .. "/" .. w), lines[doc].workflow
  end
  local up = dir:match("^(.*)/tests$")
  if not up then
    fail(1, "say which workflow this file tests with workflow: PATH (or put it in the workflow's tests/ folder)")
  end
  return up, 1
end

local FILE = set("workflow", "cases")

-- Every key the file format knows, by where it may stand (for the
-- reference in docs/testing.md, which a test keeps in step with these).
M.KEYS = {
  file = FILE, case = CASE, options = M.OPTIONS, turn = TURN, evaluate = EVALUATE, when = WHEN, tool = TOOL,
  tokens = TOKENS, script = STUB, expect = EXPECT, text = MATCH, cost = COST, evaluate_when = EVAL_WHEN,
  tool_expect = TOOL_EXPECT,
}

function M.load(path, cwd)
  local abs = path:sub(1, 1) == "/" and path or (cwd .. "/" .. path)
  local shown = path
  local kind = raymond.stat(abs)
  if kind ~= "file" then return nil, string.format("%s: no such test file", shown) end
  local source, rerr = raymond.read_file(abs, M.MAX_BYTES)
  if not source then return nil, string.format("%s: %s", shown, rerr) end
  local doc, lines = raymond.yaml(source, shown)
  if not doc then return nil, lines end
  local c = setmetatable({ lines = lines, at = 1 }, C)
  local ok, res = pcall(function()
    c:map(doc, 1, "a test file", FILE)
    local wpath, wline = workflow_of(doc, lines, abs)
    local wf, werr = analyse.load(wpath, cwd)
    if not wf then fail(wline, "cannot read the workflow %s: %s", wpath, type(werr) == "table" and werr.msg or werr) end
    c.wf = wf
    if doc.cases == nil then fail(1, "the file has no cases:") end
    local cases, seen = {}, {}
    for i, v in ipairs(c:list(doc.cases, lines[doc].cases, "cases")) do cases[i] = c:case(v, lines[doc.cases][i], seen) end
    return { path = abs, shown = shown, workflow_path = wpath, workflow = wf, cases = cases }
  end)
  if ok then return res end
  if c.wf then analyse.close(c.wf) end
  if type(res) == "table" then return nil, string.format("%s:%d: %s", shown, res.line or 1, res.msg) end
  error(res, 0)
end

return M
