-- raymond.leftovers: the children a killed raymond left running.
--
--   local ok, err = leftovers.stop(dir, id)
--
-- Each child of a run starts with a file in `dir` (.raymond/state/
-- <id>.children/, made by raymond.spawn before the child starts, removed
-- once its process group is gone) whose name is also in the child's
-- environment as RAYMOND_PROCESS_GROUP, and which holds "PID START" once
-- the child runs.  After a kill -9 the files of the children that were
-- running are still there, and --resume calls stop() before any state runs
-- again, so nothing runs twice at once.
--
-- A process counts as left behind when it is the recorded pid with the
-- recorded start time (a pid reused by an unrelated process has another),
-- leads its own group, and has RAYMOND_PROCESS_GROUP=<the file's name> in
-- its own environment; a member of the group that process leads; or a
-- process whose environment holds that entry (what the child started, even
-- after it exited or before its pid was written).  Each gets SIGTERM, then
-- SIGKILL after GRACE seconds, and stop() returns once all are gone.
--
-- The folder is a file anyone with write access to the project can plant
-- in, so a record is trusted no further than that: only regular files
-- named like the tokens raymond makes (UUIDs) are read, a recorded pid
-- must be a real one (1 < pid <= pid_max) and its process must carry the
-- token itself, since a start time alone is public (/proc/PID/stat).

local raymond = require("raymond")
local console = require("raymond.console")

local M = { GRACE = 2, KILL_WAIT = 10 }

local UUID = "^" .. table.concat({ ("%x"):rep(8), ("%x"):rep(4), ("%x"):rep(4), ("%x"):rep(4),
  ("%x"):rep(12) }, "%-") .. "$"

local function records(dir)
  local list = {}
  for _, name in ipairs(raymond.listdir(dir) or {}) do
    local file = dir .. "/" .. name
    if name:match(UUID) and raymond.stat(file, true) == "file" then
      local pid, start = (raymond.read_file(file) or ""):match("^(%d+) (%d+)")
      list[#list + 1] = { file = file, token = name, pid = tonumber(pid), start = tonumber(start) }
    end
  end
  return list
end

-- The largest pid the system hands out.
local function pid_max()
  return tonumber((raymond.read_file("/proc/sys/kernel/pid_max") or ""):match("^%d+")) or 4194304
end

-- The set of whole entries of /proc/PID/environ.
local function environ(pid)
  local set = {}
  for entry in (raymond.read_file("/proc/" .. pid .. "/environ") or ""):gmatch("[^\0]+") do
    set[entry] = true
  end
  return set
end

local function env_entry(r) return "RAYMOND_PROCESS_GROUP=" .. r.token end

local function self_pid()
  return tonumber((raymond.realpath("/proc/self") or ""):match("(%d+)$"))
end

-- The live processes of `recs`, as {pid=, start=, group=}.
local function scan(recs)
  local found, leaders, me, max = {}, {}, self_pid(), pid_max()
  for _, r in ipairs(recs) do
    local p = r.pid and r.pid > 1 and r.pid <= max and raymond.process(r.pid)
    if p and p.start == r.start and not p.zombie and p.pgid == r.pid
        and environ(r.pid)[env_entry(r)] then
      leaders[r.pid] = true
      found[#found + 1] = { pid = r.pid, start = r.start, group = true }
    end
  end
  for _, name in ipairs(raymond.listdir("/proc") or {}) do
    local pid = tonumber(name:match("^%d+$"))
    local p = pid and pid ~= me and not leaders[pid] and raymond.process(pid)
    if p and not p.zombie then
      local ours = leaders[p.pgid]
      if not ours then
        local env = environ(pid)
        for _, r in ipairs(recs) do
          if env[env_entry(r)] then ours = true break end
        end
      end
      if ours then found[#found + 1] = { pid = pid, start = p.start } end
    end
  end
  return found
end

local function alive(procs)
  for _, q in ipairs(procs) do
    local p = raymond.process(q.pid)
    if p and p.start == q.start and not p.zombie then return true end
  end
  return false
end

local function pids(procs)
  local t = {}
  for i, q in ipairs(procs) do t[i] = tostring(q.pid) end
  return table.concat(t, ", ")
end

-- Signal `procs` and wait up to `seconds` for them to end.  False when
-- the wait was cut by a stop of raymond.
local function signal_and_wait(procs, sig, seconds)
  for _, q in ipairs(procs) do raymond.signal(q.pid, q.start, sig, q.group) end
  local deadline = raymond.clock() + seconds
  while alive(procs) and raymond.clock() < deadline do
    if not raymond.sleep(0.05) then return false end
  end
  return true
end

-- Stop what the run's previous process left running.  Returns true, or
-- nil and an error table {msg, hint}.
function M.stop(dir, id)
  local recs = records(dir)
  if #recs == 0 then return true end
  local procs = scan(recs)
  if #procs > 0 then
    console.progress("raymond: stopping %d process(es) the previous raymond of run %s left running: %s",
      #procs, id, pids(procs))
  end
  local sig, seconds = "TERM", M.GRACE
  for _ = 1, 5 do
    if #procs == 0 then break end
    if not signal_and_wait(procs, sig, seconds) then
      return nil, { msg = "interrupted while stopping the processes the previous raymond of run "
        .. id .. " left running" }
    end
    -- What they started meanwhile is found by the next scan.
    procs = scan(recs)
    sig, seconds = "KILL", M.KILL_WAIT
  end
  if #procs > 0 then
    return nil, { msg = "cannot stop the processes the previous raymond of run " .. id
      .. " left running: " .. pids(procs),
      hint = "stop them (kill -9 PID), then: raymond --resume " .. id }
  end
  for _, r in ipairs(recs) do os.remove(r.file) end
  return true
end

return M
