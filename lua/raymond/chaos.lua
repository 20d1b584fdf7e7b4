-- raymond.chaos: `raymond test --chaos N`, which checks that a workflow
-- resumes after a kill -9 at any point as if nothing had happened.
--
--   local r = chaos.trials(ctx, case, got, runner)
--   -- after the case's uninterrupted run passed (its outcome `got`);
--   -- r.fails: the failure messages ({} when every trial held), and
--   -- r.kills, r.resumed, r.seconds for chaos.summary(r)
--
-- The uninterrupted run counts the kill points it passes (raymond.trace
-- lists them: each step's start, each transition applied, each save
-- with the trace lines before and after it, each hook call, each
-- scripted tool call), so the points file of its folder says how many
-- there are.  Each trial runs the case again in a fresh folder with
-- RAYMOND_TEST_KILL_AT=K, so that the engine kills itself with SIGKILL
-- at its K-th point, and then `raymond resume test` (the same
-- environment and folder, without the kill) until the run is over, the
-- case's answers given as the runner gives them.  The K of the N trials
-- are spread over the whole run: 1..count cut in N equal parts, one
-- point drawn in each by a generator seeded with --chaos-seed (printed
-- when not given) and the case's name, so a seed replays the same kills.
--
-- A trial holds when its outcome is the uninterrupted one's: the same
-- exit status, status and result, the same path for every agent, the
-- same content of the files the case's expect.files names, and no step
-- executed twice: a start of a step (agent, state, visit) after the
-- trace holds that step's saved transition.  A step started again
-- before its transition was saved is the documented at-least-once
-- window of an interrupted step (docs/protocol.md), and allowed; but a
-- file that then differs (a script that appends, run twice) is
-- reported, naming the state that ran twice, because that is the
-- workflow's own non-idempotence, which the user wants to learn.

local raymond = require("raymond")
local expect = require("raymond.expect")
local runstate = require("raymond.runstate")

local M = {}

-- The variable that gives the child its kill point (raymond.trace).
M.ENV = "RAYMOND_TEST_KILL_AT"

-- How many times one trial resumes at most: a resume is never killed,
-- so more means something else goes wrong.
M.MAX_RESUMES = 20

local SIGKILL = 9

-- ------------------------------------------------------------ kill points

-- FNV-1a: the case's share of the seed, the same on every machine.
function M.hash(s)
  local h = -3750763034362895579 -- 0xcbf29ce484222325
  for i = 1, #s do h = (h ~ s:byte(i)) * 1099511628211 end
  return h
end

-- A generator of whole numbers (xorshift64*): rand(n) is in 1..n.
function M.random(seed, salt)
  local x = seed ~ M.hash(salt or "")
  if x == 0 then x = 88172645463325252 end
  return function(n)
    x = x ~ (x >> 12)
    x = x ~ (x << 25)
    x = x ~ (x >> 27)
    return ((x * 2685821657736338717) >> 1) % n + 1
  end
end

-- A seed from the clock, for a run that gives none.
function M.seed()
  return math.floor(raymond.now() * 1000) % 2147483647
end

