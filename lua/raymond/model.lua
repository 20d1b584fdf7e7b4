-- raymond.model: the scripted model of a test case, standing in for the
-- Claude Code CLI at the executor's seam (raymond.executor).
--
--   local m, err = model.open(case_path)   -- in a run under raymond test
--   local res = m:serve(run, job, req)      -- nil: the job runs for real
--
-- `raymond test` (raymond.commands.test) compiles each case of a test
-- file (raymond.testfile) into case_path and starts an ordinary run with
-- RAYMOND_TEST_CASE naming it.  The engine then asks the model before
-- each child starts.  A Claude turn never starts the CLI: the model feeds
-- the turn's reader the stream-json lines the CLI would print (the init
-- line, each tool call and its result, the reply, the result line with
-- the cost and usage), so reading the stream, sessions, retries, usage
-- limits and costs run as they do for real.  A tool call is put to the
-- turn's tool gate exactly as Claude Code's hook command puts it
-- (raymond.bridge.ask), so a policy that denies it is tested offline.  A
-- script state runs for real unless the case stubs it.
--
-- Which reply a turn gets: the case's entries for the state, those whose
-- `when` fits the agent (its id, fork index and variables, the prompt,
-- the model the turn asked for), the visit-th of them (the last repeats); the
-- visit comes from the run's trace (raymond.trace), so a resumed run
-- gets the same replies.  A raymond.evaluate gets the first answer whose
-- `when` fits it (state, visit, agent, prompt), else the n-th answer
-- without one for the run's n-th evaluation.  Inside one visit, attempts take the entry's
-- errors first, then its replies in turn (the last repeats).
--
-- A case with `replay` (a cassette, raymond.cassette) plays each turn's
-- recorded stream-json lines back instead, matched by agent, state,
-- visit, purpose and attempt.
--
-- Sessions the model has started are listed in a file beside the case,
-- so a fresh session id that exists is refused as "already in use" and a
-- resumed id that does not as "No conversation found", as by the CLI.
--
-- A script state's stubs are picked the same way; a run of the script
-- that no stub fits runs it for real.

local raymond = require("raymond")
local bridge = require("raymond.bridge")
local console = require("raymond.console")
local template = require("raymond.template")
local trace = require("raymond.trace")
local cjson = raymond.cjson

local M = {}

local Model = {}
Model.__index = Model

-- The default price of a scripted turn, in dollars.
M.DEFAULT_COST = 0.001

-- `revision`: the revision of the run's state file (raymond.trace).
function M.open(path, revision)
  local text, err = raymond.read_file(path)
  if not text then return nil, "cannot read the test case " .. path .. ": " .. tostring(err) end
  local ok, case = pcall(cjson.decode, text)
  if not ok or type(case) ~= "table" then return nil, "the test case " .. path .. " is not valid JSON" end
  local dir = path:match("^(.*)/[^/]*$") or "."
  local m = setmetatable({ case = case, dir = dir, attempts = {}, sessions = {},
                           sessions_path = dir .. "/sessions" }, Model)
  for id in (raymond.read_file(m.sessions_path) or ""):gmatch("[^\n]+") do m.sessions[id] = true end
  m.trace = trace.open(dir .. "/trace.jsonl", revision)
  -- A case that replays a recording (raymond.cassette) takes its turns
  -- from it instead of scripting them.
  if case.replay then
    local r, rerr = require("raymond.cassette").replayer(case.replay)
    if not r then return nil, rerr end
    m.replay = r
  end
  return m
end

-- --------------------------------------------------------- choosing turns

-- Whether `glob` (with * for any run of characters) matches all of `s`.
function M.glob(glob, s)
  local pat = "^" .. glob:gsub("[%^%$%(%)%%%.%[%]%+%-%?]", "%%%0"):gsub("%*", ".*") .. "$"
  return s:match(pat) ~= nil
end

