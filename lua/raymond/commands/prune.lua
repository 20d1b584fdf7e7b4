-- raymond.commands.prune: `raymond prune [--older-than DURATION]
-- [--status S]... [--dry-run]`: remove the runs that match, with every
-- file they left (raymond.workspace.run_paths).
--
-- A run whose lock (its lease, src/lease.h) a raymond holds is never
-- removed.  Without --dry-run the lock is taken (raymond.lock) before
-- anything goes, so a resume
-- started meanwhile waits for nothing and finds the run gone, or finds it
-- locked and refuses; the lock is held until prune exits.  The runs are
-- listed before their locks are taken, so each is read again under its
-- lock and the filters decide again on what it is now.

local raymond = require("raymond")
local console = require("raymond.console")
local list = require("raymond.commands.list")
local runinfo = require("raymond.runinfo")
local workspace = require("raymond.workspace")

local M = {}

M.usage = { "raymond prune [--older-than DURATION] [--status S]... [--dry-run]" }

M.options = {
  { name = "older-than", key = "older_than", arg = "DURATION",
    help = "only runs last changed longer ago than DURATION: a\nwhole number and s, m, h, d or w (30m, 12h, 7d)" },
  list.options[1],
  { name = "dry-run", key = "dry_run", help = "say what would be removed, and remove nothing" },
}

M.flags = { { "prune options", "older-than", "status", "dry-run" } }

M.help = [[
Removes the runs in .raymond/ that match every filter given: last
changed longer ago than --older-than, and with one of the statuses given
with --status (as raymond list shows them, unreadable too); each is read
again once prune holds its lock.  Each goes with all its files: the state
file and journal, its lock, its children's records, its debug record,
an archive's extracted scripts and its agents' task folders (not its git
worktrees: one left was kept for the work in it).  A run a raymond is driving is never
removed, and the output says so.  At least one filter is needed: raymond
prune alone removes nothing.  It prints each run it removes and the space
freed; with --dry-run it prints what it would remove and removes
nothing.]]

-- "512 B", "72.0 KiB", "3.4 MiB".
local function size(bytes)
  if bytes < 1024 then return bytes .. " B" end
  local units, v, i = { "KiB", "MiB", "GiB", "TiB" }, bytes / 1024, 1
  while v >= 1024 and i < #units do v, i = v / 1024, i + 1 end
  return string.format("%.1f %s", v, units[i])
end

-- The bytes `path` takes on disk, a folder with all it holds; a link is
-- counted as itself, never followed.
local function usage(path)
  local kind, bytes = raymond.stat(path, true)
  if not kind then return 0 end
  if kind == "dir" then
    for _, name in ipairs(raymond.listdir(path) or {}) do bytes = bytes + usage(path .. "/" .. name) end
  end
  return bytes
end

