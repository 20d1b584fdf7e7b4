-- raymond.executor: every child process of a run starts here.
--
--   local res = executor.run(run, job)
--
-- Script states, Claude turns, and the hooks' raymond.exec and
-- raymond.evaluate all come through this one function, so what a child
-- gets is decided in one place:
--
--   argv         job.argv as given
--   environment  raymond's own (without CLAUDECODE, see raymond.run)
--                plus job.env
--   directory    job.cwd, else the directory raymond was started in
--   where        job.launcher (raymond.launchers.choose, for a script
--                state or a Claude turn of a state): here when it is
--                nil or local, else on a cluster or another machine
--                (raymond.launchers.spawn, docs/cluster.md); the
--                result then has `launcher`, and `launch_error` when
--                the launch itself failed
--   stdin        job.stdin (a string of any size, written through a
--                pipe), else /dev/null
--   limits       job.timeout seconds without output (0: none); the
--                process group, SIGTERM then SIGKILL on a stop: src/proc.c
--   group        with run.children set, a file there records the child's
--                process group before it starts, and its environment
--                carries the file's name as RAYMOND_PROCESS_GROUP, so a
--                later raymond can stop what a killed one left running
--                (raymond.leftovers)
--   record       a job with a `name` is a step of the run: it is counted
--                in rec.steps and, with the debug record on, what it runs,
--                its output and the job.keep pieces (prompt) are kept
--                under that name (raymond.record)
--
-- What a job is, for whatever stands in for the children (a test's
-- scripted model, raymond.model): job.turn = { agent =, state =, purpose =
-- "state" | "evaluate", prompt =, session = { mode =, id =, from = },
-- gate = the turn's tool gate or nil } on a Claude turn, job.script = {
-- agent =, state = } on a script state.  With run.model set, it is asked
-- first (model:serve(run, job, req)); a result it gives is the child's,
-- and the child never starts.
--
-- With run.cassette set (--record, raymond.cassette), every Claude turn
-- is appended to it as it ends, with the stream-json lines it printed.
--
-- job.hold (raymond.hold(): while held, the child's silence is not
-- inactivity), job.cancel (raymond.canceller(): ends this one child
-- early; by default the agent's, for a join that no longer needs it),
-- job.tags, job.lines, job.lines_max, job.prints and job.capture are
-- passed to raymond.spawn, whose result is returned with `started_at`
-- added, and then the step's record
-- (raymond.record) or nil, for the caller to add the outcome with
-- step:finish{...}.

local raymond = require("raymond")
local launchers = require("raymond.launchers")

local M = {}

local function environment(run, extra)
  local env = {}
  for k, v in pairs(run.environ) do env[k] = v end
  for k, v in pairs(extra or {}) do env[k] = tostring(v) end
  return env
end

function M.run(run, job)
  local req = {
    argv = job.argv, env = environment(run, job.env), cwd = job.cwd or run.cwd,
    timeout = job.timeout, tags = job.tags, lines = job.lines, capture = job.capture,
    input = job.stdin, lines_max = job.lines_max, prints = job.prints, hold = job.hold,
    cancel = job.cancel or (run.cancellers and run.cancellers[coroutine.running()]),
  }
  if run.children then
    local token = raymond.uuid()
    req.env.RAYMOND_PROCESS_GROUP = token
    req.group_file = run.children .. "/" .. token
  end
  local tape
  if run.cassette and job.turn then
    req.lines, tape = run.cassette:tape(req.lines)
    job.lines = req.lines
  end
  local step
  local t0 = raymond.now()
  if job.name then
    run.rec.steps = run.rec.steps + 1
    if run.record then
      local who = job.turn or job.script or {}
      step = run.record:step(run.rec.steps, job.name,
        { argv = req.argv, cwd = req.cwd, started_at = t0, input = job.input,
          agent = who.agent and who.agent.id, state = who.state, turn = job.turn and true or nil,
          purpose = who.purpose })
      for piece, text in pairs(job.keep or {}) do step:put(piece, text) end
      req.record, req.record_step = step.record, step.n
    end
  end
  local res = run.model and run.model:serve(run, job, req) or launchers.spawn(run, job, req)
  res.started_at = t0
  if tape then run.cassette:exchange(job, res, tape) end
  return res, step
end

return M
