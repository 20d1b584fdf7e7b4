-- raymond.run: one run of a workflow, as the engine drives it.
--
-- A Run object is made by raymond.engine for a new run or a resume and
-- passed down to everything that works for it: the state kinds, the
-- executor, the hooks' API.  It holds
--
--   run.rec      the record that is saved (raymond.runstate): agents,
--                options (rec.launch), cost, hook data, status
--   run.scope    where the run's workflow's states live (raymond.scope);
--                an agent in another workflow (raymond.xworkflow) has
--                its own: run:scope_of(agent), run:hooks_of(agent)
--   run.ws       .raymond/ (raymond.workspace)
--   run.store    where saves go (raymond.runstate.store)
--   run.hooks    the loaded hook set (raymond.hooks)
--   run.cwd      the directory raymond was started in
--   run.environ  the environment children start from
--   run.record   the debug record (raymond.record), or nil
--
-- and what is not saved: whether it failed or stopped, and when it began.
-- Its methods are the run-wide acts: emit a hook event and act on the
-- decision, fail, stop, save, log a transition, open and close a Claude
-- turn, finish.
--
-- Turns and the budget.  Every Claude turn (a state's, a reminder, a
-- retry, a hook's raymond.evaluate) is opened before it launches and
-- closed after it ended, however it ended:
--
--   open   PreTurn hooks decide its cap (maxBudgetUsd, which becomes
--          --max-budget-usd), have it wait until a turn in flight ends
--          (waitForTurns), or stop the run; the cap is reserved in
--          rec.open_turns, so turns in parallel see each other's
--          reservations (run.reserved_usd in every event); a turn
--          paused while its tool hooks decide (Run:pause) is never
--          waited for, since those hooks may be what opens this turn
--   close  the reservation is replaced by what the turn cost: the CLI's
--          total_cost_usd, or, when it gave none (killed, crashed, an
--          impossible value), the usage its stream showed; Cost hooks
--          hear of it
--
-- A turn's entry keeps the usage seen so far, saved as it grows, so a
-- turn lost with the process (kill -9) is closed at that usage when the
-- run resumes (close_lost).  So is a turn a hook's raymond.evaluate opened
-- and did not close because the hook call's limit cut it in between (the
-- limit raises at every line until the call unwinds): it is closed when
-- the hook call ends, outside the limit (call_hooks).  run.flight holds
-- the turns this process has in flight, by key, so nothing waits for a
-- turn that no longer has anything running.

local raymond = require("raymond")
local ask = require("raymond.ask")
local bridge = require("raymond.bridge")
local console = require("raymond.console")
local events = require("raymond.events")
local hooks = require("raymond.hooks")
local runstate = require("raymond.runstate")
local transition = require("raymond.transition")
local workspace = require("raymond.workspace")
local xworkflow = require("raymond.xworkflow")

local M = {}

-- The exit status of a run that ended resumably without an error: a
-- hook's stop (the budget, max_visits, loop detection) or a usage limit
-- with --no-wait.  1 is an error, 130 an interrupt; 2 a run paused on a
-- question (raymond.ask).
M.EXIT_STOPPED = 3

local Run = {}
Run.__index = Run

function M.new(fields)
  local run = setmetatable(fields, Run)
  run.t0 = raymond.clock()
  run.warned = {}
  run.emitting = setmetatable({}, { __mode = "k" })
  run.turns_closed = 0
  run.rec.open_turns = run.rec.open_turns or {}
  run.flight = {}
  run.hook_call = setmetatable({}, { __mode = "k" })
  run.looping = 0
  -- The raymond.canceller of each agent's coroutine, for a join that
  -- stops a member early (raymond.join, raymond.executor).
  run.cancellers = setmetatable({}, { __mode = "k" })
  return run
end

function Run:where(agent)
  return string.format("%s (agent %s)",
    console.rel((agent.workflow or self.rec.workflow) .. "/" .. agent.state, self.cwd), agent.id)
end

