-- raymond.expect: what a finished test case did, against its expect:
-- block (raymond.testfile).
--
--   local got = expect.outcome(dir, exit, stdout)  -- read the run's record and trace
--   local failures = expect.check(case.expect, got, dir)
--   -- a list of messages, each one line or a few (a path shows where the
--   -- expected and the actual path part)
--
-- The outcome a case is judged on:
--   exit      the last raymond's exit status
--   status, result, error, cost, data   from the run's state file
--   paths     agent id -> the states it ran, in order (from the trace's
--             step lines, which hold only saved transitions), and the
--             state it was in at the end if it did not finish there
--             (a failed or stopped state; not the one an agent asks in)
--   stdout    what the runs printed (<print> text, the result)
--   events    the trace's lines (raymond.trace), read once for all who
--             judge the case (replay, coverage, chaos)

local raymond = require("raymond")
local runstate = require("raymond.runstate")
local trace = require("raymond.trace")

local M = {}

-- The case's run as its state file and trace hold it.
function M.outcome(dir, exit, stdout)
  local got = { exit = exit, stdout = stdout or "", paths = {}, order = {} }
  -- The snapshot or the journal, whichever is newer: a run killed (by
  -- the case's timeout, or by --chaos) may have saved last to the journal.
  local path = dir .. "/.raymond/state/test.json"
  local rec = runstate.load(path)
  if type(rec) ~= "table" then
    -- A record the engine would refuse still says what happened.
    local ok, raw = pcall(raymond.cjson.decode, raymond.read_file(path) or "")
    rec = ok and type(raw) == "table" and raw or nil
  end
  if type(rec) == "table" then
    got.rec, got.status, got.result, got.cost, got.data = rec, rec.status, rec.result, rec.cost or 0, rec.data
    got.error = rec.error or rec.stop_reason
  end
  -- The path of agent `id`, begun the first time it is named.
  local function path_of(id)
    local p = got.paths[id]
    if not p then
      p = {}
      got.paths[id] = p
      got.order[#got.order + 1] = id
    end
    return p
  end
  got.tools = {}
  got.events = trace.read(dir .. "/.raymond/test/trace.jsonl")
  for _, e in ipairs(got.events) do
    if e.ev == "tool" then got.tools[#got.tools + 1] = e end
    if e.ev == "step" then table.insert(path_of(e.agent), e.state) end
  end
  -- Where each agent still was: the run failed or stopped there.  An
  -- agent that asks has ended its state with the <ask>, whose step line
  -- is in the trace already.
  for _, a in ipairs(got.rec and got.rec.agents or {}) do
    local p = path_of(a.id)
    if type(a.state) == "string" and a.status ~= "asking" and not a.ask then p[#p + 1] = a.state end
  end
  return got
end

-- ------------------------------------------------------------------ paths

local function same_state(want, have)
  return want == have or have:gsub("%.%w+$", "") == want
end

-- Whether `have` (a list of states) matches `want`, where "..." stands
-- for any run of states, none included.
local function path_matches(want, have, i, j)
  i, j = i or 1, j or 1
  if i > #want then return j > #have end
  if want[i] == "..." then
    for k = j, #have + 1 do
      if path_matches(want, have, i + 1, k) then return true end
    end
    return false
  end
  return j <= #have and same_state(want[i], have[j]) and path_matches(want, have, i + 1, j + 1)
end
M.path_matches = path_matches

-- The first step at which the two paths part, for the message.
local function parting(want, have)
  local n = 1
  while n <= #want and n <= #have and want[n] ~= "..." and same_state(want[n], have[n]) do n = n + 1 end
  return n
end

local function strip(list)
  local out = {}
  for i, s in ipairs(list) do out[i] = s == "..." and s or s:gsub("%.%w+$", "") end
  return out
end

function M.path_diff(agent, want, have)
  local n = parting(want, have)
  local w, h = table.concat(strip(want), " "), table.concat(strip(have), " ")
  local pad = 0
  for k = 1, n - 1 do pad = pad + #(strip({ have[k] })[1]) + 1 end
  return string.format("path of %s:\n  expected: %s\n  actual:   %s\n            %s^ step %d", agent, w,
    h == "" and "(no state ran)" or h, string.rep(" ", pad), n)
end

local function glob(pattern, s) return require("raymond.model").glob(pattern, s) end

-- ------------------------------------------------------------------ values

local function text_ok(want, have)
  if want.absent ~= nil then return (have == nil) == want.absent end
  if have == nil then return false end
  if want.equals then return have == want.equals end
  if want.contains then return have:find(want.contains, 1, true) ~= nil end
  return have:find(want.match) ~= nil
end

-- Text quoted on one line (a newline as \n), so a failure's lines stay
-- lines when the runner indents them.
local function q(s) return raymond.json_encode(s) end

local function text_want(want)
  if want.absent ~= nil then return want.absent and "absent" or "present" end
  if want.equals then return q(want.equals) end
  if want.contains then return "containing " .. q(want.contains) end
  return "matching " .. q(want.match)
end

local function shown(v)
  if v == nil then return "nothing" end
  if type(v) == "string" then return q(#v > 200 and v:sub(1, 200) .. "..." or v) end
  if type(v) == "table" then return raymond.json_encode(v) end
  return tostring(v)
end

-- Whether JSON-like `have` equals the test file's `want`, whose scalars
-- are all text (YAML read untyped): numbers and booleans compare by
-- their text.
local function equal(want, have)
  if type(want) == "table" then
    if type(have) ~= "table" then return false end
    for k, v in pairs(want) do
      local hk = have[k]
      if hk == nil and math.type(k) == "integer" then hk = have[k] end
      if not equal(v, hk) then return false end
    end
    for k in pairs(have) do
      if want[k] == nil then return false end
    end
    return true
  end
  if type(have) == "number" then return tonumber(want) == have end
  if type(have) == "boolean" then return want == tostring(have) end
  return want == have
end

-- ------------------------------------------------------------------ check

function M.check(ex, got, dir)
  local fails = {}
  local function add(fmt, ...) fails[#fails + 1] = string.format(fmt, ...) end
  if ex.exit and got.exit ~= ex.exit then add("exit status: expected %d, got %s", ex.exit, tostring(got.exit)) end
  if ex.status and got.status ~= ex.status then
    add("status: expected %s, got %s%s", ex.status, tostring(got.status), got.error and (" (" .. got.error .. ")") or "")
  end
  if ex.path and not path_matches(ex.path, got.paths.main or {}) then
    add("%s", M.path_diff("main", ex.path, got.paths.main or {}))
  end
  for _, p in ipairs(ex.paths or {}) do
    local any = false
    for _, id in ipairs(got.order) do
      if glob(p.agent, id) then
        any = true
        if not path_matches(p.path, got.paths[id]) then add("%s", M.path_diff(id, p.path, got.paths[id])) end
      end
    end
    if not any then add("paths: no agent %s ran (agents: %s)", p.agent, table.concat(got.order, ", ")) end
  end
  if ex.result and not text_ok(ex.result, got.result) then
    add("result: expected %s, got %s", text_want(ex.result), shown(got.result))
  end
  if ex.error and not text_ok(ex.error, got.error) then
    add("error: expected %s, got %s", text_want(ex.error), shown(got.error))
  end
  if ex.cost then
    local c = got.cost or 0
    if ex.cost.equals and math.abs(c - ex.cost.equals) > 1e-6 then add("cost: expected $%.6f, got $%.6f", ex.cost.equals, c) end
    if ex.cost.min and c < ex.cost.min - 1e-9 then add("cost: expected at least $%.6f, got $%.6f", ex.cost.min, c) end
    if ex.cost.max and c > ex.cost.max + 1e-9 then add("cost: expected at most $%.6f, got $%.6f", ex.cost.max, c) end
  end
  for _, f in ipairs(ex.files or {}) do
    local body = raymond.read_file(dir .. "/" .. f.path)
    if not text_ok(f.want, body) then add("file %s: expected %s, got %s", f.path, text_want(f.want), shown(body)) end
  end
  if ex.prints then
    local from = 1
    for _, p in ipairs(ex.prints) do
      local s, e = got.stdout:find(p, from, true)
      if not s then
        add("prints: %s was not printed%s", q(p), from > 1 and " after the prints before it" or "")
        break
      end
      from = e + 1
    end
  end
  for _, t in ipairs(ex.tools or {}) do
    local why = M.tool_check(t, got.tools)
    if why then add("tool call %s", why) end
  end
  if ex.data and not equal(ex.data, M.data_subset(ex.data, got.data)) then
    add("data: expected %s, got %s", shown(ex.data), shown(M.data_subset(ex.data, got.data)))
  end
  return fails
end

-- The tool calls `t` selects, each as "Bash git push" (raymond.claude's
-- line), and why they do not do what `t` expects, or nil.
function M.tool_check(t, calls)
  local claude = require("raymond.claude")
  local seen, wrong = 0, nil
  for _, c in ipairs(calls) do
    local line = claude.tool_line({ name = c.tool, input = type(c.input) == "table" and c.input or {} }) or ""
    local fits = c.tool == t.tool and (not t.call or line:find(t.call, 1, true)) and (not t.state or c.state == t.state)
      and (not t.agent or glob(t.agent, c.agent))
    if fits then
      seen = seen + 1
      local denied = c.denied ~= nil and c.denied ~= raymond.cjson.null
      if t.denied ~= nil and denied ~= t.denied then
        wrong = wrong or string.format("%s in [%s] %s %s", line, c.agent, c.state, denied
          and ("was denied: " .. tostring(c.denied)) or "ran, and should have been denied")
      elseif t.reason and not (denied and tostring(c.denied):find(t.reason, 1, true)) then
        wrong = wrong or string.format("%s in [%s] %s was %s, not for a reason containing %q", line, c.agent, c.state,
          denied and ("denied: " .. tostring(c.denied)) or "not denied", t.reason)
      end
    end
  end
  local what = t.tool .. (t.call and (" " .. t.call) or "") .. (t.state and (" in " .. t.state) or "")
  if seen == 0 then return string.format("%s: no such call was made", what) end
  return wrong
end

-- The keys of `have` that `want` names (data: checks only the keys it gives).
function M.data_subset(want, have)
  if type(have) ~= "table" then return have end
  local out = {}
  for k in pairs(want) do out[k] = have[k] end
  return out
end

return M