-- A worker's number among the workers of its fork: the digits its id
-- ends with (main_worker3 -> 3); 0 for main.
local function index_of(agent)
  return tonumber(agent.id:match("(%d+)$")) or 0
end

-- The model a turn asked for: the value of --model in the argv the CLI
-- would have been started with (a state's model:, a hook's choice, the
-- run's --model), or nil for the CLI's default.
function M.model_of(argv)
  for i = 1, #(argv or {}) - 1 do
    if argv[i] == "--model" then return argv[i + 1] end
  end
  return nil
end

-- Whether `when` fits `agent` at this turn: `at` holds the turn's prompt,
-- model, and (for an evaluate answer) state and visit.
local function fits(when, agent, at)
  if not when then return true end
  if when.state and when.state ~= at.state then return false end
  if when.visit and when.visit ~= at.visit then return false end
  if when.agent and not M.glob(when.agent, agent.id) then return false end
  if when.model and not M.glob(when.model, at.model or "") then return false end
  if when.index and when.index ~= index_of(agent) then return false end
  for k, v in pairs(when.vars or {}) do
    if tostring((agent.vars or {})[k]) ~= v then return false end
  end
  if when.prompt and not (at.prompt or ""):find(when.prompt, 1, true) then return false end
  return true
end

local function pick(entries, agent, visit, at)
  local fit = {}
  for _, e in ipairs(entries or {}) do
    if fits(e.when, agent, at or {}) then fit[#fit + 1] = e end
  end
  if #fit == 0 then return nil end
  return fit[math.min(visit, #fit)]
end

-- An evaluate answer: the first entry with a `when` that fits this
-- evaluation, else the n-th of those without one (the n-th evaluation
-- of the run; the last repeats).
local function pick_answer(entries, agent, at, n)
  local plain = {}
  for _, e in ipairs(entries or {}) do
    if e.when then
      if fits(e.when, agent, at) then return e end
    else
      plain[#plain + 1] = e
    end
  end
  if #plain == 0 then return nil end
  return plain[math.min(n, #plain)]
end

-- ------------------------------------------------------------ stream-json

local function usage(entry)
  local t = entry.tokens or {}
  return { input_tokens = t.input or 100, output_tokens = t.output or 20, cache_read_input_tokens = 0,
           cache_creation_input_tokens = 0 }
end

local Stream = {}
Stream.__index = Stream

local function stream(self, job, session, model_name)
  return setmetatable({ job = job, session = session, model = model_name or "claude-test", n = 0,
                        trace = self.trace }, Stream)
end

function Stream:put(obj)
  obj.session_id = self.session
  if self.job.lines then self.job.lines(cjson.encode(obj)) end
end

function Stream:assistant(content, u)
  self.n = self.n + 1
  self:put({ type = "assistant", message = { id = "msg_test_" .. self.n, type = "message", role = "assistant",
    model = self.model, content = content, usage = u } })
end

function Stream:result(fields)
  local r = { type = "result", subtype = "success", is_error = false, duration_ms = 1, num_turns = self.n,
              total_cost_usd = 0, usage = { input_tokens = 0, output_tokens = 0 } }
  for k, v in pairs(fields) do r[k] = v end
  self:put(r)
end

-- The result of a child that printed `stderr` and exited with `code`.
local function ended(code, stderr)
  return { exit = code, duration = 0, timed_out = false, killed = false, stdout_tail = "",
           stderr_tail = stderr or "" }
end

-- The errors a turn can be scripted to meet, as the CLI reports them.
local ERRORS = {
  overloaded = function(s)
    s:result({ is_error = true, api_error_status = 529,
      result = "API Error: 529 Overloaded. This is a server-side issue, usually temporary — try again in a moment." })
    return ended(1)
  end,
  usage_limit = function(s)
    local at = math.floor(raymond.now()) + 1
    s:put({ type = "rate_limit_event", rate_limit_info = { status = "rejected", resetsAt = at,
      rateLimitType = "five_hour" } })
    s:result({ is_error = true, api_error_status = 429, result = "You've hit your session limit · resets soon" })
    return ended(1)
  end,
  crash = function()
    return ended(1, "Error: the Claude Code CLI crashed (a scripted crash of raymond test)\n")
  end,
  auth = function(s)
    s:result({ is_error = true, api_error_status = 401, result = "Invalid API key · Fix external API key" })
    return ended(1)
  end,
}
M.ERRORS = ERRORS

-- ------------------------------------------------------------------ tools

-- One scripted tool call, put to the turn's gate as Claude Code would;
-- returns the tool_result block.
local function tool_call(s, job, i, call, u)
  local id = string.format("toolu_test_%d", i)
  local input = call.input or {}
  s:assistant({ { type = "tool_use", id = id, name = call.tool, input = input } }, u)
  local gate = job.turn.gate
  local base = { session_id = s.session, cwd = job.turn.agent.cwd, tool_name = call.tool, tool_input = input,
                 tool_use_id = id }
  local denied
  if gate and gate.plan.PreToolUse then
    local ev = { hook_event_name = "PreToolUse" }
    for k, v in pairs(base) do ev[k] = v end
    local code, text = bridge.ask(gate, ev)
    if code == 2 then
      denied = text
    else
      local ok, out = pcall(cjson.decode, text)
      local hso = ok and type(out) == "table" and out.hookSpecificOutput or {}
      if hso.permissionDecision == "deny" then denied = hso.permissionDecisionReason or "denied" end
      if type(hso.updatedInput) == "table" then input = hso.updatedInput end
    end
  end
  local block = { type = "tool_result", tool_use_id = id }
  if denied then
    block.is_error, block.content = true, denied
  else
    block.is_error, block.content = call.error == true, call.result or ""
    local post = call.error and "PostToolUseFailure" or "PostToolUse"
    if gate and gate.plan[post] then
      local ev = { hook_event_name = post, tool_response = block.content }
      for k, v in pairs(base) do ev[k] = v end
      ev.tool_input = input
      bridge.ask(gate, ev)
    end
  end
  s:put({ type = "user", message = { role = "user", content = { block } } })
  local t = job.turn
  s.trace:tool(t.agent.id, t.state, call.tool, input, denied)
  return block
end

-- ------------------------------------------------------------------ turns

local function save_session(self, id)
  self.sessions[id] = true
  raymond.append_file(self.sessions_path, id .. "\n")
end

-- The error the CLI gives for session flags that do not fit the
-- sessions it knows, or nil.
local function session_error(self, s, sess)
  if sess.mode == "fresh" or sess.mode == "branch" then
    if self.sessions[sess.id] then
      return ended(1, "Error: Session ID " .. sess.id .. " is already in use.\n")
    end
  end
  local want = sess.mode == "resume" and sess.id or sess.mode == "branch" and sess.from
  if want and not self.sessions[want] then
    s:result({ subtype = "error_during_execution", is_error = true,
               errors = { "No conversation found with session ID: " .. want } })
    return ended(1, "No conversation found with session ID: " .. want .. "\n")
  end
  return nil
end

-- A turn the case has no entry for: an error no attempt can mend, told
-- as the CLI tells an API's refusal (status 400), so the run fails at once
-- with the message.
local function unscripted(s, what)
  s:result({ is_error = true, api_error_status = 400, result = "raymond test: " .. what })
  return ended(1, "raymond test: " .. what .. "\n")
end

function Model:turn(run, job, req)
  if self.replay then return self.replay:turn(self, run, job) end
  local t = job.turn
  local agent = t.agent or { id = "run", vars = {} }
  local state = t.state or "(run)"
  local visit = self.trace:visit(agent.id, state)
  local model_name = M.model_of(req and req.argv)
  local at = { prompt = t.prompt, model = model_name, state = state, visit = visit }
  local entry
  if t.purpose == "evaluate" then
    entry = pick_answer(self.case.evaluate, agent, at, self.trace:evaluate(agent.id, state))
  else
    entry = pick((self.case.model or {})[state], agent, visit, at)
  end
  local sess = t.session or { mode = "fresh", id = raymond.uuid() }
  local s = stream(self, job, sess.id, model_name)
  local serr = session_error(self, s, sess)
  if serr then return serr end
  if not entry then
    return unscripted(s, t.purpose == "evaluate"
      and string.format("the case scripts no raymond.evaluate answer for [%s] %s (visit %d)", agent.id, state, visit)
      or string.format("the case scripts no reply for [%s] %s (visit %d); add it under model: %s", agent.id, state,
        visit, state))
  end
  local k = agent.id .. "\0" .. state .. "\0" .. visit .. "\0" .. t.purpose
  local attempt = (self.attempts[k] or 0) + 1
  self.attempts[k] = attempt
  if sess.mode ~= "resume" then save_session(self, sess.id) end
  s:put({ type = "system", subtype = "init", cwd = agent.cwd, model = s.model, tools = {} })
  if entry.delay and entry.delay > 0 and not raymond.sleep(entry.delay) then
    return { killed = true, duration = 0, stdout_tail = "", stderr_tail = "" }
  end
  local errors = entry.errors or {}
  if attempt <= #errors then return ERRORS[errors[attempt]](s) end
  local u = usage(entry)
  -- What the model read back from its last tool call: the tool's result,
  -- or the reason a policy hook denied the call.  A reply may say it as
  -- {{tool_result}}, so what the policy did shows in the outcome.
  local last = ""
  for i, call in ipairs(entry.tools or {}) do
    last = tool_call(s, job, i, call, u).content
    self.trace:point("[%s] %s tool call %d (%s)", agent.id, state, i, call.tool)
    if raymond.stopping() then return { killed = true, duration = 0, stdout_tail = "", stderr_tail = "" } end
  end
  local replies = entry.reply or { "" }
  local vars = template.vars(run.rec, agent)
  vars.visit, vars.index, vars.model = tostring(visit), tostring(index_of(agent)), model_name or ""
  vars.tool_result = last
  local text = template.render(replies[math.min(attempt - #errors, #replies)], vars)
  s:assistant({ { type = "text", text = text } }, u)
  s:result({ result = text, total_cost_usd = entry.cost or M.DEFAULT_COST, usage = u })
  return ended(0)
end

-- A stubbed script: its scripted output (a template, as a reply is),
-- its tags parsed as the scheduler parses a child's.
function Model:script(run, job, stub, visit)
  local agent = job.script.agent
  local vars = template.vars(run.rec, agent)
  vars.visit, vars.index = tostring(visit), tostring(index_of(agent))
  local out = template.render(stub.stdout or "", vars)
  -- The case came through JSON, where 1 may read back as 1.0.
  local res = ended(math.tointeger(stub.exit) or 0, stub.stderr)
  res.stdout_tail = out
  local tags, printed = raymond.parse_tags(out)
  if tags then
    res.tags = tags
    if printed ~= "" then console.print(printed, job.script.agent.id) end
  else
    res.tag_error = printed
  end
  return res
end

function Model:serve(run, job, req)
  local t, sc = job.turn, job.script
  if not t and not sc then return nil end
  local step = sc or (t.purpose == "state" and t)
  if step then self.trace:start(step.agent.id, step.state, step.agent.workflow) end
  local visit = sc and self.trace:visit(sc.agent.id, sc.state)
  local stub = sc and pick((self.case.scripts or {})[sc.state], sc.agent, visit)
  if sc and not stub then return nil end
  -- A child starts only after the run is saved (the host's flush runs
  -- before queued commands start); a scripted one waits for the same.
  raymond.flush()
  if raymond.stopping() then return { killed = true, duration = 0, stdout_tail = "", stderr_tail = "" } end
  if sc then return self:script(run, job, stub, visit) end
  return self:turn(run, job, req)
end

return M
