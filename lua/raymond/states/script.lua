-- raymond.states.script: a state that is a bash script.
--
-- run(run, agent) lets hooks see the state (PreState), runs the script
-- through the executor with the agent's input and variables in its
-- environment, lets hooks see the output (PostState), and decides the
-- transition from the tags it printed.  See raymond.states for outcomes.
-- Where the script runs is its launcher's say (raymond.launchers): a YAML
-- state's launcher:, else the header block of the script, else the
-- agent's or the run's.

local raymond = require("raymond")
local console = require("raymond.console")
local executor = require("raymond.executor")
local join = require("raymond.join")
local launchers = require("raymond.launchers")
local states = require("raymond.states")
local transition = require("raymond.transition")

local M = {}

local STDERR_LINES = 10

-- Linux refuses to start a program when one environment string ("K=V"
-- and its NUL) is longer than this (MAX_ARG_STRLEN, 32 pages).
M.ENV_STRING_MAX = 131072
M.INPUT_ENV_MAX = M.ENV_STRING_MAX - #"RAYMOND_RESULT=" - 1

-- What a script sees besides raymond's own environment.
local function script_env(run, agent, file)
  local env = {}
  for k, v in pairs(agent.vars) do env[k] = v end
  env.RAYMOND_WORKFLOW_ID = run.rec.id
  env.RAYMOND_AGENT_ID = agent.id
  env.RAYMOND_TASK_FOLDER = agent.task_folder
  env.RAYMOND_STATE_DIR = run:scope_of(agent).dir
  env.RAYMOND_STATE_FILE = file
  if agent.input then
    env.RAYMOND_INPUT = agent.input
    env.RAYMOND_RESULT = agent.input
  end
  return env
end

-- A hook's verdict as an outcome, or nil to carry on.
local function hook_outcome(v, blocked)
  if not v then return states.STOPPED end
  if v.kind == "transition" then return states.transition(v.transition) end
  if v.kind == "error" then return states.error(v.msg) end
  if v.kind == "block" then return states.error(blocked .. v.why) end
  return nil
end

-- The inactivity limit of `agent`'s state: its own (a YAML state's
-- timeout:), with where that is written, or the run's --timeout.
local function timeout(run, agent)
  local own, where
  local scope = run:scope_of(agent)
  if scope.timeout_of then own, where = scope:timeout_of(agent.state) end
  if own then return own, where end
  return run.rec.launch.timeout
end

-- The launcher of `agent`'s state, whose script is `file`; or nil and
-- an error outcome.  A script names its own in a header block (YAML
-- frontmatter in comment lines after the shebang), which only the first
-- few KiB of the file can hold.
M.HEADER_MAX = 8192
local function launcher(run, agent, file)
  local scope = run:scope_of(agent)
  local own = scope.launcher_of and scope:launcher_of(agent.state)
  -- The engine names the state's file; a YAML state's line is added.
  local at = scope.label and (console.rel(scope:label(agent.state), run.cwd) .. ": ") or ""
  if own == nil then
    local err
    own, err = launchers.script_header(raymond.read_range(file, 0, M.HEADER_MAX) or "")
    if err then
      return nil, states.error(at .. err, nil, "fix the script's header, then: raymond --resume " .. run.rec.id)
    end
  end
  local l, lerr = launchers.choose(run, agent, own)
  if not l then return nil, states.error(at .. lerr, nil, "fix it, then: raymond --resume " .. run.rec.id) end
  return l
end

