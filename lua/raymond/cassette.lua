-- raymond.cassette: a run's model exchanges, recorded (`--record FILE`)
-- and played back offline (a test case's `replay`).
--
--   local w, err = cassette.attach(run, opts, scope)  -- the engine, with --record
--   local feed, tape = w:tape(job.lines)  -- executor.run, as a Claude turn starts
--   w:exchange(job, res, tape)      -- and as it ends
--   w:transition(agent, from, tr, target) ; w:commit()  -- as the trace's
--   w:finish(run, code)             -- the run's outcome, at its end
--
--   local c, err = cassette.read(path)         -- header, exchanges, steps, outcome
--   local case, outcome = cassette.case(path, workflow_path)
--   local lines = cassette.compare(outcome, paths, result)
--   local p = cassette.paths(events)           -- agent -> states, from step lines
--   local r, err = cassette.replayer(path)     -- raymond.model's replay source
--
-- The file is JSON Lines, each written whole with one append, so a
-- process killed at any instant leaves a readable prefix (a torn last
-- line is skipped when read):
--
--   {"cassette":1,"raymond":V,"workflow":PATH,"name":N,"start":S,"states":{FILE:SHA256},
--    "input":X,"options":{...}}                             the header, first
--   {"ev":"turn","agent":A,"state":S,"visit":V,"attempt":K,"purpose":P,"model":M,
--    "session":{"mode":..,"id":..,"from":..},"prompt":..,"lines":[..],"exit":E,
--    "timed_out":B,"stderr":..,"cost":C}                    one model exchange, as it ends
--   {"ev":"step","agent":A,"state":S,"visit":V,"to":T,"tag":G}
--                                                           a transition, once saved
--   {"ev":"answer","text":X}                               `resume --input X` answered an <ask>
--   {"ev":"end","status":..,"result":..,"error":..,"exit":N,"cost":C,"paths":{A:[S..]}}
--                                                           the run's outcome, at its end
--
-- Visits are counted as raymond.trace counts them: a turn of an agent in
-- a state is that state's visit one more than the saved transitions that
-- left it.  Step lines are written only after the save that holds them,
-- so a resumed run (which appends to the same file, the path being a
-- launch option) counts visits as the killed process did; attempts count
-- the exchanges of the same visit already in the file.  A resume after a
-- pause or failure appends another end line; the last one is the outcome.
--
-- Secrets never reach the file: the values of environment variables whose
-- names look like secrets (M.secret_name) are replaced by "[redacted
-- NAME]" in every string of every line, and of argv only the session
-- flags and the model are kept.

local raymond = require("raymond")
local states = require("raymond.states")
local cjson = raymond.cjson

local M = {}

M.FORMAT = 1

-- A secret shorter than this is left alone: replacing "test" or "1"
-- everywhere would garble the record and hide nothing.
M.SECRET_MIN = 8

local SECRET_WORDS = { "KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH" }

function M.secret_name(name)
  local up = name:upper()
  if up:sub(1, 10) == "ANTHROPIC_" or up == "RAYMOND_BRIDGE_TOKEN" then return true end
  for _, w in ipairs(SECRET_WORDS) do
    if up:find(w, 1, true) then return true end
  end
  return false
end

-- The secrets of environment `env` (name -> value), longest value first
-- so that a secret holding another is replaced whole.
function M.secrets(env, into)
  local list = into or {}
  for name, value in pairs(env or {}) do
    value = tostring(value)
    if #value >= M.SECRET_MIN and M.secret_name(name) then list[#list + 1] = { name = name, value = value } end
  end
  table.sort(list, function(a, b)
    if #a.value ~= #b.value then return #a.value > #b.value end
    return a.name < b.name
  end)
  return list
end

