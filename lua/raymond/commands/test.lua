-- raymond.commands.test: `raymond test [PATH...]`: run a workflow's test
-- cases offline, with a scripted model (docs/testing.md).
--
-- Each case runs as an ordinary run of the workflow, by a raymond of its
-- own, in a fresh folder: the same engine, hooks and scripts as a real
-- run, with raymond.model standing in for the Claude Code CLI.  The
-- cases run in parallel (--jobs); each ends as one line, a failing one
-- followed by what differed.  A case that outlives its timeout is ended
-- and says where its agents were.
--
--   find test files -> testfile.load -> for each case, in a worker:
--     sandbox (files, case.json) -> raymond run ... (RAYMOND_TEST_CASE)
--     [-> raymond resume --input ANSWER while it asks] -> expect.check
--     [-> with --chaos N, raymond.chaos: N more runs, each killed and resumed]
--   [--coverage: raymond.coverage over each workflow's traces]

local raymond = require("raymond")
local console = require("raymond.console")
local expect = require("raymond.expect")
local analyse = require("raymond.analyse")
local chaos = require("raymond.chaos")
local coverage = require("raymond.coverage")
local testfile = require("raymond.testfile")
local trace = require("raymond.trace")
local cjson = raymond.cjson

local M = {}

M.usage = { "raymond test [PATH...] [--filter TEXT] [--junit FILE] [--jobs N] [--keep]",
            "raymond test --replay CASSETTE [WORKFLOW] [--junit FILE] [--keep]",
            "raymond test [PATH...] --coverage [--coverage-min PERCENT]",
            "raymond test [PATH...] --chaos N [--chaos-seed SEED]" }

M.args = { { key = "paths", name = "PATH...", optional = true, rest = true } }

M.options = {
  { name = "filter", key = "filter", arg = "TEXT", text = 200,
    help = "run only the cases whose name holds TEXT" },
  { name = "junit", key = "junit", arg = "FILE",
    help = "also write the results as JUnit XML to FILE, for CI" },
  { name = "jobs", key = "jobs", arg = "N", number = 256, whole = true,
    help = "run N cases at once (default: the number of processors)" },
  { name = "replay", key = "replay", arg = "CASSETTE",
    help = "play back a run recorded with raymond run --record,\noffline, and say where the workflow now parts from it\n(WORKFLOW: the one to play it against; default: the one\nrecorded)" },
  { name = "keep", key = "keep",
    help = "keep each case's folder (its files, .raymond/ state and\ntrace) and say where it is" },
  { name = "coverage", key = "coverage",
    help = "after the cases, show per workflow which states ran and\nwhich transitions were taken, and list the others" },
  { name = "coverage-min", key = "coverage_min", arg = "PERCENT", number = 100,
    help = "fail (exit 1) when a workflow's transitions taken are\nbelow PERCENT (implies --coverage)" },
  { name = "chaos", key = "chaos", arg = "N", number = 10000, whole = true,
    help = "after each case, run it N times more, killing the engine\nwith SIGKILL at a point of the run and resuming: the\noutcome must be the same and no step run twice" },
  { name = "chaos-seed", key = "chaos_seed", arg = "SEED", number = 2 ^ 31, whole = true,
    help = "the seed of the kill points (--chaos prints the one it\nused; give it to replay a failure)" },
}

M.flags = { { "test options", "filter", "junit", "jobs", "replay", "keep" },
            { "coverage and chaos", "coverage", "coverage-min", "chaos", "chaos-seed" } }

M.help = [[
Runs the test cases of workflows offline: each PATH is a test file
(NAME.test.yaml) or a folder searched for them (default: the current
folder).  A test file sits in a workflow's tests/ folder (or names its
workflow with workflow:) and lists cases: the input and options, what the
model replies in each state and visit (tags, tool calls, costs, errors),
script states to stub, and what must happen (the path of states, the
result, the exit status, files, cost, hook data).  Each case runs as a
real run would, in a folder of its own, with a scripted model instead of
the Claude Code CLI: no network, no API key, no cost.  Script states run
for real unless the case stubs them.  docs/testing.md shows how.

With --replay, the one case is a run recorded with raymond run --record,
played back offline: each Claude turn gets the recorded reply, and the
case fails where the workflow now parts from the recording (a prompt
changed, another transition, another result).

--coverage prints, per workflow, the states its cases ran and the
transitions they took (tags written in each state, allowed_transitions,
the default hooks' routes) with a percentage, and lists each transition
never taken as FILE:LINE  FROM -> tag TARGET; --coverage-min PERCENT also
fails below it.  --chaos N runs each passing case N times more, the engine
killed with SIGKILL at a point of the run and resumed: the outcome must be
the same (exit status, status, result, each agent's path, the files the
case names) and no step may run again once its transition was saved.

exit status: 0 every case passed, 1 a case failed, a test file has an
error or a workflow is below --coverage-min]]

-- Folders never searched for test files.
local SKIP = { [".raymond"] = true, [".git"] = true, node_modules = true }

local function find(path, out)
  local kind = raymond.stat(path)
  if kind == "file" then
    out[#out + 1] = path
  elseif kind == "dir" then
    for _, name in ipairs(raymond.listdir(path) or {}) do
      local p = path == "." and name or (path .. "/" .. name)
      local k = raymond.stat(p)
      if k == "dir" and not SKIP[name] then
        find(p, out)
      elseif k == "file" and name:match("%.test%.ya?ml$") then
        out[#out + 1] = p
      end
    end
  end
end

local function processors()
  local n = 0
  for line in (raymond.read_file("/proc/cpuinfo") or ""):gmatch("[^\n]+") do
    if line:match("^processor%s*:") then n = n + 1 end
  end
  return math.max(n, 1)
end

-- ------------------------------------------------------------------ one case

local function write(path, body)
  local dir = path:match("^(.*)/[^/]*$")
  if dir then
    local ok, err = raymond.mkdir_p(dir)
    if not ok then return nil, err end
  end
  return raymond.write_atomic(path, body)
end

-- A fresh folder for case `c`, holding its files and the compiled case.
local function sandbox(c)
  local dir, err = raymond.mkdtemp("raymond-test-")
  if not dir then return nil, err end
  local ok, werr = raymond.mkdir_p(dir .. "/.raymond/test")
  if not ok then return nil, werr end
  ok, werr = write(dir .. "/.raymond/test/case.json", raymond.json_encode(c.case))
  if not ok then return nil, werr end
  for p, body in pairs(c.files) do
    ok, werr = write(dir .. "/" .. p, body)
    if not ok then return nil, p .. ": " .. werr end
  end
  return dir
end

local function environment(dir, c)
  local env = raymond.environ()
  env.RAYMOND_TEST_CASE = dir .. "/.raymond/test/case.json"
  env.RAYMOND_RETRY_DELAY = "0"
  env.RAYMOND_LIMIT_MARGIN = "0"
  env.CLAUDECODE = nil
  for k, v in pairs(c.env) do env[k] = v end
  return env
end

local function argv_of(tf, c)
  local wf = tf.workflow_path
  if c.start then wf = wf .. "/" .. c.start end
  local argv = { raymond.exe_path(), "run", wf, "--workflow-id", "test", "--no-debug" }
  if c.input then argv[#argv + 1] = "--input" argv[#argv + 1] = c.input end
  table.move(c.args, 1, #c.args, #argv + 1, argv)
  return argv
end

-- Where the agents were when a case was ended: their last step that
-- began and never ended with a saved transition.
local function whereabouts(dir)
  local open, order = {}, {}
  for _, e in ipairs(trace.read(dir .. "/.raymond/test/trace.jsonl")) do
    if e.ev == "start" then
      if not open[e.agent] then order[#order + 1] = e.agent end
      open[e.agent] = e
    elseif e.ev == "step" and open[e.agent] and open[e.agent].state == e.state then
      open[e.agent] = false
    end
  end
  local parts = {}
  for _, id in ipairs(order) do
    local e = open[id]
    if e then parts[#parts + 1] = string.format("%s in %s (visit %d)", id, e.state, e.visit) end
  end
  return #parts > 0 and table.concat(parts, ", ") or "no state running"
end

-- Run one raymond for the case and return spawn's result; its output is
-- added to the job's.  The watchdog cancels it when the case's time runs
-- out (job.timed_out).
local function child(job, argv)
  local res = raymond.spawn({ argv = argv, env = job.env, cwd = job.dir, capture = true, cancel = job.cancel })
  job.stdout = job.stdout .. (res.stdout or "")
  job.stderr = job.stderr .. (res.stderr or "")
  return res
end

local function run_case(ctx, tf, c)
  local t0 = raymond.clock()
  local out = { file = tf, case = c, fails = {} }
  local dir, err = sandbox(c)
  if not dir then
    out.fails[1] = "cannot make the case's folder: " .. tostring(err)
    return out
  end
  out.dir = dir
  local job = { dir = dir, env = environment(dir, c), cancel = raymond.canceller(), stdout = "", stderr = "",
                deadline = raymond.now() + c.timeout }
  -- Under --chaos the uninterrupted run counts the kill points it passes.
  if ctx.chaos then job.env[chaos.ENV] = "0" end
  ctx.running[job] = true
  local res = child(job, argv_of(tf, c))
  local answers = 0
  while res.exit == 2 and answers < #c.answers and not job.timed_out do
    answers = answers + 1
    res = child(job, { raymond.exe_path(), "resume", "test", "--input", c.answers[answers] })
  end
  ctx.running[job] = nil
  out.seconds = raymond.clock() - t0
  out.stderr = job.stderr
  if job.timed_out then
    out.fails[1] = string.format("timed out after %g s (the case's timeout); %s", c.timeout, whereabouts(dir))
  elseif res.spawn_error then
    out.fails[1] = "cannot run raymond: " .. res.spawn_error
  else
    local got = expect.outcome(dir, res.exit or (128 + (res.signal or 0)), job.stdout)
    out.events = got.events
    out.fails = c.judge and c.judge(got) or expect.check(c.expect, got, dir)
    if ctx.chaos and #out.fails == 0 then
      out.chaos = chaos.trials(ctx, c, got, { dir = dir, argv = argv_of(tf, c), sandbox = sandbox,
        environment = environment, child = child })
      out.fails, out.stderr = out.chaos.fails, out.chaos.stderr or out.stderr
    end
  end
  -- A case that timed out still counts the steps it took.
  if ctx.coverage and not out.events then out.events = trace.read(dir .. "/.raymond/test/trace.jsonl") end
  return out
end

-- ------------------------------------------------------------------ output

local function ms(s) return string.format("%d ms", math.floor((s or 0) * 1000 + 0.5)) end

local function report(ctx, r)
  local name = string.format("%s:%d: %s", r.file.shown, r.case.line, r.case.name)
  if #r.fails == 0 then
    ctx.passed = ctx.passed + 1
    raymond.stdout(string.format("ok   %s (%s)\n", name, r.chaos and chaos.summary(r.chaos) or ms(r.seconds)))
  else
    ctx.failed = ctx.failed + 1
    local lines = { string.format("FAIL %s (%s)", name, ms(r.seconds)) }
    for _, f in ipairs(r.fails) do
      for line in f:gmatch("[^\n]+") do lines[#lines + 1] = "     " .. line end
    end
    local tail = console.tail(r.stderr, 8)
    if tail ~= "" then
      lines[#lines + 1] = "     the run said:"
      for line in tail:gmatch("[^\n]+") do lines[#lines + 1] = "       " .. raymond.printable(line) end
    end
    raymond.stdout(table.concat(lines, "\n") .. "\n")
  end
  if r.dir and ctx.keep then
    raymond.stdout(string.format("     kept in %s\n", r.dir))
  elseif r.dir then
    raymond.rmtree(r.dir)
  end
end

local function xml(s)
  return (tostring(s):gsub("[&<>\"]", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;", ['"'] = "&quot;" })
    :gsub("[%z\1-\8\11\12\14-\31]", "?"))
end

-- The results as JUnit XML: one testsuite per test file.
function M.junit(results)
  local by_file, files = {}, {}
  for _, r in ipairs(results) do
    local f = r.file.shown
    if not by_file[f] then
      by_file[f] = {}
      files[#files + 1] = f
    end
    table.insert(by_file[f], r)
  end
  local out = { '<?xml version="1.0" encoding="UTF-8"?>', "<testsuites>" }
  for _, f in ipairs(files) do
    local fails, secs = 0, 0
    for _, r in ipairs(by_file[f]) do
      if #r.fails > 0 then fails = fails + 1 end
      secs = secs + (r.seconds or 0)
    end
    out[#out + 1] = string.format('  <testsuite name="%s" tests="%d" failures="%d" time="%.3f">', xml(f),
      #by_file[f], fails, secs)
    for _, r in ipairs(by_file[f]) do
      local head = string.format('    <testcase classname="%s" name="%s" time="%.3f"', xml(f), xml(r.case.name),
        r.seconds or 0)
      if #r.fails == 0 then
        out[#out + 1] = head .. "/>"
      else
        out[#out + 1] = head .. ">"
        out[#out + 1] = string.format('      <failure message="%s">%s</failure>', xml(r.fails[1]:match("[^\n]*")),
          xml(table.concat(r.fails, "\n")))
        out[#out + 1] = "    </testcase>"
      end
    end
    out[#out + 1] = "  </testsuite>"
  end
  out[#out + 1] = "</testsuites>"
  return table.concat(out, "\n") .. "\n"
end

-- ------------------------------------------------------------------ replay

-- What the trace says of a replayed turn that left its recording.
local function num(v) return tostring(math.tointeger(v) or v) end

local function divergence(e)
  local line = string.format("[%s] %s (visit %s): %s", tostring(e.agent), tostring(e.state), num(e.visit),
    tostring(e.what))
  local d = type(e.diff) == "table" and e.diff
  if d then
    line = line .. string.format(" at line %s: recorded %s, now %s", num(d.line),
      raymond.json_encode(d.recorded or ""), raymond.json_encode(d.now or ""))
  elseif e.reason or e.message then
    line = line .. ": " .. tostring(e.reason or e.message)
  end
  return line
end

-- A replay of a cassette as one case: it fails where the run now parts
-- from the recording (a prompt, a transition, the result, the exit status).
local function replay_file(opts)
  local cassette = require("raymond.cassette")
  local case, outcome = cassette.case(opts.replay, opts.paths and opts.paths[1])
  if not case then return nil, outcome end
  local c = { name = "replay of " .. case.name, line = 1, input = case.input, start = case.start,
              args = cassette.args(case.options), options = case.options, env = {}, files = {},
              answers = case.answers or {}, timeout = testfile.DEFAULT_TIMEOUT, case = case }
  -- Recorded answers come back through resume --input, so the run must pause.
  if #c.answers > 0 and not case.options.on_ask then
    table.move({ "--on-ask", "pause" }, 1, 2, #c.args + 1, c.args)
  end
  function c.judge(got)
    local fails = {}
    for _, e in ipairs(got.events) do
      if e.ev == "diverge" then fails[#fails + 1] = divergence(e) end
    end
    local steps = cassette.paths(got.events)
    for _, line in ipairs(cassette.compare(outcome, steps, got.result)) do fails[#fails + 1] = line end
    if outcome.exit and outcome.exit ~= got.exit then
      fails[#fails + 1] = string.format("exit status: recorded %s, now %s", tostring(outcome.exit), tostring(got.exit))
    end
    if #fails > 0 and #outcome.changed > 0 then
      fails[#fails + 1] = "changed since the recording: " .. table.concat(outcome.changed, ", ")
        .. " (record the run again once the change is meant)"
    end
    return fails
  end
  -- The static model, for --coverage of the replayed run.
  return { shown = opts.replay, workflow_path = case.workflow, cases = { c },
           workflow = analyse.load(case.workflow, opts.cwd) or nil }
end

-- ------------------------------------------------------------------ coverage

-- Prints the coverage of each workflow tested (raymond.coverage), from
-- the traces of all its cases; returns how many are below --coverage-min.
function M.coverage(files, results, opts)
  local order, by_path = {}, {}
  for _, tf in ipairs(files) do
    local path = tf.workflow and tf.workflow.path
    if path and not by_path[path] then
      by_path[path] = { wf = tf.workflow, events = {} }
      order[#order + 1] = path
    end
  end
  for _, r in ipairs(results) do
    local g = by_path[r.file.workflow and r.file.workflow.path or ""] or { events = {} }
    table.move(r.events or {}, 1, #(r.events or {}), #g.events + 1, g.events)
  end
  local low = 0
  for _, path in ipairs(order) do
    local g = by_path[path]
    local cov = coverage.compute(g.wf, g.events)
    raymond.stdout(coverage.report(console.rel(path, opts.cwd), cov, g.wf, opts.cwd))
    if opts.coverage_min and cov.percent < opts.coverage_min then low = low + 1 end
  end
  return low
end

-- ------------------------------------------------------------------ main

-- Ends the children of cases past their deadline, until none is left.
local function watchdog(ctx)
  while ctx.left > 0 do
    local now = raymond.now()
    for job in pairs(ctx.running) do
      if not job.timed_out and now > job.deadline then
        job.timed_out = true
        job.cancel:cancel()
      end
    end
    if not raymond.sleep(0.05) then return end
  end
end

local function load_files(opts)
  local paths = {}
  for _, p in ipairs(#(opts.paths or {}) > 0 and opts.paths or { "." }) do
    if not raymond.stat(p:sub(1, 1) == "/" and p or (opts.cwd .. "/" .. p)) then
      console.error(string.format("%s: no such file or folder", p), nil, "give a test file (NAME.test.yaml) or a folder")
      return nil
    end
    find(p, paths)
  end
  local files, bad = {}, 0
  for _, p in ipairs(paths) do
    local tf, err = testfile.load(p, opts.cwd)
    if tf then files[#files + 1] = tf else
      bad = bad + 1
      console.error(err)
    end
  end
  return files, bad, #paths
end

function M.main(opts)
  if opts.chaos_seed and not (opts.chaos and opts.chaos > 0) then
    console.error("--chaos-seed chooses the kill points of --chaos N, which is not given", nil,
      "add --chaos N (the number of kills per case)")
    return 1
  end
  local files, bad, found
  if opts.replay then
    if #(opts.paths or {}) > 1 then
      console.error("--replay takes one WORKFLOW at most", nil, "raymond test --replay CASSETTE [WORKFLOW]")
      return 1
    end
    local tf, err = replay_file(opts)
    if not tf then
      console.error(err, nil, "record a run with: raymond run WORKFLOW --record FILE")
      return 1
    end
    files, bad, found = { tf }, 0, 1
  else
    files, bad, found = load_files(opts)
  end
  if not files then return 1 end
  if found == 0 then
    console.error("no test files found (NAME.test.yaml)", nil, "put them in a workflow's tests/ folder; see docs/testing.md")
    return 1
  end
  local queue = {}
  for _, tf in ipairs(files) do
    for _, c in ipairs(tf.cases) do
      if not opts.filter or c.name:find(opts.filter, 1, true) then queue[#queue + 1] = { tf = tf, c = c } end
    end
  end
  -- A filter that matches nothing would pass a CI job that tests nothing.
  if opts.filter and #queue == 0 then
    console.error(string.format("no case's name holds '%s'", opts.filter), nil, "run without --filter to see every case's name")
    return 1
  end
  local ctx = { passed = 0, failed = 0, running = {}, left = #queue, keep = opts.keep, results = {},
                coverage = opts.coverage or opts.coverage_min ~= nil, chaos = opts.chaos and opts.chaos > 0 and opts.chaos }
  if ctx.chaos then
    ctx.seed = opts.chaos_seed or chaos.seed()
    raymond.stdout(string.format("chaos: %d kills per case, seed %d (--chaos-seed %d kills at the same points)\n",
      ctx.chaos, ctx.seed, ctx.seed))
  end
  local t0 = raymond.clock()
  local jobs = opts.jobs or processors()
  ctx.jobs = jobs
  raymond.set_max_parallel(jobs)
  local next_i = 0
  local function worker()
    while next_i < #queue do
      next_i = next_i + 1
      local q = queue[next_i]
      local r = run_case(ctx, q.tf, q.c)
      ctx.results[#ctx.results + 1] = r
      report(ctx, r)
      ctx.left = ctx.left - 1
    end
  end
  for _ = 1, math.min(jobs, #queue) do raymond.go(worker) end
  watchdog(ctx)
  if raymond.stopping() then return 130 end
  local low = ctx.coverage and M.coverage(files, ctx.results, opts) or 0
  for _, tf in ipairs(files) do
    if tf.workflow then analyse.close(tf.workflow) end
  end
  if opts.junit then
    local ok, err = raymond.write_atomic(opts.junit, M.junit(ctx.results))
    if not ok then console.error("cannot write " .. opts.junit .. ": " .. tostring(err)) bad = bad + 1 end
  end
  raymond.stdout(string.format("%d passed, %d failed%s (%.2f s)\n", ctx.passed, ctx.failed,
    bad > 0 and string.format(", %d test file(s) with errors", bad) or "", raymond.clock() - t0))
  if low > 0 then
    raymond.stdout(string.format("%d workflow(s) below --coverage-min %g%%\n", low, opts.coverage_min))
  end
  return (ctx.failed > 0 or bad > 0 or low > 0) and 1 or 0
end

return M