-- Remove the files of run `id`: returns the bytes freed, and a message
-- for each path that could not be removed.  `lock_bytes`: what the run's
-- lock took before prune took it over (its lease is prune's own now).
local function remove(ws, id, lock_bytes)
  local freed, errors = 0, {}
  for _, path in ipairs(workspace.run_paths(ws, id)) do
    local kind = raymond.stat(path, true)
    if kind then
      local bytes = usage(path)
      local ok, err
      if path == workspace.lock_path(ws, id) then
        bytes = lock_bytes
        -- The lease prune holds goes last, given up rather than removed
        -- under its renewal.
        workspace.unlock(ws, id)
        ok = not raymond.stat(path, true)
        err = not ok and ("cannot remove '" .. path .. "': it is no longer prune's lease") or nil
      elseif kind == "dir" then ok, err = raymond.rmtree(path) else ok, err = os.remove(path) end
      if ok then freed = freed + bytes else errors[#errors + 1] = err end
    end
  end
  return freed, errors
end

-- Whether `info` passes every filter.
local function matches(info, opts, now)
  if opts.only and not list.wanted(info, opts.only) then return false end
  if opts.age and not (info.updated and now - info.updated > opts.age) then return false end
  return true
end

-- Take the run's lock for the removal: true, or false when a raymond
-- drives it, or nil and a message.
local function claim(ws, id)
  if raymond.stat(workspace.lock_path(ws, id), true) == "link" then
    return nil, string.format("'%s' is a symbolic link, and raymond does not write through links",
      workspace.lock_path(ws, id))
  end
  local ok, err, why = raymond.lock(workspace.lock_path(ws, id))
  if ok then return true end
  if why == "locked" then return false end
  return nil, err
end

-- What prune does with a matched run: "running" (kept), "invalid" (kept:
-- its file's name is not a run id, so its paths could lead out of the
-- run's own: extract/.. is .raymond itself), "changed" (kept: read again
-- under its lock, it no longer matches), nil (removed by someone else
-- meanwhile), each with the run as read last; or "gone" with the run as
-- removed, the bytes it freed (or would) and the paths it could not
-- remove.
local function prune_one(ws, info, opts, now)
  if info.held then return "running" end
  if not workspace.valid_id(info.id) then return "invalid" end
  if opts.dry_run then
    local bytes = 0
    for _, path in ipairs(workspace.run_paths(ws, info.id)) do bytes = bytes + usage(path) end
    return "gone", info, bytes, {}
  end
  local lock_bytes = usage(workspace.lock_path(ws, info.id))
  local claimed, err = claim(ws, info.id)
  if claimed == false then return "running" end
  if claimed == nil then return "gone", info, 0, { err } end
  -- The run was listed before its lock was taken, and a resume may have
  -- changed it since (a failed run that has now completed): what it is
  -- now decides.  A run kept so gets its lock back at once.
  local kind = raymond.stat(workspace.state_path(ws, info.id), true)
  local fresh = runinfo.read(ws, info.id, true)
  if not kind or not matches(fresh, opts, now) then
    workspace.unlock(ws, info.id)
    return kind and "changed" or nil, fresh
  end
  return "gone", fresh, remove(ws, info.id, lock_bytes)
end

-- Why a run is kept, for prune_one's answers but "gone" (%s: the status
-- it has now).
local KEPT = {
  running = "it is running (a raymond holds its lock); stop it first",
  changed = "it changed while prune ran (now %s) and no longer matches",
  invalid = "its name is not a run id raymond makes (1 to 128 letters, digits, '_' or '-'), "
    .. "so prune leaves it alone; remove its files by hand",
}

function M.main(opts)
  if not opts.older_than and not opts.only then
    console.error("raymond prune needs a filter: --older-than DURATION, --status S, or both", nil,
      "for example: raymond prune --older-than 7d --dry-run")
    return 1
  end
  if opts.older_than then
    opts.age = runinfo.seconds(opts.older_than)
    if not opts.age then
      console.error(string.format("--older-than needs a duration such as 30m, 12h or 7d, got '%s'",
        opts.older_than), nil, "a whole number and a unit: s, m, h, d or w")
      return 1
    end
  end
  local ws = workspace.new(opts.cwd)
  local ok, lerr, hint = workspace.refuse_links(ws)
  if not ok then
    console.error(lerr, nil, hint)
    return 1
  end
  local now, verb = raymond.now(), opts.dry_run and "would remove" or "removed"
  local count, total, failed = 0, 0, false
  for _, info in ipairs(runinfo.all(ws)) do
    if matches(info, opts, now) then
      local what, run, freed, errors = prune_one(ws, info, opts, now)
      if KEPT[what] then
        raymond.stdout(raymond.printable(string.format("kept %s: " .. KEPT[what] .. "\n", info.id,
          run and run.status)))
      elseif what == "gone" and #errors > 0 then
        failed = true
        console.error(string.format("cannot remove all of run %s: %s", info.id, table.concat(errors, "; ")),
          nil, "fix the permissions, then run raymond prune again")
      elseif what == "gone" then
        count, total = count + 1, total + freed
        local ago = run.updated and runinfo.duration(now - run.updated) .. " ago" or "unknown"
        raymond.stdout(raymond.printable(string.format("%s %s (%s, last change %s, %s)\n", verb, run.id,
          run.status, ago, size(freed))))
      end
    end
  end
  if count == 0 and not failed then
    raymond.stdout("No runs to remove.\n")
  else
    raymond.stdout(string.format("%s %d run(s), %s %d bytes (%s)\n", verb, count,
      opts.dry_run and "freeing" or "freed", total, size(total)))
  end
  return failed and 1 or 0
end

return M
