-- raymond.trace: what a run under `raymond test` did, written for the
-- test runner (raymond.commands.test) to read back.
--
--   local tr = trace.open(path)           -- reads what earlier processes wrote
--   tr:start(agent_id, state)             -- a step begins (written at once)
--   tr:visit(agent_id, state)             -- the visit a step of the state is
--   tr:transition(agent, from, tr, via)   -- held until the save that makes it durable
--   tr:commit()                           -- after each save (Run:flush)
--   tr:diverge(obj)                       -- a replayed turn left its recording (at once)
--
-- The file holds one JSON object per line:
--
--   {"ev":"start","agent":A,"state":S,"visit":V}   written when the step begins
--   {"ev":"step","agent":A,"state":S,"visit":V,"to":T,"tag":G,"via":W}
--                                                  the step's transition, once saved
--
-- A step line is written only after the save that holds its transition,
-- so a process killed at any instant leaves exactly the steps a resume
-- will not run again: the runner reads a run's path from them, and a
-- start of a step whose step line is already there is a state executed
-- twice.  Visits are counted from the step lines, so a resumed process
-- numbers them as the killed one did, and a test's scripted replies,
-- chosen by visit, stay the same.
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
-- tag a hook routed to), W "tag" or "hook".

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

function M.open(path)
  local t = setmetatable({ path = path, held = {}, count = {}, evaluations = 0, evals_held = {} }, Trace)
  for _, e in ipairs(M.read(path)) do
    if e.ev == "evaluate" then t.evaluations = t.evaluations + 1 end
    if e.ev == "step" then
      local k = key(e.agent, e.state)
      t.count[k] = (t.count[k] or 0) + 1
    end
  end
  return t
end

local function put(t, obj)
  local ok, err = raymond.append_file(t.path, cjson.encode(obj) .. "\n")
  if not ok then error("cannot write the test trace " .. t.path .. ": " .. tostring(err)) end
end

-- Which visit of `state` by `agent` a step starting now is: one more than
-- those that ended with a transition (saved, or held for the next save).
function Trace:visit(agent, state)
  return (self.count[key(agent, state)] or 0) + 1
end

function Trace:start(agent, state)
  put(self, { ev = "start", agent = agent, state = state, visit = self:visit(agent, state) })
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
  for _, e in ipairs(self.evals_held[agent.id] or {}) do self.held[#self.held + 1] = e end
  self.evals_held[agent.id] = nil
  self.held[#self.held + 1] = { ev = "step", agent = agent.id, state = from, visit = self:visit(agent.id, from),
    tag = tr.tag, to = target or "", via = tr.via or "tag", next = tr.next }
  self.count[k] = (self.count[k] or 0) + 1
end

-- Written at once, as a start is: the runner reports a divergence even
-- of a run that was killed after it.
function Trace:diverge(obj)
  obj.ev = "diverge"
  put(self, obj)
end

function Trace:commit()
  if #self.held == 0 then return end
  local lines = {}
  for i, e in ipairs(self.held) do lines[i] = cjson.encode(e) end
  self.held = {}
  local ok, err = raymond.append_file(self.path, table.concat(lines, "\n") .. "\n")
  if not ok then error("cannot write the test trace " .. self.path .. ": " .. tostring(err)) end
end

return M
