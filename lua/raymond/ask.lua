-- raymond.ask: <ask>, a person in the loop.
--
-- An agent that prints <ask next="N" timeout="48h" timeout_next="L">Q</ask>
-- waits for a person's answer, its session and stack kept: its record gets
-- status "asking" and an `ask` table
--
--   { id = "ask_<agent>_<unix-ns>", prompt = Q, next = N, timeout = "48h",
--     timeout_next = L, deadline = epoch seconds, asked_at = epoch seconds }
--
-- and its loop ends.  The answer moves it to N with the answer as its
-- input ({{input}}, $RAYMOND_INPUT) and {{ask_id}} set for that state;
-- once the deadline has passed it goes to L instead, its input unset, or,
-- without timeout_next, the run fails naming the agent and the ask.
-- Either way the ask is added to the run's `resolved_inputs`.
--
-- What a run does when an agent asks is its launch option on_ask
-- (--on-ask): "reject" (the default) refuses a workflow that can ask at
-- launch (M.refusal) and fails an agent that asks anyway; "pause" lets
-- the other agents go on, and once none runs any more the process saves
-- the run as "asking" and exits with status 2, printing M.report on
-- stdout.  `raymond resume ID --input TEXT` answers the oldest pending
-- ask, `raymond answer ID ASK_ID TEXT` the one named (M.settle), and both
-- continue the run.  "prompt" asks on the terminal when stdin is one
-- (M.prompt), the other agents going on meanwhile, and is "pause"
-- otherwise and after the end of input.  While other agents run, or a
-- person is asked, M.watch enforces the deadlines.

local raymond = require("raymond")
local text = require("raymond.text")

local M = {}

M.MODES = { "reject", "pause", "prompt" }

-- The exit status of a run that waits for answers (raymond.run's 3 is a
-- stop, 1 an error, 130 an interrupt).
M.EXIT_ASKING = 2

-- How often a process with agents at work and asks pending looks at the
-- deadlines and whether the other agents are done.
M.POLL = 0.05

local UNITS = { s = 1, m = 60, h = 3600, d = 86400 }

-- The longest timeout: a year, which no review waits for on purpose.
M.MAX_SECONDS = 366 * 86400

-- Seconds of a timeout written as a whole number and one unit (30s, 15m,
-- 48h, 2d); or nil and why not.
function M.duration(s)
  local n, unit = tostring(s):match("^(%d+)([smhd])$")
  if not n then
    return nil, string.format("'%s' is not a duration: write a whole number and a unit s, m, h or d, "
      .. "e.g. 30s, 15m, 48h, 2d", tostring(s))
  end
  local secs = tonumber(n) * UNITS[unit]
  if secs <= 0 then return nil, "a timeout must be more than 0" end
  if secs > M.MAX_SECONDS then return nil, string.format("'%s' is more than 366 days", s) end
  return secs
end

-- The tag entry's check (raymond.tags): timeout_next needs a timeout.
function M.check(tr)
  if tr.timeout_next and not tr.timeout then
    return "timeout_next needs timeout=\"DURATION\", which says when it is taken"
  end
  return nil
end

-- The agent asks; `tr` is the decided <ask>, `now` epoch seconds.
function M.open(agent, tr, now)
  local secs = tr.timeout and M.duration(tr.timeout)
  agent.status = "asking"
  agent.ask = {
    id = string.format("ask_%s_%d", agent.id, math.floor(now * 1e6) * 1000),
    prompt = text.trim(tr.payload or ""), next = tr.next, timeout = tr.timeout,
    timeout_next = tr.timeout_next, deadline = secs and (now + secs), asked_at = now,
  }
end

