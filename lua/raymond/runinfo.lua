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

-- Whether a raymond drives run `id` now: its lock is held.  A lock path
-- that is not a regular file (raymond.lock_held refuses it) holds nothing.
function M.held(ws, id)
  local ok, held = pcall(raymond.lock_held, workspace.lock_path(ws, id))
  return ok and held
end

-- Run `id` as it is now.  The lock is probed before the files are read:
-- a raymond saves the run's last state before it lets go of the lock, so
-- a run found unlocked is read as it ended, never as it was a moment
-- before (which would show a run that just completed as interrupted).
-- `owned`: the caller holds the run's lock itself, so no raymond drives
-- the run (the probe would find the caller's own lock).
function M.read(ws, id, owned)
  local path = workspace.state_path(ws, id)
  local held = M.held(ws, id) and not owned
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

-- ------------------------------------------------------------ a listing kept

-- What M.all shows, for a process that lists the runs again and again
-- (raymond serve): each run is read again only when one of its files
-- changed since it was last read, so a listing of 10,000 runs costs what
-- changed, not 10,000 reads.  The changes come from a watch on the state
-- folder (raymond.dir_watch): the kernel queues the event of a file of
-- it created, written, renamed over or removed before that write
-- returns, so whatever changed before a listing is read afresh by it.
-- When the watch cannot say (its queue overflowed, the folder was
-- replaced, no watch could be made) every run is read again.
--
-- What is kept of a run is what `derive` makes of its info (M.read),
-- not the info, so 10,000 runs do not keep 10,000 records in memory.  A
-- run saved as running is the exception: it shows running or interrupted
-- by whether its lock is held, which changes with no file changing (a
-- raymond killed), and while it runs its elapsed time grows, so its info
-- is kept and derived again.  Its lock is probed before the changes are
-- taken, as M.read probes it before reading, so a run that ends in
-- between is read anew rather than shown as interrupted.
--
--   local listing = runinfo.listing(ws, derive)   -- derive(info) -> value
--   listing:all()      -- the values of every run, newest first (as M.all)
--   listing.version    -- counts up whenever what all() gave changed
--   listing:drain()    -- now and then in between: see there

local Listing = {}
Listing.__index = Listing

function M.listing(ws, derive)
  return setmetatable({ ws = ws, derive = derive, runs = {}, live = {}, version = 0, pending = {} }, Listing)
end

-- The id a file of the state folder belongs to, if it is a state file
-- or a journal (runstate.journal_path).
local function owner(name)
  return name:match("^(.+)%.json$") or name:match("^(.+)%.journal$")
end

-- Take the changes the kernel queued so far into the listing's own set.
-- The kernel's queue is bounded (16384 events by default), and busy runs
-- fill it in seconds: a daemon calls this now and then between
-- listings, so that it does not overflow and cost a reading of every run.
function Listing:drain()
  if not self.watch or self.lost then return end
  local names = self.watch:changes()
  if not names then
    self.lost = true
    return
  end
  for name in pairs(names) do
    local id = owner(name)
    if id then self.pending[id] = true end
  end
end

-- The changed ids as a set, or nil when every run must be read again.
function Listing:changes()
  self:drain()
  local ids = self.pending
  self.pending = {}
  if self.watch and not self.lost then return ids end
  if self.watch then self.watch:close() end
  self.lost = false
  self.watch = raymond.dir_watch(self.ws.state_dir)
  return nil
end


-- The info of a run saved as running, as M.read shows it with the lock
-- `held` or not.
local function live(info, held)
  local now = {}
  for k, v in pairs(info) do now[k] = v end
  now.held, now.status = held, held and "running" or "interrupted"
  local finish = held and raymond.now() or now.updated
  now.elapsed = (now.created and finish) and math.max(0, finish - now.created) or 0
  return now
end

-- What is kept of a run just read.
function Listing:keep(info)
  local run = { id = info.id, created = info.created }
  if info.rec and info.rec.status == "running" then
    run.info = info
  else
    run.value = self.derive(info)
  end
  return run
end

-- The value of a kept run; `held`: its lock, for a run saved as running.
function Listing:value(run, held)
  if not run.info then return run.value end
  if held then return self.derive(live(run.info, true)) end
  run.idle = run.idle or self.derive(live(run.info, false))
  return run.idle
end

local function newest_first(a, b)
  local ta, tb = a.created or 0, b.created or 0
  if ta ~= tb then return ta > tb end
  return a.id > b.id
end

-- Read run `id` again (M.read), or forget it when its state file is
-- gone; false when the order of the runs may have changed with it.
function Listing:reread(id, held)
  local ws, runs = self.ws, self.runs
  local old = runs[id]
  if raymond.stat(workspace.state_path(ws, id), true) then
    local info = M.read(ws, id)
    runs[id], held[id] = self:keep(info), info.held
  else
    runs[id] = nil
  end
  self.live[id] = runs[id] and runs[id].info and true or nil
  return old ~= nil and runs[id] ~= nil and old.created == runs[id].created
end

-- The values of every run, newest first: a list that is the listing's
-- own, to read before the next call.
function Listing:all()
  local ws, runs = self.ws, self.runs
  local held = {}
  for id in pairs(self.live) do held[id] = M.held(ws, id) end
  local changed = self:changes()
  local ordered = changed ~= nil
  if not changed then
    self.runs, self.live, changed = {}, {}, {}
    runs = self.runs
    for _, id in ipairs(workspace.list(ws)) do changed[id] = true end
  end
  for id in pairs(changed) do ordered = self:reread(id, held) and ordered end
  if not ordered then
    local order = {}
    for _, run in pairs(runs) do order[#order + 1] = run end
    table.sort(order, newest_first)
    local slot, values = {}, {}
    for i, run in ipairs(order) do
      slot[run.id], values[i] = i, self:value(run, held[run.id])
    end
    self.slot, self.values, self.version = slot, values, self.version + 1
    return values
  end
  -- Only a run saved as running, or one that changed, shows otherwise
  -- than at the last call.
  local slot, values, same = self.slot, self.values, true
  local function set(id)
    local v = self:value(runs[id], held[id])
    same = same and v == values[slot[id]]
    values[slot[id]] = v
  end
  for id in pairs(changed) do set(id) end
  for id in pairs(self.live) do set(id) end
  if not same then self.version = self.version + 1 end
  return values
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
