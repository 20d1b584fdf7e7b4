-- raymond.runinfo: what list, status, watch and prune show of a run.
--
--   local info = runinfo.read(ws, id)     -- one run, as it is now
--   local all = runinfo.all(ws)           -- every run, newest first
--   runinfo.duration(192)    --> "3m12s"
--   runinfo.seconds("7d")    --> 604800, or nil
--
-- An info table holds id, status (the shown one: see
-- raymond.workspace.status; "unreadable" when the state file cannot be
-- read, with error), and for a readable run its record (rec), cost,
-- budget (0 for no limit), created and updated (seconds since the epoch),
-- elapsed (seconds from created to updated, or to now while it runs) and
-- states (the state of each live agent, in agent order).

local raymond = require("raymond")
local console = require("raymond.console")
local runstate = require("raymond.runstate")
local workspace = require("raymond.workspace")

local M = {}

-- Seconds since the epoch of a time runstate.iso wrote
-- ("2026-11-25T10:26:18.123456Z", UTC), or nil for anything else.
function M.epoch(iso)
  if type(iso) ~= "string" then return nil end
  local y, mo, d, h, mi, s = iso:match("^(%d%d%d%d)%-(%d%d)%-(%d%d)T(%d%d):(%d%d):(%d%d%.?%d*)Z$")
  if not y then return nil end
  y, mo, d = tonumber(y), tonumber(mo), tonumber(d)
  -- Days since 1970-01-01 of a date of the proleptic Gregorian calendar.
  if mo <= 2 then y = y - 1 end
  local era = y // 400
  local yoe = y - era * 400
  local doy = (153 * ((mo + 9) % 12) + 2) // 5 + d - 1
  local doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
  local days = era * 146097 + doe - 719468
  return days * 86400 + tonumber(h) * 3600 + tonumber(mi) * 60 + tonumber(s)
end

-- "45s", "3m12s", "2h05m", "3d04h": two units at most, as a person reads
-- a duration at a glance.
function M.duration(sec)
  sec = math.max(0, math.floor(sec or 0))
  if sec < 60 then return sec .. "s" end
  if sec < 3600 then return string.format("%dm%02ds", sec // 60, sec % 60) end
  if sec < 86400 then return string.format("%dh%02dm", sec // 3600, sec % 3600 // 60) end
  return string.format("%dd%02dh", sec // 86400, sec % 86400 // 3600)
end

local UNITS = { s = 1, m = 60, h = 3600, d = 86400, w = 604800 }

-- The seconds of a duration written as a whole number and a unit: 30m,
-- 12h, 7d, 2w, 90s.  nil for anything else.
function M.seconds(text)
  local n, unit = text:match("^(%d+)([smhdw])$")
  if not n or #n > 9 then return nil end
  return tonumber(n) * UNITS[unit]
end

-- The state of each live agent, in agent order.
local function states(rec)
  local list = {}
  for i, a in ipairs(rec.agents) do list[i] = a.state end
  return list
end

-- The states shortened for one column: the distinct ones in order, the
-- first shown and the rest counted ("REVIEW.md, +3 more"), "-" for none.
function M.short_states(list)
  local seen, distinct = {}, {}
  for _, s in ipairs(list) do
    if not seen[s] then seen[s], distinct[#distinct + 1] = true, s end
  end
  if #distinct == 0 then return "-" end
  if #distinct == 1 then return distinct[1] end
  return string.format("%s, +%d more", distinct[1], #distinct - 1)
end

-- Run `id` as it is now.  The lock is probed before the files are read:
-- a raymond saves the run's last state before it lets go of the lock, so
-- a run found unlocked is read as it ended, never as it was a moment
-- before (which would show a run that just completed as interrupted).
-- `owned`: the caller holds the run's lock itself, so no raymond drives
-- the run (the probe would find the caller's own lock).
function M.read(ws, id, owned)
  local path = workspace.state_path(ws, id)
  local ok, held = pcall(raymond.lock_held, workspace.lock_path(ws, id))
  held = ok and held and not owned
  local rec, err = runstate.load(path)
  if not rec then
    local _, _, mtime = raymond.stat(path)
    return { id = id, status = "unreadable", error = err, held = held, created = mtime, updated = mtime }
  end
  local info = {
    id = id, rec = rec, held = held, workflow = rec.workflow,
    status = (rec.status == "running" and not held) and "interrupted" or rec.status,
    cost = rec.cost or 0, budget = rec.launch.budget or 0,
    created = M.epoch(rec.created_at), updated = M.epoch(rec.updated_at),
    states = states(rec), error = rec.error,
  }
  local finish = info.status == "running" and raymond.now() or info.updated
  info.elapsed = (info.created and finish) and math.max(0, finish - info.created) or 0
  return info
end

-- The run a command names: the workspace and its info, or nil after
-- saying on stderr why there is no such run to show.
function M.open(cwd, id)
  local ws = workspace.new(cwd)
  local ok, verr = workspace.valid_id(id)
  if not ok then
    console.error(verr)
    return nil
  end
  if not raymond.stat(workspace.state_path(ws, id), true) then
    console.error("no run " .. id .. " in " .. ws.state_dir, nil, "list runs with: raymond list")
    return nil
  end
  local info = M.read(ws, id)
  if not info.rec then
    console.error(info.error, nil, "list runs with: raymond list")
    return nil
  end
  return ws, info
end

-- Every run, newest first (by creation; an unreadable one by its file's
-- modification time), ties by id.
function M.all(ws)
  local list = {}
  for i, id in ipairs(workspace.list(ws)) do list[i] = M.read(ws, id) end
  table.sort(list, function(a, b)
    local ta, tb = a.created or 0, b.created or 0
    if ta ~= tb then return ta > tb end
    return a.id > b.id
  end)
  return list
end

-- The exit status raymond gives a run that ended so (docs/cli.md, "Exit
-- status").
function M.exit_status(status)
  if status == "completed" then return 0 end
  if status == "stopped" then return require("raymond.run").EXIT_STOPPED end
  if status == "asking" then return require("raymond.ask").EXIT_ASKING end
  if status == "interrupted" then return 130 end
  return 1
end

return M