-- The asking agents of record `rec`, oldest ask first.
function M.pending(rec)
  local list = {}
  for _, a in ipairs(rec.agents) do
    if a.status == "asking" then list[#list + 1] = a end
  end
  table.sort(list, function(x, y)
    if x.ask.asked_at ~= y.ask.asked_at then return x.ask.asked_at < y.ask.asked_at end
    return x.id < y.id
  end)
  return list
end

function M.expired(agent, now)
  local d = agent.ask.deadline
  return d ~= nil and now >= d
end

local function resolved(rec, agent, now, fields)
  local a = agent.ask
  local entry = { ask_id = a.id, agent_id = agent.id, prompt = a.prompt, next_state = a.next,
                  entered_at = a.asked_at, resolved_at = now }
  for k, v in pairs(fields) do entry[k] = v end
  rec.resolved_inputs = rec.resolved_inputs or {}
  rec.resolved_inputs[#rec.resolved_inputs + 1] = entry
  agent.ask_id = a.id
  agent.status, agent.ask = nil, nil
end

-- Answer `agent`'s ask with `answer`: it goes on at next.
function M.answer(rec, agent, answer, now)
  local next_state = agent.ask.next
  resolved(rec, agent, now, { response_text = answer })
  agent.state, agent.input = next_state, answer
end

-- The deadline of `agent`'s ask passed: it goes on at timeout_next.
-- False when the ask has none.
function M.time_out(rec, agent, now)
  local to = agent.ask.timeout_next
  if not to then return false end
  resolved(rec, agent, now, { timed_out = true })
  agent.state, agent.input = to, nil
  return true
end

-- What an expired ask without timeout_next fails with: message, hint.
function M.expired_error(rec, agent)
  local a = agent.ask
  return string.format("ask %s timed out: no answer within %s, and its <ask> has no timeout_next",
      a.id, a.timeout),
    string.format("answer it late with: raymond answer %s %s \"TEXT\"", rec.id, a.id)
end

local function list_pending(rec)
  local ids = {}
  for i, a in ipairs(M.pending(rec)) do ids[i] = a.ask.id .. " (agent " .. a.id .. ")" end
  return table.concat(ids, ", ")
end

-- Before a resume: answer the ask `opts` names (opts.ask_id with
-- opts.input: raymond answer; opts.input alone: the oldest pending), and
-- send every other ask whose deadline has passed to its timeout_next.
-- Nothing changes unless all of it can be done; returns true, or nil and
-- an error table { msg =, hint = }.
function M.settle(rec, opts, now)
  local pending = M.pending(rec)
  local target
  if opts.ask_id then
    for _, a in ipairs(pending) do
      if a.ask.id == opts.ask_id then target = a end
    end
    if not target then
      return nil, { msg = string.format("run %s has no pending ask %s", rec.id, opts.ask_id),
        hint = #pending > 0 and ("pending: " .. list_pending(rec))
          or "it waits for no answer; continue it with: raymond resume " .. rec.id }
    end
    if M.expired(target, now) and target.ask.timeout_next then
      return nil, { msg = string.format("run %s: ask %s timed out at %s; its agent goes on at %s instead",
          rec.id, opts.ask_id, require("raymond.runstate").iso(target.ask.deadline), target.ask.timeout_next),
        hint = "continue the run with: raymond resume " .. rec.id }
    end
  elseif opts.input ~= nil then
    for _, a in ipairs(pending) do
      if not (M.expired(a, now) and a.ask.timeout_next) then target = target or a end
    end
    if not target then
      return nil, { msg = string.format("run %s has no pending ask for --input to answer", rec.id),
        hint = #pending > 0 and ("the asks left have timed out: " .. list_pending(rec)
          .. "; continue with: raymond resume " .. rec.id)
          or "continue it with: raymond resume " .. rec.id }
    end
  end
  for _, a in ipairs(pending) do
    if a ~= target and M.expired(a, now) and not a.ask.timeout_next then
      local msg, hint = M.expired_error(rec, a)
      return nil, { msg = string.format("run %s: agent %s: %s", rec.id, a.id, msg), hint = hint }
    end
  end
  if target then M.answer(rec, target, opts.input, now) end
  for _, a in ipairs(pending) do
    if a ~= target and M.expired(a, now) then M.time_out(rec, a, now) end
  end
  return true
end

-- Watch the deadlines of the pending asks while other agents run;
-- `restart(agent)` starts the loop of an agent whose ask timed out.  It
-- ends once no agent runs (the process then pauses the run) or no ask has
-- a deadline.
function M.watch(run, restart)
  if run.ask_watch then return end
  run.ask_watch = true
  raymond.go(function()
    -- The first look waits one turn of the event loop, for the agent
    -- that asked to leave its loop.
    local wait = 0
    while raymond.sleep(wait) do
      local now, soonest = raymond.now(), nil
      for _, a in ipairs(M.pending(run.rec)) do
        if M.expired(a, now) then
          local from = a.state
          local id = a.ask.id
          if not M.time_out(run.rec, a, now) then
            local msg, hint = M.expired_error(run.rec, a)
            run:fail(a, msg, nil, hint)
            break
          end
          raymond.mark_dirty()
          run:log_transition(a, from, string.format("ask %s timed out; going on at %s", id, a.state))
          restart(a)
        elseif a.ask.deadline then
          soonest = math.min(soonest or math.huge, a.ask.deadline)
        end
      end
      if not soonest or (run.looping == 0 and not run.ask_prompt) then break end
      wait = math.min(soonest - now, M.POLL)
    end
    run.ask_watch = nil
  end)
end

-- --on-ask prompt: ask the oldest pending question on the terminal and
-- read the answer a line at a time (raymond.read_line), while the other
-- agents go on; `restart(agent)` starts the loop of the agent answered.
-- Without a terminal on stdin nothing is asked here: the run pauses as
-- with "pause".  At the end of input (Ctrl-D) the questions left wait for
-- raymond resume ID --input TEXT.
function M.prompt(run, restart)
  if run.ask_prompt or run.ask_eof or not raymond.isatty("stdin") then return end
  run.ask_prompt = true
  local console = require("raymond.console")
  -- The live view redraws below the cursor, where the answer is typed.
  console.close_view()
  raymond.go(function()
    local shown
    while not raymond.stopping() do
      local a = M.pending(run.rec)[1]
      if not a then break end
      if shown ~= a.ask.id then
        if shown then console.say(string.format("raymond: ask %s is no longer waiting\n", shown)) end
        shown = a.ask.id
        console.say(string.format("\n[%s] asks (%s): %s\nanswer> ", a.id, a.ask.id, a.ask.prompt))
      end
      local line = raymond.read_line(4 * M.POLL)
      if line == nil then
        run.ask_eof = true
        console.say("\nraymond: end of input: the questions left wait for raymond resume "
          .. run.rec.id .. " --input TEXT\n")
        break
      elseif line and a.status == "asking" and a.ask.id == shown then
        local from = a.state
        M.answer(run.rec, a, line, raymond.now())
        raymond.mark_dirty()
        run:log_transition(a, from, string.format("ask %s answered; going on at %s", shown, a.state))
        restart(a)
        shown = nil
      end
    end
    run.ask_prompt = nil
  end)
end

-- What an agent's ask shows on the console when it is made.
function M.announce(run, agent)
  local a = agent.ask
  local console = require("raymond.console")
  console.progress("[%s] asks (%s)%s: %s", agent.id, a.id,
    a.deadline and string.format(", timeout %s", a.timeout) or "", a.prompt)
end

-- ------------------------------------------------------------------ report

local function basename(path) return (path:match("([^/]+)/*$") or path) end

local function q(v) return raymond.json_encode(v) end

-- The JSON a paused run prints on stdout, as the original's (its keys
-- first), with every pending ask in "pending".
function M.report(rec)
  local pending = M.pending(rec)
  local first = pending[1]
  local lines = {
    "{",
    '  "status": "asking",',
    '  "run_id": ' .. q(rec.id) .. ",",
    '  "workflow": ' .. q(basename(rec.workflow)) .. ",",
    '  "asking": {',
    '    "ask_id": ' .. q(first.ask.id) .. ",",
    '    "agent_id": ' .. q(first.id) .. ",",
    '    "prompt": ' .. q(first.ask.prompt),
    "  },",
    '  "pending_count": ' .. #pending .. ",",
    '  "resume": ' .. q(string.format('raymond --resume %s --input "[your response]"', rec.id)) .. ",",
    '  "answer": ' .. q(string.format('raymond answer %s ASK_ID "[your response]"', rec.id)) .. ",",
    '  "pending": [',
  }
  for i, a in ipairs(pending) do
    local deadline = a.ask.deadline and (",\n      \"deadline\": " .. q(require("raymond.runstate").iso(a.ask.deadline))) or ""
    lines[#lines + 1] = string.format('    {\n      "ask_id": %s,\n      "agent_id": %s,\n      "prompt": %s%s\n    }%s',
      q(a.ask.id), q(a.id), q(a.ask.prompt), deadline, i < #pending and "," or "")
  end
  lines[#lines + 1] = "  ]"
  lines[#lines + 1] = "}"
  return table.concat(lines, "\n") .. "\n"
end

-- ------------------------------------------------------------------ launch

-- The places the static model `wf` (raymond.analyse) shows an <ask>: a
-- tag written in a state, or an allowed_transitions entry, in `wf` and in
-- every workflow its -workflow tags lead to, as the original follows
-- them: a question asked inside a called workflow stops the run just the
-- same.  Each workflow is read once (`seen`, by path).  A list of
-- { file =, line = }.
function M.declared(wf, seen)
  seen = seen or {}
  seen[wf.path] = true
  local found, others = {}, {}
  for _, st in ipairs(wf.states) do
    local asked = false
    for _, e in ipairs(st.edges) do
      if e.tag == "ask" and not asked then
        found[#found + 1] = { file = wf.path .. "/" .. st.name, line = e.line }
        asked = true
      elseif e.workflow and not seen[e.workflow] then
        seen[e.workflow] = true
        others[#others + 1] = e.workflow
      end
    end
  end
  local analyse = require("raymond.analyse")
  for _, path in ipairs(others) do
    -- A workflow that cannot be read is the run's to report, when a tag
    -- leads there.
    local other = analyse.load(path, "/")
    if other then
      for _, f in ipairs(M.declared(other, seen)) do found[#found + 1] = f end
      analyse.close(other)
    end
  end
  return found
end

-- The error a launch under --on-ask reject gives a workflow that can
-- ask, or nil.  `wf` is the static model, `shown` the workflow as the
-- user named it.
function M.refusal(wf, shown, rel)
  local found = M.declared(wf)
  if #found == 0 then return nil end
  local where = {}
  for i, f in ipairs(found) do
    where[i] = string.format("%s:%d", rel(f.file), f.line)
  end
  return {
    msg = string.format("workflow '%s' declares <ask> transitions in state(s): %s; this run takes no "
      .. "questions (--on-ask reject, the default)", shown, table.concat(where, ", ")),
    hint = "use --on-ask=pause: at a question the run is saved and raymond exits with status 2, "
      .. "to be answered with raymond --resume ID --input TEXT",
  }
end

return M
