-- raymond.commands.watch: `raymond watch ID`: follow a run that another
-- raymond drives, a line per change, until it ends.
--
-- The run is read as `raymond status` reads it (raymond.runinfo: the
-- state file and its journal, whichever is newer, and the run's lock)
-- every INTERVAL seconds.  Polling rather than inotify: the state file is
-- replaced by a rename and the journal appended to and replaced, so a
-- watch on the files would have to follow the folder and sort out the
-- events of every run in it; a busy run saves hundreds of times a second,
-- far more than a person reads; and a poll of two small files five times
-- a second costs nothing worth saving, on any filesystem.  A change that
-- comes and goes between two polls (a state that took less than
-- INTERVAL) is not shown; the step count on each line says how many
-- steps went by.
--
-- The watched run is only read: Ctrl-C ends the watch, never the run.

local raymond = require("raymond")
local console = require("raymond.console")
local runinfo = require("raymond.runinfo")
local text = require("raymond.text")
local workspace = require("raymond.workspace")

local M = {}

M.INTERVAL = 0.2

M.usage = { "raymond watch ID" }

M.args = {
  { key = "watch", name = "ID", missing = "no run id given",
    hint = "raymond watch ID; list runs with: raymond list" },
}

M.help = [[
Follows run ID, started by another raymond, until it ends: a line for
each change it sees (an agent at a new state, an agent done, the cost, the
run's status), then the final status and result.  It exits with the
status raymond gives that run: 0 completed, 1 failed, 3 stopped, 130
interrupted.  On a run that has already ended it prints the summary and
exits at once.  Ctrl-C ends the watch and leaves the run running.  The run
is read every 0.2 seconds, so a state shorter than that may not show.]]

local function out(text)
  -- Names and results come from the run's files: shown, not obeyed.
  raymond.stdout(raymond.printable(text .. "\n"))
end

-- A line about a change, with the time and the step it was seen at.
local function event(info, text)
  out(string.format("%s %s (step %d)", os.date("%H:%M:%S"), text, info.rec.steps))
end

local function cost_text(info)
  if info.budget > 0 then
    return string.format("cost %s of $%.2f", text.usd(info.cost), info.budget)
  end
  return "cost " .. text.usd(info.cost)
end

-- The lines for what changed from `old` to `new`.
local function changes(old, new)
  local before = {}
  for _, a in ipairs(old.rec.agents) do before[a.id] = a end
  local now = {}
  for _, a in ipairs(new.rec.agents) do
    now[a.id] = true
    local was = before[a.id]
    if not was then
      event(new, string.format("[%s] started at %s", a.id, a.state))
    elseif was.state ~= a.state or #was.stack ~= #a.stack then
      event(new, string.format("[%s] -> %s", a.id, a.state))
    end
  end
  for _, a in ipairs(old.rec.agents) do
    if not now[a.id] then event(new, string.format("[%s] done", a.id)) end
  end
  if new.cost ~= old.cost then event(new, cost_text(new)) end
  if new.status ~= old.status then event(new, "run " .. new.status) end
end

-- The end of a run: its status, what it did, and its result or error.
local function summary(info)
  out(string.format("run %s %s: %d steps, %s, %s", info.id, info.status, info.rec.steps,
    cost_text(info), runinfo.duration(info.elapsed)))
  if info.status == "completed" then
    if info.rec.result then out("result: " .. info.rec.result) end
  else
    if info.error then out("error: " .. info.error) end
    out("continue with: raymond resume " .. info.id)
  end
  return runinfo.exit_status(info.status)
end

-- The run `id` as it is now, or nil after reporting why it cannot be read.
local function read(ws, id)
  local info = runinfo.read(ws, id)
  if info.rec then return info end
  if not raymond.stat(workspace.state_path(ws, id), true) then
    console.error("run " .. id .. " is gone: its state file was removed", nil, "list runs with: raymond list")
  else
    console.error(info.error, nil, "list runs with: raymond list")
  end
  return nil
end

function M.main(opts)
  local id = opts.watch
  local ws, info = runinfo.open(opts.cwd, id)
  if not info then return 1 end
  if not info.held then return summary(info) end
  raymond.quiet_signals()
  out(string.format("watching run %s (%s), %s, running for %s; Ctrl-C stops the watch, not the run",
    id, console.rel(info.workflow, opts.cwd), cost_text(info), runinfo.duration(info.elapsed)))
  for _, a in ipairs(info.rec.agents) do event(info, string.format("[%s] at %s", a.id, a.state)) end
  while info.held do
    if not raymond.sleep(M.INTERVAL) then
      raymond.stderr(string.format("raymond: stopped watching run %s; it goes on (see: raymond status %s)\n",
        id, id))
      return 130
    end
    local now = read(ws, id)
    if not now then return 1 end
    changes(info, now)
    info = now
  end
  return summary(info)
end

return M