local function replace_plain(s, find, repl)
  local out, i = {}, 1
  while true do
    local a, b = s:find(find, i, true)
    if not a then break end
    out[#out + 1] = s:sub(i, a - 1)
    out[#out + 1] = repl
    i = b + 1
  end
  if i == 1 then return s end
  out[#out + 1] = s:sub(i)
  return table.concat(out)
end

-- `s` with every secret replaced, as written and as a JSON string would
-- escape it (a stream-json line holds it escaped).
function M.redact(s, secrets)
  for _, sec in ipairs(secrets) do
    local mark = "[redacted " .. sec.name .. "]"
    s = replace_plain(s, sec.value, mark)
    -- Encoders differ on "/" (escaped by some, not by others): both forms.
    for _, enc in ipairs({ raymond.json_encode, cjson.encode }) do
      local escaped = (enc(sec.value) or ""):sub(2, -2)
      if escaped ~= sec.value and escaped ~= "" then s = replace_plain(s, escaped, mark) end
    end
  end
  return s
end

local function redact_all(v, secrets)
  if type(v) == "string" then return M.redact(v, secrets) end
  if type(v) ~= "table" then return v end
  local out = {}
  for k, x in pairs(v) do out[k] = redact_all(x, secrets) end
  return setmetatable(out, getmetatable(v))
end

-- ------------------------------------------------------------------ paths

-- agent id -> the states it ran, in order, from step lines (the
-- cassette's or a test trace's); an agent whose last step led on to a
-- state it did not finish (a failed or paused run) has that state last.
function M.paths(events)
  local paths, last = {}, {}
  for _, e in ipairs(events) do
    if e.ev == "step" and type(e.agent) == "string" then
      local p = paths[e.agent] or {}
      paths[e.agent] = p
      p[#p + 1] = e.state
      last[e.agent] = e.to
    end
  end
  for agent, to in pairs(last) do
    if type(to) == "string" and to ~= "" then paths[agent][#paths[agent] + 1] = to end
  end
  return paths
end

local function sorted_agents(...)
  local seen, list = {}, {}
  for _, t in ipairs({ ... }) do
    for a in pairs(t or {}) do
      if not seen[a] then seen[a], list[#list + 1] = true, a end
    end
  end
  table.sort(list, function(a, b)
    if a == "main" or b == "main" then return a == "main" and b ~= "main" end
    return a < b
  end)
  return list
end

local function shown(v)
  if v == nil or v == cjson.null then return "nothing" end
  return string.format("%q", tostring(v))
end

-- How a run now differs from the recording: per agent its first
-- differing state, then the result.  Empty when they agree.
function M.compare(recorded, actual_paths, actual_result)
  local out = {}
  local rpaths = recorded.paths or {}
  for _, a in ipairs(sorted_agents(rpaths, actual_paths)) do
    local r, n = rpaths[a] or {}, (actual_paths or {})[a] or {}
    local i = 1
    while i <= math.max(#r, #n) and r[i] == n[i] do i = i + 1 end
    if i <= math.max(#r, #n) then
      if #r == 0 then
        out[#out + 1] = string.format("%s: not in the recording, now %s", a, table.concat(n, " -> "))
      elseif #n == 0 then
        out[#out + 1] = string.format("%s: recorded %s, now it never ran", a, table.concat(r, " -> "))
      elseif i == 1 then
        out[#out + 1] = string.format("%s: recorded starting at %s, now at %s", a, r[1], n[1])
      else
        out[#out + 1] = string.format("%s: recorded %s -> %s, now %s -> %s", a, r[i - 1], r[i] or "(end)",
          n[i - 1], n[i] or "(end)")
      end
    end
  end
  local rr = recorded.result
  if rr == cjson.null then rr = nil end
  if actual_result == cjson.null then actual_result = nil end
  if rr ~= actual_result then
    out[#out + 1] = string.format("result: recorded %s, now %s", shown(rr), shown(actual_result))
  end
  return out
end

-- ----------------------------------------------------------------- reading

local PURPOSES = { state = true, evaluate = true }

local function whole(v) return math.type(v) == "integer" or (type(v) == "number" and v == math.floor(v)) end

-- What is wrong with exchange line `e`, or nil.
local function bad_turn(e)
  if type(e.agent) ~= "string" or type(e.state) ~= "string" then return "a turn without agent and state" end
  if not (whole(e.visit) and e.visit >= 1) then return "turn field 'visit' is not a whole number from 1" end
  if not (whole(e.attempt) and e.attempt >= 1) then return "turn field 'attempt' is not a whole number from 1" end
  if not PURPOSES[e.purpose] then return "turn field 'purpose' is not \"state\" or \"evaluate\"" end
  if type(e.lines) ~= "table" then return "turn field 'lines' is not a list" end
  for _, l in ipairs(e.lines) do
    if type(l) ~= "string" then return "turn field 'lines' holds something other than text" end
  end
  if e.prompt ~= nil and type(e.prompt) ~= "string" then return "turn field 'prompt' is not text" end
  if e.exit ~= nil and e.exit ~= cjson.null and type(e.exit) ~= "number" then return "turn field 'exit' is not a number" end
  return nil
end

-- The cassette at `path`: { header =, exchanges = {...}, steps = {...},
-- outcome = last end line or nil, lines = how many lines were read }, each
-- exchange with `line`, its line number.  Or nil and "FILE:LINE: what".
function M.read(path)
  local text, err = raymond.read_file(path)
  if not text then return nil, string.format("cannot read the cassette %s: %s", path, tostring(err)) end
  local c = { exchanges = {}, steps = {}, answers = {}, path = path }
  local n = 0
  local pos = 1
  while pos <= #text do
    local nl = text:find("\n", pos, true)
    local line = text:sub(pos, (nl or #text + 1) - 1)
    local torn = nl == nil
    pos = (nl or #text) + 1
    n = n + 1
    local where = path .. ":" .. n .. ": "
    local ok, obj = pcall(cjson.decode, line)
    if not ok or type(obj) ~= "table" then
      -- The last line of a process killed while writing it.
      if torn and n > 1 then break end
      if n == 1 then return nil, where .. "not a raymond cassette: the first line is not a cassette header" end
      return nil, where .. "not a JSON object: the cassette was changed by hand or is damaged"
    end
    if n == 1 then
      if not whole(obj.cassette) then
        return nil, where .. "not a raymond cassette: the first line is not a cassette header"
      end
      if obj.cassette > M.FORMAT then
        return nil, string.format("%scassette format %d is newer than this raymond reads (%d): record it again, "
          .. "or use the raymond that recorded it (%s)", where, obj.cassette, M.FORMAT, tostring(obj.raymond))
      end
      c.header = obj
    elseif obj.ev == "turn" then
      local why = bad_turn(obj)
      if why then return nil, where .. why end
      obj.line = n
      c.exchanges[#c.exchanges + 1] = obj
    elseif obj.ev == "step" then
      if type(obj.agent) ~= "string" or type(obj.state) ~= "string" then
        return nil, where .. "a step without agent and state"
      end
      c.steps[#c.steps + 1] = obj
    elseif obj.ev == "end" then
      c.outcome = obj
    elseif obj.ev == "answer" then
      if type(obj.text) ~= "string" then return nil, where .. "an answer without text" end
      c.answers[#c.answers + 1] = obj.text
    else
      return nil, string.format("%sunknown line kind %s (a turn, step, answer or end line was expected)", where,
        shown(obj.ev))
    end
  end
  if not c.header then return nil, path .. ":1: empty: not a raymond cassette" end
  c.lines = n
  return c
end

local function key(agent, state, visit, purpose, attempt)
  return table.concat({ agent, state, tostring(math.tointeger(visit) or visit), purpose,
                        tostring(math.tointeger(attempt) or attempt) }, "\0")
end

local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return (raymond.getcwd() or ".") .. "/" .. path
end

-- A compiled test case (the table raymond.model reads) that replays the
-- cassette at `path` against the workflow at `workflow_path` (default:
-- the header's, relative to the current directory), and the recorded
-- outcome { status, result, error, exit, cost, paths, ended }.  Or nil and
-- "FILE:LINE: what".
function M.case(path, workflow_path)
  local c, err = M.read(path)
  if not c then return nil, err end
  local h = c.header
  local wf = workflow_path or h.workflow
  if type(wf) ~= "string" then return nil, path .. ":1: the header names no workflow" end
  local resolve = require("raymond.resolve")
  local scope, entry = resolve.workflow(wf)
  if not scope then return nil, string.format("%s:1: the recorded workflow: %s", path, entry) end
  for _, e in ipairs(c.exchanges) do
    if e.purpose == "state" and not scope:has(e.state) then
      return nil, string.format("%s:%d: the recording has a turn of state %s, which the workflow %s does not have",
        path, e.line, e.state, wf)
    end
  end
  local changed = {}
  for name, sum in pairs(type(h.states) == "table" and h.states or {}) do
    local text = scope:read(name)
    if not text or raymond.sha256(text) ~= sum then changed[#changed + 1] = name end
  end
  table.sort(changed)
  local name = path:match("([^/]+)$"):gsub("%.cassette$", "")
  local case = {
    name = name, workflow = scope.path, start = type(h.start) == "string" and h.start or entry,
    input = h.input ~= cjson.null and h.input or nil, options = type(h.options) == "table" and h.options or {},
    replay = absolute(path),
  }
  if #c.answers > 0 then case.answers = c.answers end
  local o = c.outcome or {}
  local outcome = {
    status = o.status, result = o.result, error = o.error, exit = o.exit, cost = o.cost,
    paths = type(o.paths) == "table" and o.paths or M.paths(c.steps), ended = c.outcome ~= nil,
    changed = changed,
  }
  return case, outcome
end

-- The command-line options of a run with the recorded `options` (the
-- header's), in a fixed order.
local FLAGS = { timeout = "--timeout", budget = "--budget", max_parallel = "--max-parallel", model = "--model",
                effort = "--effort", on_ask = "--on-ask", max_agents = "--max-agents", max_repeats = "--max-repeats" }
local SWITCHES = { skip_permissions = "--dangerously-skip-permissions", no_wait = "--no-wait",
                   no_default_hooks = "--no-default-hooks" }

function M.args(options)
  local keys, argv = {}, {}
  for k in pairs(options) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = options[k]
    if FLAGS[k] and (type(v) == "number" or type(v) == "string") then
      argv[#argv + 1] = FLAGS[k]
      argv[#argv + 1] = tostring(math.tointeger(v) or v)
    end
    if SWITCHES[k] and v == true then argv[#argv + 1] = SWITCHES[k] end
  end
  return argv
end

-- ----------------------------------------------------------------- writing

local Writer = {}
Writer.__index = Writer

-- Append `text` (whole lines).  A cassette that cannot be written is
-- said once and given up, and the run goes on: the work it does is worth
-- more than its recording, and what was written stays a readable prefix.
function Writer:write(text)
  if self.broken then return false end
  local ok, err = raymond.append_file(self.path, text)
  if ok then return true end
  self.broken = err
  require("raymond.console").warn("--record: cannot write the cassette %s: %s; the recording stops here",
    self.path, tostring(err))
  return false
end

-- One line for `obj`, with the secrets (default: the writer's) redacted.
local function put(w, obj, secrets)
  local line, err = raymond.json_encode(redact_all(obj, secrets or w.secrets))
  if not line then
    require("raymond.console").warn("--record: cannot encode a line of the cassette %s: %s", w.path, tostring(err))
    return false
  end
  return w:write(line .. "\n")
end

local function vkey(agent, state) return agent .. "\0" .. state end

local function count_visit(w, agent, state)
  local k = vkey(agent, state)
  w.count[k] = (w.count[k] or 0) + 1
end

-- The states of `scope`, file name -> SHA-256 of its text.
local function state_sums(scope)
  local names = {}
  if scope.files then
    for name in pairs(scope.files) do names[#names + 1] = name end
  else
    names = raymond.listdir(scope.path) or {}
  end
  local sums = {}
  for _, name in ipairs(names) do
    if states.of(name) then
      local text = scope:read(name)
      if text then sums[name] = raymond.sha256(text) end
    end
  end
  return sums
end

-- The options a case of this recording runs with: what changes what the
-- run does, not where this machine keeps things.
local OPTIONS = { "timeout", "max_parallel", "budget", "model", "effort", "skip_permissions", "no_wait",
                  "no_default_hooks", "max_agents", "max_repeats", "on_ask" }

local function header(run, opts, scope)
  local rec = run.rec
  local console = require("raymond.console")
  local options = {}
  for _, k in ipairs(OPTIONS) do options[k] = rec.launch[k] end
  local wf = opts.workflow or rec.workflow
  if wf:sub(1, 1) == "/" then wf = console.rel(wf, opts.cwd) end
  local base = (rec.workflow:match("([^/]+)$") or rec.workflow)
  return { cassette = M.FORMAT, raymond = raymond.version, workflow = wf,
           name = base:gsub("%.[^.]+$", ""), start = rec.entry, states = state_sums(scope),
           input = opts.resume == nil and opts.input or nil, options = options }
end

-- The cassette writer of `run`, which has --record: a new run replaces
-- the file with its header; a resumed one appends, counting what the file
-- already holds.  Or nil and a message.
function M.attach(run, opts, scope)
  local rec = run.rec
  local path = rec.launch.record
  if path:sub(1, 1) ~= "/" then path = opts.cwd .. "/" .. path end
  rec.launch.record = path
  local w = setmetatable({ path = path, count = {}, attempts = {}, held = {}, steps = {},
                           secrets = M.secrets(raymond.environ()) }, Writer)
  if opts.resume and raymond.stat(path) == "file" then
    local existing, err = M.read(path)
    if not existing then return nil, "--record: " .. err end
    -- A line the killed process left torn is cut off, so that what this
    -- one appends starts on a line of its own.
    local text = raymond.read_file(path) or ""
    if text ~= "" and text:sub(-1) ~= "\n" then
      local ok, werr = raymond.write_atomic(path, text:match("^(.*\n)") or "")
      if not ok then return nil, "--record: cannot write " .. path .. ": " .. tostring(werr) end
    end
    for _, s in ipairs(existing.steps) do
      count_visit(w, s.agent, s.state)
      w.steps[#w.steps + 1] = s
    end
    for _, e in ipairs(existing.exchanges) do
      local k = key(e.agent, e.state, e.visit, e.purpose, 0)
      w.attempts[k] = math.max(w.attempts[k] or 0, e.attempt)
    end
    -- `resume --input TEXT` answers the oldest <ask>: a replay gives the
    -- same answers in the same order.
    if opts.input ~= nil then
      put(w, { ev = "answer", text = opts.input })
    end
    return w
  end
  local line, err = raymond.json_encode(redact_all(header(run, opts, scope), w.secrets))
  if not line then return nil, "--record: cannot encode the cassette header: " .. tostring(err) end
  local ok, werr = raymond.write_atomic(path, line .. "\n")
  if not ok then return nil, "--record: cannot write " .. path .. ": " .. tostring(werr) end
  return w
end

-- The most stream-json one exchange keeps, in bytes: a turn that prints
-- more is recorded up to here and marked cut, so that recording never
-- holds more of a run's output in memory than this.
M.MAX_TURN_BYTES = 64 * 1024 * 1024

-- Collect what the Claude turn `job` prints: returns the function that
-- feeds `feed` (the turn's own reader, or nil) and keeps each line, and
-- the tape it keeps them on.
function Writer:tape(feed)
  local tape = { lines = {}, bytes = 0 }
  return function(line)
    if not tape.cut then
      if tape.bytes + #line > M.MAX_TURN_BYTES then
        tape.cut = true
      else
        tape.lines[#tape.lines + 1] = line
        tape.bytes = tape.bytes + #line
      end
    end
    if feed then return feed(line) end
  end, tape
end

function Writer:visit(agent, state)
  return (self.count[vkey(agent, state)] or 0) + 1
end

local function model_of(argv)
  for i, a in ipairs(argv or {}) do
    if a == "--model" then return argv[i + 1] end
  end
  return nil
end

local function result_cost(lines)
  for i = #lines, 1, -1 do
    if lines[i]:find('"type":"result"', 1, true) or lines[i]:find('"type": "result"', 1, true) then
      local ok, obj = pcall(cjson.decode, lines[i])
      if ok and type(obj) == "table" and type(obj.total_cost_usd) == "number" then return obj.total_cost_usd end
    end
  end
  return nil
end

-- A Claude turn (job.turn) ended with `res` after printing `lines`.  A
-- turn cut short by a stop of the run is not recorded: the resume runs
-- it again, and that is the exchange.
function Writer:exchange(job, res, tape)
  if res.killed and not res.timed_out then return end
  local lines = tape.lines
  local t = job.turn
  local agent = t.agent and t.agent.id or "run"
  local state = t.state or "(run)"
  local visit = self:visit(agent, state)
  local k = key(agent, state, visit, t.purpose, 0)
  local attempt = (self.attempts[k] or 0) + 1
  self.attempts[k] = attempt
  local s = t.session or {}
  local secrets = self.secrets
  if job.env then
    secrets = {}
    for i, x in ipairs(self.secrets) do secrets[i] = x end
    M.secrets(job.env, secrets)
  end
  put(self, { ev = "turn", agent = agent, state = state, visit = visit, attempt = attempt, purpose = t.purpose,
           model = model_of(job.argv), session = { mode = s.mode, id = s.id, from = s.from },
           prompt = t.prompt, lines = lines, exit = res.exit, signal = res.signal, timed_out = res.timed_out == true,
           stderr = res.stderr_tail or "", cost = result_cost(lines), duration = res.duration,
           cut = tape.cut }, secrets)
end

-- As raymond.trace: held until the save that makes the transition durable.
function Writer:transition(agent, from, tr, target)
  self.held[#self.held + 1] = { ev = "step", agent = agent.id, state = from, visit = self:visit(agent.id, from),
                                to = target or "", tag = tr.tag }
  count_visit(self, agent.id, from)
end

function Writer:commit()
  if #self.held == 0 then return end
  local parts = {}
  for i, e in ipairs(self.held) do
    parts[i] = assert(raymond.json_encode(redact_all(e, self.secrets)))
    self.steps[#self.steps + 1] = e
  end
  self.held = {}
  self:write(table.concat(parts, "\n") .. "\n")
end

function Writer:finish(run, code)
  local rec = run.rec
  put(self, { ev = "end", status = rec.status, result = rec.result, error = rec.error, exit = code,
    cost = rec.cost, paths = M.paths(self.steps) })
end

-- ------------------------------------------------------------------ replay

local Replayer = {}
Replayer.__index = Replayer

-- The replay source of a test case whose `replay` names a cassette; or
-- nil and "FILE:LINE: what".
function M.replayer(path)
  local c, err = M.read(path)
  if not c then return nil, err end
  local r = setmetatable({ path = path, by = {}, secrets = M.secrets(raymond.environ()) }, Replayer)
  for _, e in ipairs(c.exchanges) do
    r.by[key(e.agent, e.state, e.visit, e.purpose, e.attempt)] = e
  end
  return r
end

-- The first line where texts `a` (recorded) and `b` (now) differ.
function M.first_diff(a, b)
  local al, bl = {}, {}
  for l in ((a or "") .. "\n"):gmatch("([^\n]*)\n") do al[#al + 1] = l end
  for l in ((b or "") .. "\n"):gmatch("([^\n]*)\n") do bl[#bl + 1] = l end
  for i = 1, math.max(#al, #bl) do
    if al[i] ~= bl[i] then return { line = i, recorded = al[i] or "", now = bl[i] or "" } end
  end
  return nil
end

local function ended(code, stderr, timed_out)
  return { exit = code, duration = 0, timed_out = timed_out == true, killed = false, stdout_tail = "",
           stderr_tail = stderr or "" }
end

-- The recorded tool calls are put to the turn's gate as Claude Code's
-- hook command would put them, so the policy sees them (and a call it
-- now denies is reported), and a gate that watches for calls made past
-- it finds none.
local function gate_lines(line, gate, session, cwd, on_deny)
  if not (gate and line:find("tool_", 1, true)) then return end
  local ok, obj = pcall(cjson.decode, line)
  if not ok or type(obj) ~= "table" or type(obj.message) ~= "table" or type(obj.message.content) ~= "table" then
    return
  end
  local bridge = require("raymond.bridge")
  for _, b in ipairs(obj.message.content) do
    if type(b) == "table" and b.type == "tool_use" and gate.plan.PreToolUse then
      local code, text = bridge.ask(gate, { hook_event_name = "PreToolUse", session_id = session, cwd = cwd,
        tool_name = b.name, tool_input = b.input, tool_use_id = b.id })
      local dok, out = pcall(cjson.decode, text or "")
      local hso = dok and type(out) == "table" and out.hookSpecificOutput or {}
      if code == 2 or hso.permissionDecision == "deny" then
        on_deny(b.name, code == 2 and text or hso.permissionDecisionReason or "denied")
      end
    elseif type(b) == "table" and b.type == "tool_result" and gate.plan.PostToolUse then
      local use = gate.uses[b.tool_use_id]
      if use and not b.is_error then
        bridge.ask(gate, { hook_event_name = "PostToolUse", session_id = session, cwd = cwd, tool_name = use.name,
          tool_input = use.input, tool_use_id = b.tool_use_id, tool_response = b.content })
      end
    end
  end
end

-- One turn of raymond.model `m` played back from the recording.
function Replayer:turn(m, run, job)
  local t = job.turn
  local agent = t.agent or { id = "run" }
  local state = t.state or "(run)"
  local visit = m.trace:visit(agent.id, state)
  local k = key(agent.id, state, visit, t.purpose, 0)
  local attempt = (m.attempts[k] or 0) + 1
  m.attempts[k] = attempt
  local sess = t.session or { id = raymond.uuid() }
  local e = self.by[key(agent.id, state, visit, t.purpose, attempt)]
  local function diverge(what, extra)
    local d = { ev = "diverge", agent = agent.id, state = state, visit = visit, what = what }
    for x, v in pairs(extra or {}) do d[x] = v end
    m.trace:diverge(d)
  end
  if e and e.cut then
    diverge("recording cut", { message = "the recording of this turn was cut at its size limit" })
  end
  if not e then
    local msg = string.format("the recording has no turn for [%s] %s (visit %d%s): the workflow now goes "
      .. "where the recording did not", agent.id, state, visit, attempt > 1 and ", attempt " .. attempt or "")
    if t.purpose == "evaluate" then msg = "raymond.evaluate: " .. msg end
    diverge("no recorded turn", { attempt = attempt, message = msg })
    -- Reported as an API error that is not worth another attempt: every
    -- retry would miss the recording the same way.
    if job.lines then
      job.lines(cjson.encode({ type = "result", subtype = "success", is_error = true, api_error_status = 400,
        result = msg, session_id = sess.id, total_cost_usd = 0 }))
    end
    return ended(1, msg .. "\n")
  end
  local prompt = t.prompt and M.redact(t.prompt, self.secrets)
  if e.prompt ~= nil and prompt ~= nil and prompt ~= e.prompt then
    diverge("prompt changed", { diff = M.first_diff(e.prompt, prompt) })
  end
  local old = type(e.session) == "table" and e.session.id
  local gate, cwd = t.gate, agent.cwd
  for _, line in ipairs(e.lines) do
    if type(old) == "string" and old ~= "" and sess.id and old ~= sess.id then
      line = replace_plain(line, old, sess.id)
    end
    gate_lines(line, gate, sess.id, cwd, function(tool, reason)
      diverge("tool call denied", { tool = tool, reason = reason })
    end)
    if job.lines then job.lines(line) end
    if raymond.stopping() then return { killed = true, duration = 0, stdout_tail = "", stderr_tail = "" } end
  end
  local code = e.exit
  if type(code) ~= "number" then code = 1 end
  return ended(math.tointeger(code) or 1, e.stderr, e.timed_out)
end

return M