-- The outcome of a script that did not end well, or nil.
local function failure(run, res, limit, where)
  if res.killed and not res.timed_out then return states.STOPPED end
  if res.launch_error then
    return states.error(string.format("launcher %s: %s", res.launcher, res.launch_error), nil,
      "fix it, then: raymond --resume " .. run.rec.id)
  end
  local stderr = console.tail(res.stderr_tail, STDERR_LINES)
  if res.spawn_error then return states.error("cannot run the script: " .. res.spawn_error) end
  if res.timed_out and where then
    local shown = console.rel(where, run.cwd)
    return states.error(string.format("script produced no output for %g seconds (the per-state timeout in %s); "
      .. "its process group was killed", limit, shown), stderr,
      "raise timeout in " .. shown .. " (0 means no limit) or make the script print progress, then: "
      .. "raymond --resume " .. run.rec.id)
  end
  if res.timed_out then
    return states.error(string.format("script produced no output for %g seconds; its process group was killed",
      limit), stderr,
      "raise --timeout (0 means no limit) or make the script print progress, then: raymond --resume " .. run.rec.id)
  end
  if res.signal then return states.error("script was killed by signal " .. res.signal, stderr) end
  if res.exit ~= 0 then return states.error("script exited with status " .. res.exit, stderr) end
  if res.tag_error then return states.error(res.tag_error) end
  return nil
end

-- The payload also goes into $RAYMOND_INPUT_FILE, and only there when it
-- is too large for the environment.  The file is the agent's, in one
-- private temporary folder per run (made at the first payload, removed
-- with the run: Run:finish), since making and removing a folder at every
-- step would cost a chain of scripts more than the step itself.  Returns
-- the file, for the caller to remove after the script; or nil when there
-- is no payload; or nil and an error outcome.
local function input_file(run, agent, env)
  if not agent.input then return nil end
  local err
  if not run.input_dir then
    run.input_dir, err = raymond.mkdtemp("raymond-input-")
  end
  local path = run.input_dir and (run.input_dir .. "/" .. agent.id)
  local ok = path and true
  if path then
    os.remove(path) -- a file a killed step left behind
    ok, err = raymond.append_file(path, agent.input)
  end
  if not ok then
    if path then os.remove(path) end
    return nil, states.error("cannot hand the payload to the script: " .. tostring(err))
  end
  env.RAYMOND_INPUT_FILE = path
  if #agent.input > M.INPUT_ENV_MAX then
    env.RAYMOND_INPUT, env.RAYMOND_RESULT = nil, nil
    console.warn("[%s] %s: the payload is %d bytes, more than an environment variable holds (%d); "
      .. "it is only in $RAYMOND_INPUT_FILE", agent.id, agent.state, #agent.input, M.INPUT_ENV_MAX)
  end
  return path
end

function M.run(run, agent)
  local pre = hook_outcome(run:decide("PreState", agent, { kind = "script" }), "blocked by ")
  if pre then return pre end
  local file, serr = run:scope_of(agent):script(agent.state)
  -- Ctrl-C while a big archive is unpacked ends the step like a killed one.
  if not file and raymond.stopping() then return states.STOPPED end
  if not file then return states.error("cannot unpack the workflow archive: " .. serr) end
  local chosen, lout = launcher(run, agent, file)
  if not chosen then return lout end
  local env = script_env(run, agent, file)
  local input_path, ierr = input_file(run, agent, env)
  if ierr then return ierr end
  local results_path, rerr = join.results_file(run, agent, env)
  if rerr then return states.error("cannot hand the join's results to the script: " .. rerr) end
  local limit, where = timeout(run, agent)
  local res, step = executor.run(run, {
    argv = { "bash", file }, env = env, cwd = agent.cwd,
    timeout = limit, tags = true, name = agent.id .. "_" .. agent.state,
    input = agent.input, prints = console.prints(agent.id), script = { agent = agent, state = agent.state },
    launcher = chosen,
  })
  if input_path then os.remove(input_path) end
  if results_path then os.remove(results_path) end
  if step then
    step:finish({ duration = res.duration, exit = res.exit, signal = res.signal,
                  timed_out = res.timed_out, killed = res.killed })
  end
  local bad = failure(run, res, limit, where)
  if bad then return bad end
  local post = hook_outcome(run:decide("PostState", agent, {
    kind = "script", output = res.stdout_tail, exit_code = res.exit, duration = res.duration, cost_usd = 0,
  }), "blocked by ")
  if post then return post end
  local tr, err = transition.decide(res.tags, run:scope_of(agent))
  if not tr then return states.error(err, console.tail(res.stdout_tail, 5)) end
  return states.transition(tr)
end

return M
