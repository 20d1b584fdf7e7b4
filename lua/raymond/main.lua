-- raymond.main: the entry points the C core calls (see src/cmd_*.c).
--
-- main(opts) runs as the first coroutine; for a run it starts the agents
-- and returns while they work.  finish(crashed, signo) runs after the
-- event loop has drained and returns the process exit status.

local raymond = require("raymond")
local console = require("raymond.console")
local engine = require("raymond.engine")
local hooks = require("raymond.hooks")
local resolve = require("raymond.resolve")
local runstate = require("raymond.runstate")
local workspace = require("raymond.workspace")

local M = {}

-- Set when main() finished the whole job itself (list, status, errors).
local code
-- The run main() started, for finish().
local current

local function list(opts)
  local ws = workspace.new(opts.cwd)
  local ids = workspace.list(ws)
  if #ids == 0 then
    raymond.stdout("No runs found.\n")
    return 0
  end
  for _, id in ipairs(ids) do
    local run, err = runstate.load(workspace.state_path(ws, id))
    if run then
      raymond.stdout(string.format("%-40s %-11s %s  %s\n", id, run.status,
        (run.updated_at or ""):sub(1, 19), run.workflow))
    else
      raymond.stdout(string.format("%-40s %-11s %s\n", id, "unreadable", err))
    end
  end
  return 0
end

local function status(opts)
  local ws = workspace.new(opts.cwd)
  local id = opts.status
  local ok, verr = workspace.valid_id(id)
  if not ok then
    console.error(verr)
    return 1
  end
  local run, err = runstate.load(workspace.state_path(ws, id))
  if not run then
    console.error(err, nil, "list runs with: raymond --list")
    return 1
  end
  if opts.json then
    raymond.stdout(raymond.json_encode(run) .. "\n")
    return 0
  end
  local out = {
    "Run:       " .. run.id,
    "Workflow:  " .. run.workflow .. " (entry " .. tostring(run.entry) .. ")",
    "Status:    " .. run.status .. (run.error and (" - " .. run.error) or ""),
    "Started:   " .. tostring(run.created_at),
    "Updated:   " .. tostring(run.updated_at),
    "Steps:     " .. run.steps,
  }
  local scope, serr = resolve.reopen(run.workflow)
  local files, herr
  if scope then files, herr = hooks.discover(scope, run.launch) else herr = serr end
  local names = files and hooks.names(files) or { "(" .. tostring(herr) .. ")" }
  out[#out + 1] = "Hooks:     " .. (#names > 0 and table.concat(names, "\n           ") or "(none)")
  out[#out + 1] = "Agents:    " .. (#run.agents == 0 and "(none)" or "")
  for _, a in ipairs(run.agents) do
    local stack = {}
    for i, f in ipairs(a.stack) do stack[i] = f.state end
    local line = string.format("  %s at %s", a.id, a.state)
    if #stack > 0 then line = line .. " (returns to " .. table.concat(stack, " < ") .. ")" end
    if a.input then line = line .. string.format(" [input: %q]", a.input:sub(1, 60)) end
    out[#out + 1] = line
  end
  if run.result then out[#out + 1] = "Result:    " .. run.result end
  raymond.stdout(table.concat(out, "\n") .. "\n")
  return 0
end

function M.main(opts)
  if opts.command == "list" then
    code = list(opts)
    return
  end
  if opts.command == "status" then
    code = status(opts)
    return
  end
  local run, err
  if opts.command == "resume" then
    run, err = engine.resume(opts)
  else
    run, err = engine.start(opts)
  end
  if not run then
    console.error(err.msg, err.detail, err.hint)
    code = 1
  end
  current = run
end

function M.finish(crashed, signo)
  if code then return code end
  return engine.finish(current, crashed, signo)
end

return M
