-- raymond.trace: what a run under `raymond test` did, written for the
-- test runner (raymond.commands.test) to read back.
--
--   local tr = trace.open(path, revision)  -- reads what earlier processes wrote
--   tr:start(agent_id, state)             -- a step begins (written at once)
--   tr:visit(agent_id, state)             -- the visit a step of the state is
--   tr:transition(agent, from, tr, to)    -- held until the save that makes it durable
--   tr:commit(revision)                   -- before each save (Run:save)
--   tr:saved()                            -- after it
--   tr:point(fmt, ...)                    -- a kill point (raymond test --chaos)
--   tr:diverge(obj)                       -- a replayed turn left its recording (at once)
--
-- The file holds one JSON object per line:
--
--   {"ev":"start","agent":A,"state":S,"visit":V,"wf":F}   written when the step begins
--   {"ev":"step","agent":A,"state":S,"visit":V,"to":T,"tag":G,"via":W,"rev":R,
--    "next":N,"ret":E,"forks":[...],"wf":F}        the step's transition
--
--   {"ev":"evaluate","agent":A,"state":S,"n":N}      a raymond.evaluate call, held
--                                                  and written with A's next step
--   {"ev":"tool","agent":A,"state":S,"tool":N,"input":I,"denied":R}
--                                                  a scripted tool call and what the
--                                                  tool policy said (R: the reason, or
--                                                  absent when it ran), written at once
--   {"ev":"diverge","agent":A,"state":S,"visit":V,"what":W,...}
--                                                  a replayed turn differs from its
--                                                  recording (raymond.cassette)
--
-- T is the state the agent goes to ("" when it ends), G the tag (or the
-- tag a hook routed to), W "tag" or "hook", R the revision of the run's
-- state file (raymond.runstate) whose save holds the transition; N, E
-- and forks (the workers' states) as the transition has them, and F the
-- absolute path of the agent's workflow when it is another than the
-- run's (a -workflow tag took the agent there), else absent.
--
-- A step line must be in the trace exactly when its transition is in the
-- saved state, whatever instant the process is killed at: the runner
-- reads a run's path from the step lines, a resumed process counts visits
-- from them (so a test's scripted replies, chosen by visit, stay the
-- same), and a start of a step whose step line is already there is a
-- state executed twice.  Neither order of the two writes gives that
-- alone: lines written after the save are lost by a kill in between,
-- though the state holds their transitions; lines written before it
-- would stay for transitions the state never got.  So the held lines are
-- written just before the save, each marked with the revision that save
-- will write, and a process that opens the trace (a resume) is given the
-- revision its state file holds: lines marked with a later one belong to
-- a save that never happened, and are dropped from the file, so the
-- resume writes them again when it makes those transitions itself.
--
-- Kill points (raymond.chaos).  With RAYMOND_TEST_KILL_AT=K in its
-- environment a process counts the points it passes (a step's start, a
-- transition applied, before and after a save's trace lines, after the
-- save, a hook call, a scripted tool call), appending each one's
-- description to points beside the trace, and kills itself with SIGKILL
-- at the K-th, counted across the processes of one run.  K = 0 only
-- counts: the runner's uninterrupted run says how many points there are.
-- The engine drops the variable from its children's environment.

local raymond = require("raymond")
local cjson = raymond.cjson

local M = {}

local Trace = {}
Trace.__index = Trace

local function key(agent, state) return agent .. "\0" .. state end

-- Lines are appended whole with one write each (raymond.append_file), so
-- a kill leaves none torn but the last, which reading skips.
function M.read(path)
  local text = raymond.read_file(path) or ""
  local out = {}
  for line in text:gmatch("[^\n]+") do
    local ok, obj = pcall(cjson.decode, line)
    if ok and type(obj) == "table" then out[#out + 1] = obj end
  end
  return out
end

-- The trace at `path`; `revision` is the revision of the state file the
-- process starts from (nil: none saved yet).  Step lines of a later save
-- are dropped from the file (see the top).
function M.open(path, revision)
  local t = setmetatable({ path = path, held = {}, count = {}, workflow = {}, evaluations = 0,
                         evals_held = {} }, Trace)
  local kept, dropped = {}, false
  for _, e in ipairs(M.read(path)) do
    if (e.ev == "step" or e.ev == "evaluate") and (tonumber(e.rev) or 0) > (revision or 0) then
      dropped = true
    else
      kept[#kept + 1] = e
      if e.ev == "evaluate" then t.evaluations = t.evaluations + 1 end
      if e.ev == "step" then
        local k = key(e.agent, e.state)
        t.count[k] = (t.count[k] or 0) + 1
      end
    end
  end
  if dropped then
    local lines = {}
    for i, e in ipairs(kept) do lines[i] = cjson.encode(e) .. "\n" end
    local ok, err = raymond.write_atomic(path, table.concat(lines))
    if not ok then error("cannot write the test trace " .. path .. ": " .. tostring(err)) end
  end
  local at = tonumber(os.getenv("RAYMOND_TEST_KILL_AT") or "")
  if at then
    t.kill_at, t.points_path = math.tointeger(at) or 0, (path:match("^(.*)/[^/]*$") or ".") .. "/points"
    t.points = select(2, (raymond.read_file(t.points_path) or ""):gsub("\n", ""))
  end
  return t
end

local function put(t, obj)
  local ok, err = raymond.append_file(t.path, cjson.encode(obj) .. "\n")
  if not ok then error("cannot write the test trace " .. t.path .. ": " .. tostring(err)) end
end

-- A kill point, described by string.format(fmt, ...): counted, listed in
-- the points file, and the process killed when it is the K-th (see the
-- top).  Nothing, not even the description, without RAYMOND_TEST_KILL_AT.
function Trace:point(fmt, ...)
  if not self.kill_at then return end
  self.points = self.points + 1
  local what = string.format(fmt, ...)
  raymond.append_file(self.points_path, string.format("%d %s\n", self.points, raymond.printable(what)))
  if self.points ~= self.kill_at then return end
  local pid = tonumber((raymond.realpath("/proc/self") or ""):match("(%d+)$"))
  local me = pid and raymond.process(pid)
  if not (me and raymond.signal(pid, me.start, "KILL")) then
    error("raymond test --chaos: cannot kill the run at point " .. self.points)
  end
  -- Not reached: a SIGKILL a process sends itself is taken on the way
  -- back from the system call.
end

-- Which visit of `state` by `agent` a step starting now is: one more than
-- those that ended with a transition (saved, or held for the next save).
function Trace:visit(agent, state)
  return (self.count[key(agent, state)] or 0) + 1
end

-- `workflow`: the agent's workflow when it is not the run's own (a
-- -workflow tag took it there), which the step lines then name too.
function Trace:start(agent, state, workflow)
  local visit = self:visit(agent, state)
  self.workflow[agent] = workflow or false
  put(self, { ev = "start", agent = agent, state = state, visit = visit, wf = workflow })
  self:point("[%s] %s (visit %d) started", agent, state, visit)
end

-- A raymond.evaluate call by `agent`: its number in the run, counted
-- from 1.  The line is held with the agent's step, so a step run again
-- after a kill numbers its evaluations as the killed one did.
function Trace:evaluate(agent, state)
  self.evaluations = self.evaluations + 1
  local list = self.evals_held[agent] or {}
  self.evals_held[agent] = list
  list[#list + 1] = { ev = "evaluate", agent = agent, state = state, n = self.evaluations }
  return self.evaluations
end

function Trace:tool(agent, state, tool, input, denied)
  put(self, { ev = "tool", agent = agent, state = state, tool = tool, input = input, denied = denied })
end

-- `tr` is the transition the engine applied to `agent`, which left `from`.
function Trace:transition(agent, from, tr, target)
  local k = key(agent.id, from)
  for _, x in ipairs(self.evals_held[agent.id] or {}) do self.held[#self.held + 1] = x end
  self.evals_held[agent.id] = nil
  local e = { ev = "step", agent = agent.id, state = from, visit = self:visit(agent.id, from),
    tag = tr.tag, to = target or "", via = tr.via or "tag", next = tr.next, ret = tr.ret,
    wf = self.workflow[agent.id] or nil }
  if tr.forks then
    e.forks = {}
    for i, f in ipairs(tr.forks) do e.forks[i] = f.target end
  end
  self.held[#self.held + 1] = e
  self.count[k] = (self.count[k] or 0) + 1
  self:point("[%s] %s -> %s applied, not saved", agent.id, from, tr.tag)
end

-- Written at once, as a start is: the runner reports a divergence even
-- of a run that was killed after it.
function Trace:diverge(obj)
  obj.ev = "diverge"
  put(self, obj)
end


local function steps(held)
  local parts = {}
  for i, e in ipairs(held) do parts[i] = string.format("[%s] %s -> %s", e.agent, e.state, e.tag) end
  return table.concat(parts, ", ")
end

-- Before the save that writes `revision`: the held step lines, marked
-- with it (see the top).
function Trace:commit(revision)
  if #self.held == 0 then return end
  -- Described only for the points file.
  local what = self.kill_at and steps(self.held) or ""
  self:point("before the trace of %s", what)
  local lines = {}
  for i, e in ipairs(self.held) do
    e.rev = revision
    lines[i] = cjson.encode(e)
  end
  self.held = {}
  local ok, err = raymond.append_file(self.path, table.concat(lines, "\n") .. "\n")
  if not ok then error("cannot write the test trace " .. self.path .. ": " .. tostring(err)) end
  self.committed = what
  self:point("between the trace and the save of %s", what)
end

-- After a save: a kill point when it held transitions, but not after
-- the process's last save (`final`), which leaves nothing to resume.
function Trace:saved(final)
  local what = self.committed
  self.committed = nil
  if what and not final then self:point("after the save of %s", what) end
end

return M