-- The scope `agent` is in (nil: the run's); or nil and a message.
function Run:scope_of(agent) return xworkflow.scope(self, agent) end

-- The hook set that applies to `agent` (nil: the run's); or nil and a
-- message.
function Run:hooks_of(agent) return xworkflow.hooks(self, agent) end

function Run:resume_hint()
  return "fix the cause, then continue with: raymond --resume " .. self.rec.id
end

-- The event table for hook `name` about `agent` (or the run), with `fields`.
function Run:event(agent, fields)
  local rec = self.rec
  local ev = {
    run_id = rec.id,
    workflow = rec.workflow,
    run = { id = rec.id, data = rec.data, cost_usd = rec.cost or 0, budget_usd = rec.launch.budget,
            max_repeats = rec.launch.max_repeats, agents = #rec.agents },
  }
  ev.run.reserved_usd, ev.run.open_turns, ev.run.paused_turns = self:reserved()
  if agent then
    ev.agent_id = agent.id
    ev.state = agent.state
    ev.agent = { id = agent.id, data = agent.data, state = agent.state, cwd = agent.cwd,
                 depth = #agent.stack, cost_usd = agent.cost or 0,
                 workflow = agent.workflow or rec.workflow, task_folder = agent.task_folder }
  end
  for k, v in pairs(fields or {}) do ev[k] = v end
  return ev
end

-- Call the hooks of `name` with `ev` (raymond.hooks.emit).  The outermost
-- call in a coroutine then closes every turn a raymond.evaluate of its
-- handlers opened and did not close: here no limit runs any more.
function Run:call_hooks(name, ev, accept, set)
  set = set or self.hooks
  local co = coroutine.running()
  if self.hook_call[co] then return hooks.emit(set, name, ev, accept) end
  local call = {}
  self.hook_call[co] = call
  local d, err = hooks.emit(set, name, ev, accept)
  self.hook_call[co] = nil
  local left = false
  for key, f in pairs(self.flight) do
    if f.call == call then self.flight[key], left = nil, true end
  end
  if not left then return d, err end
  local n, usd = self:close_lost()
  if n > 0 then
    console.warn("%d Claude turn(s) of raymond.evaluate in a %s hook were cut before they were closed; "
      .. "counted at the usage they showed: $%.4f", n, name, usd)
  end
  return d, err
end

-- Hooks that can only be told (Error, RunEnd): what they return cannot
-- change the outcome, and a failure of theirs is a warning.
function Run:tell(name, agent, fields)
  local set = self:hooks_of(agent) or self.hooks
  if not hooks.handles(set, name) or not coroutine.isyieldable() then return end
  local d, err = self:call_hooks(name, self:event(agent, fields), nil, set)
  if not d then console.warn("%s", err) end
end

-- RunEnd, once per process.
function Run:run_end(fields)
  if self.run_ended or not self.hooks then return end
  if not coroutine.isyieldable() then return end
  self.run_ended = true
  self:tell("RunEnd", nil, fields)
end

-- Record the run's first fatal error and stop every running state.
function Run:fail(agent, msg, detail, hint)
  if self.failed then return end
  local text = agent and (self:where(agent) .. ": " .. msg) or msg
  self.failed = text
  self.rec.status = "failed"
  self.rec.error = text
  console.error(text, detail, hint or self:resume_hint())
  raymond.mark_dirty()
  raymond.stop()
  -- Hooks hear of it when we are in a coroutine (not in the flush).
  self:tell("Error", agent, { error = text })
  self:run_end({ status = "failed", error = text })
end

-- End the run cleanly before `agent`'s transition applies; --resume runs
-- the state again.  `resume_args`: options the resume command needs
-- (a raised --budget), shown in the hint.
function Run:stop(agent, why, resume_args)
  if self.stopped or self.failed then return end
  self.stopped = why
  self.resume_args = resume_args
  self.rec.status = "stopped"
  self.rec.error = why
  console.say(string.format("raymond: %s%s\n", agent and ("[" .. agent.id .. "] ") or "", why))
  raymond.mark_dirty()
  raymond.stop()
  self:run_end({ status = "stopped", error = why })
end

-- Emit `name`; returns the merged decision, or nil and why when a hook
-- failed (the run then failed) or the run is stopping under it.
-- `accept(file)` chooses the files asked (raymond.hooks.emit).
function Run:emit(name, agent, fields, accept)
  local set, serr = self:hooks_of(agent)
  if not set then
    self:fail(agent, serr, nil, "fix the hook, then continue with: raymond --resume " .. self.rec.id)
    return nil, serr
  end
  if not hooks.handles(set, name) then return {} end
  -- Whose hook this is, for a raymond.evaluate it makes (Run:agent_now).
  local co = coroutine.running()
  local outer = self.emitting[co]
  self.emitting[co] = agent or false
  local d, err = self:call_hooks(name, self:event(agent, fields), accept, set)
  self.emitting[co] = outer
  if self.trace then self.trace:point("[%s] %s hooks called", agent and agent.id or "run", name) end
  if not d then
    -- A hook cut short by a stop has not failed: the run is stopping.
    if not raymond.stopping() then
      self:fail(agent, err, nil, "fix the hook, then continue with: raymond --resume " .. self.rec.id)
    end
    return nil, err
  end
  raymond.mark_dirty() -- handlers may have changed run.data or agent.data
  return d
end

-- A hook's {tag=, target=, ...} goes through the same checks as a tag,
-- in the workflow `agent` is in.
function Run:hook_transition(d, agent)
  local t = d.transition
  local attrs = {}
  for k, v in pairs(t) do
    if k ~= "tag" and k ~= "target" and k ~= "payload" then attrs[k] = tostring(v) end
  end
  local body = (t.tag == "result" or t.tag == "ask") and (t.payload or "") or (t.target or "")
  local tr, err = transition.decide({ { name = t.tag, body = tostring(body), attrs = attrs } },
    self:scope_of(agent) or self.scope)
  if not tr then
    return nil, string.format("hook %s returned an invalid transition: %s", d.by.transition, err)
  end
  return tr
end

-- What one handler's winning decision fields say, in a person's words:
-- "stop: ...", "blocked: ...", "routed A.md -> goto B.md", or the values
-- it set.  `tr` is the transition it routed to, checked.
local function said(fields, from, tr)
  local reason = fields.reason and (": " .. fields.reason) or ""
  if fields.continue == false then
    return "stop: " .. (fields.stopReason or "a hook stopped the run")
  end
  if fields.decision == "block" then return "blocked" .. reason end
  if fields.transition then
    local to = tr and transition.describe(tr)
      or string.format("%s %s", tostring(fields.transition.tag), tostring(fields.transition.target))
    return string.format("routed %s -> %s%s", from or "(run)", to, reason)
  end
  local set = {}
  for k, v in pairs(fields) do
    local f = events.fields[k]
    if f and f.effect == "set" then
      -- A prompt may be long: the line shows how it begins.
      if type(v) == "string" then v = string.format("%q", #v > 40 and v:sub(1, 40) .. "..." or v) end
      -- A list of tool rules shows its entries.
      if type(v) == "table" then
        local parts = {}
        for i, x in ipairs(v) do parts[i] = string.format("%q", tostring(x)) end
        v = "{" .. table.concat(parts, ", ") .. "}"
      end
      set[#set + 1] = string.format("%s = %s", k, tostring(v))
    end
  end
  if #set == 0 then return nil end
  table.sort(set)
  return "set " .. table.concat(set, ", ")
end

-- Show and record what the hooks of `name` decided for `agent`: one line
-- per handler whose fields took effect, naming its file and line.  A
-- transition shows as progress (a stop and a block show in their own
-- messages, which name the handler too); every line goes to the debug
-- record as a "decision" piece.  `seen`, when given, holds the lines of
-- earlier asks of the same question (PreTurn's waitForTurns asks again
-- every 0.2 s): a line already in it is not shown or recorded again.
function Run:decision_lines(name, agent, d, tr, seen)
  local id = agent and agent.id or "run"
  for _, m in ipairs(d.made or {}) do
    local what = said(m.fields, agent and agent.state, tr)
    if what then
      local line = string.format("[%s] %s %s: %s", id, console.rel(m.where, self.cwd), name, what)
      if not (seen and seen[line]) then
        if seen then seen[line] = true end
        if m.fields.transition then console.progress("%s", line) end
        if self.record then self.record:decision(line) end
      end
    end
  end
end

-- Emit `name` and interpret the decision (raymond.events.verdict).
-- Returns a verdict table:
--   { kind = "go", by = ... }              carry on; by names, per field, the
--                                          handler ("file:line") that set it
--   { kind = "block", why = "..." }        refused, with who and why
--   { kind = "transition", transition = tr }
--   { kind = "error", msg = "..." }        an invalid transition
-- or nil when the run stopped or failed (a hook's stop is acted on here).
-- Fields that set values are copied onto `target`; `seen` is for
-- decision_lines.
function Run:decide(name, agent, fields, target, seen)
  local d = self:emit(name, agent, fields)
  if not d then return nil end
  local v = events.verdict(d, target)
  local tr, err
  if v == "transition" then tr, err = self:hook_transition(d, agent) end
  self:decision_lines(name, agent, d, tr, seen)
  if v == "stop" then
    self:stop(agent, string.format("stopped by %s: %s", d.by.continue, d.stopReason or "a hook stopped the run"),
      d.resumeArgs)
    return nil
  end
  if v == "block" then
    return { kind = "block", by = d.by.decision, reason = d.reason,
             why = string.format("%s: %s", d.by.decision, d.reason or "(no reason given)") }
  end
  if v == "transition" then
    if not tr then return { kind = "error", msg = err } end
    tr.via = "hook"
    return { kind = "transition", transition = tr }
  end
  return { kind = "go", by = d.by or {} }
end

-- The PreTransition verdict for `tr`, asked once: a markdown state asks
-- for it itself, so that a block can re-prompt the model, and the engine
-- then finds it here.  Nil when the run stopped or failed.
-- What it sets for the agent (additionalContext) is in verdict.set, for
-- the engine to apply with the transition.
function Run:pre_transition(agent, tr)
  if tr.pre == nil then
    local set = {}
    tr.pre = self:decide("PreTransition", agent, { transition = tr }, set) or false
    if tr.pre then tr.pre.set = set end
  end
  return tr.pre or nil
end

-- The agent whose hook is running in this coroutine, or nil.
function Run:agent_now()
  return self.emitting[coroutine.running()] or nil
end

-- What the open turns hold: dollars reserved, how many there are, and
-- how many of them are paused in a tool hook (Run:pause).
function Run:reserved()
  local usd, n, paused = 0, 0, 0
  for key, t in pairs(self.rec.open_turns) do
    usd, n = usd + t.usd, n + 1
    if self:paused(key) then paused = paused + 1 end
  end
  return usd, n, paused
end

-- Whether turn `key` is paused in its tool hooks: its CLI waits for the
-- hook bridge's answer, so it spends nothing, and it ends only after the
-- hooks have decided.  A turn the hooks open meanwhile (raymond.evaluate)
-- must not wait for it.
function Run:paused(key)
  local f = self.flight[key]
  return f ~= nil and (f.paused or 0) > 0
end

-- Mark turn `key` paused (`by` 1) or going again (-1): tool events of
-- one turn may be decided at the same time.
function Run:pause(key, by)
  local f = self.flight[key]
  if f then f.paused = (f.paused or 0) + by end
end

-- How many open turns may still end and give back what they reserved.
local function running(run)
  local _, open, paused = run:reserved()
  return open - paused
end

-- Drop turn `key`'s reservation and charge what it cost.  Always run through
-- raymond.unlimited, so that the limit of a hook call closing the turn
-- (raymond.evaluate's) cannot cut it in the middle: the turn is either
-- closed and counted, or still open for call_hooks to close.
local function settle(run, agent, key, usd)
  local rec = run.rec
  rec.open_turns[key] = nil
  run.flight[key] = nil
  run.turns_closed = run.turns_closed + 1
  if agent then agent.cost = (agent.cost or 0) + usd end
  rec.cost = (rec.cost or 0) + usd
  raymond.mark_dirty()
end

-- Open turn `key` of `agent` (nil for a hook's evaluation outside any
-- agent); `turn` is the event's turn table, and turn.max_budget_usd a
-- cap already chosen (PreState), which PreTurn may lower.  Returns the
-- turn's entry (entry.usd: its cap, 0 for none), or nil when the run
-- stopped or failed.
function Run:open_turn(agent, key, turn)
  local set, seen = {}, {}
  while true do
    if not self:decide("PreTurn", agent, { turn = turn }, set, seen) then return nil end
    if not set.wait_for_turns or running(self) == 0 then break end
    -- Not now: ask again once a turn in flight has ended, once the turns
    -- open are found to have nothing running, or once every one left is
    -- paused in a tool hook (waiting for it could wait for ever: it may
    -- be paused in the very hook that opens this turn).
    set = {}
    local closed = self.turns_closed
    repeat
      if not raymond.sleep(0.2) then return nil end
    until self.turns_closed ~= closed or self:close_lost() > 0 or running(self) == 0
  end
  local share, own = set.max_budget_usd, turn.max_budget_usd
  local cap = share or own
  if share and own then cap = math.min(share, own) end
  if cap and not (cap > 0 and cap <= 1e6) then
    self:fail(agent, string.format("a hook gave this turn maxBudgetUsd = %.17g; it must be more than 0 "
      .. "and at most 1000000 dollars", cap), nil, "fix the hook, then continue with: raymond --resume " .. self.rec.id)
    return nil
  end
  -- A cap from PreTurn is a share of something larger (the budget): a
  -- turn that reaches it is continued, under a new PreTurn.  PreState's
  -- cap, when it is the lower, is the state's own and ends it.
  local entry = { usd = cap or 0, seen = 0, agent = agent and agent.id, cap = cap,
                  shared = share ~= nil and (own == nil or share < own) }
  -- In flight first: a limit cutting in between leaves no open turn
  -- without its record.
  self.flight[key] = { call = self.hook_call[coroutine.running()] }
  self.rec.open_turns[key] = entry
  raymond.mark_dirty()
  return entry
end

-- The usage a turn's stream has shown so far (saved with the next save).
function Run:saw(entry, usd)
  entry.seen = usd
  raymond.mark_dirty()
end

-- Close turn `key`, which ended with `out` (raymond.claude.outcome):
-- count its cost and tell the Cost hooks.  Not while the run is
-- stopping: how it ends is decided already, and a turn that finished
-- meanwhile is still recorded as it would have been.  Returns false when
-- a Cost hook stopped the run, or one failed.
function Run:close_turn(agent, key, turn, out)
  raymond.unlimited(settle, self, agent, key, out.cost)
  if raymond.stopping() then return true end
  return self:decide("Cost", agent, { turn = turn, cost_usd = out.cost, total_cost_usd = self.rec.cost,
    estimated = out.estimated == true, capped = out.kind == "budget" }) ~= nil
end

-- Turns open with nothing running them (a process that died, a hook call
-- cut between opening and closing one): each is counted at the usage its
-- stream had shown, and its reservation is dropped.  Returns how many and
-- what they cost.
function Run:close_lost()
  local rec, n, usd = self.rec, 0, 0
  local by_id
  for key, t in pairs(rec.open_turns) do
    if not self.flight[key] then
      if not by_id then
        by_id = {}
        for _, a in ipairs(rec.agents) do by_id[a.id] = a end
      end
      local seen = tonumber(t.seen) or 0
      raymond.unlimited(settle, self, by_id[t.agent], key, seen)
      n, usd = n + 1, usd + seen
    end
  end
  return n, usd
end

-- Returns true once the run is durable; on failure reports it and stops.
-- Nothing is saved once the run's lease is lost (raymond.lock_check): the
-- raymond that took it over owns the state file now.
function Run:save(final)
  local owned, lost = true, nil
  if self.ws then owned, lost = raymond.lock_check(workspace.lock_path(self.ws, self.rec.id)) end
  if not owned then
    if not self.failed then
      self.failed = lost
      console.error(lost .. "; the run was not saved here",
        nil, "the run goes on where its lease is held now")
    end
    raymond.stop()
    return false
  end
  -- A test's trace takes its step lines first, marked with the revision
  -- this save writes (raymond.trace says why).
  if self.trace then self.trace:commit((self.rec.revision or 0) + 1) end
  local ok, err = self.store:save(self.rec, final)
  if ok then
    if self.trace then self.trace:saved(final) end
    if self.cassette then self.cassette:commit() end
    return true
  end
  if not self.failed then
    self.failed = "cannot save the run state"
    local id = self.rec.id
    local hint = "the saved state still holds the last completed transition; free the disk or fix "
      .. "permissions, then run: raymond --resume " .. id
    if err:find("cannot encode", 1, true) then
      hint = "a hook stored a value JSON cannot hold in run.data or agent.data; fix the hook, "
        .. "then run: raymond --resume " .. id
    end
    console.error("cannot save the run state: " .. err, nil, hint)
  end
  raymond.stop()
  return false
end

-- The flush the host calls before starting states; it must not raise.
function Run:flush()
  local ok, err = pcall(self.save, self)
  if not ok then self:fail(nil, "cannot save the run state: " .. tostring(err)) end
end

function Run:log_transition(agent, from, text)
  console.progress("[%s] %s -> %s", agent.id, from, text)
  if self.record then self.record:transition(agent.id, from, text) end
end

-- The run ended because its last agent ended.
function Run:complete()
  self.rec.status = "completed"
  raymond.mark_dirty()
  self:run_end({ status = "completed", result = self.rec.result })
end

-- Called after the loop has drained; returns the exit status.
function Run:finish(crashed, signo)
  console.close_view()
  local rec = self.rec
  local elapsed = raymond.clock() - self.t0
  if crashed then
    rec.status = "failed"
    rec.error = rec.error or "internal error"
  elseif signo ~= 0 and rec.status == "running" then
    rec.status = "interrupted"
  elseif rec.status == "running" and not self.failed and ask.pending(rec)[1] then
    -- Every agent left waits for an answer (--on-ask pause).
    rec.status = "asking"
  elseif rec.status == "running" and not self.failed then
    -- No agent is running and none ended the run: the engine lost track.
    rec.status = "failed"
    rec.error = "internal error: agents remain but none is running"
    console.error(rec.error)
  end
  bridge.close(self)
  local saved = self:save(true)
  xworkflow.close(self)
  self.scope:close()
  if self.record then self.record:close() end
  -- The scripts' payload files (raymond.states.script).
  if self.input_dir then raymond.rmtree(self.input_dir) end
  if not saved then return 1 end
  if rec.status == "completed" then
    console.progress("raymond: run %s completed: %d steps in %.2fs", rec.id, rec.steps, elapsed)
    console.result(rec.result)
    return 0
  end
  if rec.status == "stopped" then
    raymond.stderr(string.format("raymond: run %s stopped; continue with: raymond --resume %s%s\n",
      rec.id, rec.id, self.resume_args and (" " .. self.resume_args) or ""))
    return M.EXIT_STOPPED
  end
  if rec.status == "asking" then
    console.say(string.format("raymond: run %s waits for %d answer(s); answer with: raymond --resume %s "
      .. "--input TEXT\n", rec.id, #ask.pending(rec), rec.id))
    raymond.stdout(ask.report(rec))
    return ask.EXIT_ASKING
  end
  if rec.status == "interrupted" then
    console.say(string.format("raymond: run %s interrupted; continue with: raymond --resume %s\n",
      rec.id, rec.id))
    return 130
  end
  return 1
end

return M