-- The kill points of `n` trials among `count` points: one drawn in each
-- of n equal parts of 1..count, in order.
function M.points(count, n, rand)
  local out = {}
  if count <= 0 then return out end
  for i = 1, n do
    local lo = (i - 1) * count // n + 1
    local hi = math.max(lo, i * count // n)
    out[i] = lo + rand(hi - lo + 1) - 1
  end
  return out
end

-- The descriptions of the points a run passed, in order.
function M.read_points(dir)
  local out = {}
  for line in (raymond.read_file(dir .. "/.raymond/test/points") or ""):gmatch("[^\n]+") do
    out[#out + 1] = line:match("^%d+ (.*)$") or line
  end
  return out
end

-- ------------------------------------------------------------ the checks

local function key(e) return string.format("%s\0%s\0%s", e.agent, e.state, tostring(e.visit)) end

local function step_name(e)
  return string.format("[%s] %s (visit %s)", e.agent, e.state, tostring(e.visit))
end

-- Steps started again after the trace held their saved transition: each
-- a state executed twice.
function M.twice(events)
  local saved, out = {}, {}
  for _, e in ipairs(events) do
    if e.ev == "step" then
      saved[key(e)] = true
    elseif e.ev == "start" and saved[key(e)] then
      out[#out + 1] = e
    end
  end
  return out
end

-- Steps started more than once before their transition was saved: the
-- at-least-once window, a step interrupted and run again by the resume.
function M.rerun(events)
  local starts, saved, out = {}, {}, {}
  for _, e in ipairs(events) do
    local k = key(e)
    if e.ev == "step" then
      saved[k] = true
    elseif e.ev == "start" and not saved[k] then
      starts[k] = (starts[k] or 0) + 1
      if starts[k] == 2 then out[#out + 1] = e end
    end
  end
  return out
end

local function shown(v)
  if v == nil or v == false then return "nothing" end
  v = tostring(v)
  return (string.format("%q", #v > 200 and v:sub(1, 200) .. "..." or v):gsub("\\\n", "\\n"))
end

-- What a trial is compared on: expect.outcome's (the trace included),
-- and the files the case's expect.files names.
function M.outcome(dir, got, files)
  got.files = {}
  for _, f in ipairs(files or {}) do got.files[f.path] = raymond.read_file(dir .. "/" .. f.path) or false end
  return got
end

-- The differences of trial outcome `got` from the uninterrupted `base`,
-- as failure lines.
function M.compare(base, got, files)
  local out = {}
  local function add(fmt, ...) out[#out + 1] = string.format(fmt, ...) end
  if got.exit ~= base.exit then add("exit status: %s uninterrupted, %s after the kill", tostring(base.exit), tostring(got.exit)) end
  if got.status ~= base.status then add("status: %s uninterrupted, %s after the kill", tostring(base.status), tostring(got.status)) end
  if got.result ~= base.result then add("result: %s uninterrupted, %s after the kill", shown(base.result), shown(got.result)) end
  local agents, seen = {}, {}
  for _, list in ipairs({ base.order, got.order }) do
    for _, id in ipairs(list) do
      if not seen[id] then
        seen[id] = true
        agents[#agents + 1] = id
      end
    end
  end
  for _, id in ipairs(agents) do
    local want, have = base.paths[id] or {}, got.paths[id] or {}
    if table.concat(want, " ") ~= table.concat(have, " ") then
      add("path of %s:\n  uninterrupted:  %s\n  after the kill: %s", id, table.concat(want, " "),
        #have == 0 and "(no state ran)" or table.concat(have, " "))
    end
  end
  for _, e in ipairs(M.twice(got.events)) do
    add("%s ran again after its transition was saved: a state executed twice", step_name(e))
  end
  local rerun = M.rerun(got.events)
  for _, f in ipairs(files or {}) do
    if got.files[f.path] ~= base.files[f.path] then
      add("file %s: %s uninterrupted, %s after the kill", f.path, shown(base.files[f.path]), shown(got.files[f.path]))
      for _, e in ipairs(rerun) do
        add("  %s ran twice: the kill came before its transition was saved, so the resume ran it again"
          .. " (the at-least-once window of a step);"
          .. " make it idempotent", e.state)
      end
    end
  end
  return out
end

-- ------------------------------------------------------------ the trials

local function saved(dir)
  return runstate.load(dir .. "/.raymond/state/test.json")
end

-- How many asks of the run in `dir` were answered.
local function answered(dir)
  local rec = saved(dir)
  return rec and #(rec.resolved_inputs or {}) or 0
end

-- Statuses after which there is nothing to resume.
local OVER = { completed = true, failed = true, stopped = true }

-- Runs the case once with its kill at point `k`, then resumes until the
-- run is over; returns the job (its folder, output, kills, resumes) and
-- the last raymond's result.
local function trial(ctx, c, runner, k)
  local dir, err = runner.sandbox(c)
  if not dir then return nil, err end
  local job = { dir = dir, env = runner.environment(dir, c), cancel = raymond.canceller(), stdout = "",
                stderr = "", deadline = raymond.now() + c.timeout, kills = 0, resumes = 0 }
  job.env[M.ENV] = tostring(k)
  ctx.running[job] = true
  local exe = raymond.exe_path()
  local res = runner.child(job, runner.argv)
  while not job.timed_out and not res.spawn_error and job.resumes < M.MAX_RESUMES do
    if res.signal == SIGKILL then
      job.kills = job.kills + 1
      job.env[M.ENV] = nil
      local rec = saved(dir)
      -- Killed after the save that ended the run, there is nothing to
      -- resume, and the exit status was the kill's: the rest is compared.
      if rec and OVER[rec.status] then
        job.over = true
        break
      end
      job.resumes = job.resumes + 1
      -- Killed before its first save, the run is not there to resume:
      -- it is started again, as its user would.
      res = runner.child(job, rec and { exe, "resume", "test" } or runner.argv)
    elseif res.exit == 2 then
      local n = answered(dir) + 1
      if n > #c.answers then break end
      res = runner.child(job, { exe, "resume", "test", "--input", c.answers[n] })
    else
      break
    end
  end
  ctx.running[job] = nil
  return job, res
end

-- The N trials of case `c`, whose uninterrupted run (in runner.dir)
-- gave `got`.
function M.trials(ctx, c, got, runner)
  local files = c.expect and c.expect.files
  local base = M.outcome(runner.dir, got, files)
  local descr = M.read_points(runner.dir)
  local r = { fails = {}, kills = 0, resumed = 0, trials = 0, seconds = 0 }
  local twice = M.twice(base.events)
  if #twice > 0 then
    r.fails[1] = string.format("the uninterrupted run already started %s again after its transition was saved",
      step_name(twice[1]))
    return r
  end
  local ks = M.points(#descr, ctx.chaos, M.random(ctx.seed, c.name))
  local bad = {}
  local next_i, busy = 0, 0
  local function worker()
    busy = busy + 1
    while next_i < #ks do
      next_i = next_i + 1
      local k = ks[next_i]
      local t1 = raymond.clock()
      local job, res = trial(ctx, c, runner, k)
      r.trials, r.seconds = r.trials + 1, r.seconds + (raymond.clock() - t1)
      local fails
      if not job then
        fails = { "cannot make the case's folder: " .. tostring(res) }
      elseif job.timed_out then
        fails = { string.format("timed out after %g s (the case's timeout)", c.timeout) }
      elseif res.spawn_error then
        fails = { "cannot run raymond: " .. res.spawn_error }
      else
        r.kills = r.kills + job.kills
        local have = M.outcome(job.dir, expect.outcome(job.dir, res.exit or (128 + (res.signal or 0)), job.stdout),
          files)
        if job.over then have.exit = base.exit end
        fails = M.compare(base, have, files)
        if #fails == 0 and job.kills > 0 and not job.over then r.resumed = r.resumed + 1 end
      end
      if #fails > 0 then
        bad[#bad + 1] = { k = k, fails = fails, job = job }
      elseif job then
        raymond.rmtree(job.dir)
      end
    end
    busy = busy - 1
  end
  for _ = 1, math.max(1, math.min(ctx.jobs or 1, #ks)) do raymond.go(worker) end
  while busy > 0 or next_i < #ks do
    if not raymond.sleep(0.01) then break end
  end
  r.seconds = r.seconds / math.max(1, r.trials)
  if #bad > 0 then
    table.sort(bad, function(a, b) return a.k < b.k end)
    local b = bad[1]
    local lines = { string.format("chaos: %d of %d kills changed the outcome; the first: killed at point %d of %d (%s)",
      #bad, #ks, b.k, #descr, descr[b.k] or "?") }
    for _, f in ipairs(b.fails) do lines[#lines + 1] = f end
    lines[#lines + 1] = string.format("replay: raymond test --chaos %d --chaos-seed %d --filter %q", ctx.chaos,
      ctx.seed, c.name)
    if b.job and ctx.keep then lines[#lines + 1] = "the killed run's folder: " .. b.job.dir end
    r.stderr = b.job and b.job.stderr
    for i = 2, #bad do
      if bad[i].job and not ctx.keep then raymond.rmtree(bad[i].job.dir) end
    end
    if b.job and not ctx.keep then raymond.rmtree(b.job.dir) end
    r.fails = { table.concat(lines, "\n") }
  end
  return r
end

-- The tail of an ok line: "chaos: 20 kills, 20 resumed, 12 ms avg".
function M.summary(r)
  return string.format("chaos: %d kills, %d resumed, %d ms avg", r.kills, r.resumed,
    math.floor(r.seconds * 1000 + 0.5))
end

return M
