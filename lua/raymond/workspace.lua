-- raymond.workspace: where runs live on disk.
--
-- The .raymond folder is found by walking up from the current directory:
-- the first directory holding .raymond wins; the walk stops at a directory
-- holding .git (the project root) or at /.  Without one, .raymond is made
-- at that project root, or in the current directory outside a project.
--
--   .raymond/state/<id>.json    the run's state (see raymond.runstate)
--   .raymond/state/<id>.lock    the lease of the process driving the run
--                               (src/lease.h), with its .claim. and .tmp.
--                               files while it is taken or renewed
--   .raymond/state/<id>.children/  one file per running child process
--                               (raymond.leftovers)
--   .raymond/state/<id>.bridge  the hook bridge's socket while the run
--                               runs (raymond.bridge)
--   .raymond/debug/<id>.record  the debug record (raymond.record)
--   .raymond/extract/<id>/      an archive workflow's scripts (raymond.scope)
--   .raymond/tasks/<id>/        the agents' task folders (raymond.isolation)
--   .raymond/spool/<id>/        the spool folders of its launches on a
--                               cluster (raymond.launchers.spool)
--   .raymond/worktrees/<id>/    the agents' git worktrees (raymond.isolation);
--                               not among the run's files prune removes,
--                               since a kept one holds work
--   .raymond/config.yaml        the project's settings (raymond.config)
--   .raymond/.gitignore         "*" but config.yaml, written when missing,
--                               so runs never end up in the project's
--                               commits while the config can
--
-- Nothing under .raymond is written through a symbolic link.  A link
-- planted there (by a checkout, an unpacked archive, someone else) would
-- make raymond write, or remove, files wherever it points.  So before a
-- run is started or resumed, .raymond, its folders and the run's files
-- must not be links (M.refuse_links); and the files are opened with
-- O_NOFOLLOW, folders made by mkdir_p are checked, and rmtree never
-- follows a link, for a link planted while the run goes on.

local raymond = require("raymond")
local console = require("raymond.console")

local M = {}

function M.find_root(cwd)
  local dir = cwd
  while true do
    if raymond.stat(dir .. "/.raymond") == "dir" then return dir .. "/.raymond" end
    if raymond.stat(dir .. "/.git") or dir == "/" then break end
    dir = dir:match("^(.*)/[^/]*$")
    if dir == "" then dir = "/" end
  end
  local base = (raymond.stat(dir .. "/.git") and dir) or cwd
  return (base == "/" and "" or base) .. "/.raymond"
end

function M.new(cwd)
  local root = M.find_root(cwd)
  return {
    root = root,
    state_dir = root .. "/state",
    debug_root = root .. "/debug",
  }
end

function M.state_path(ws, id) return ws.state_dir .. "/" .. id .. ".json" end
function M.lock_path(ws, id) return ws.state_dir .. "/" .. id .. ".lock" end
function M.children_dir(ws, id) return ws.state_dir .. "/" .. id .. ".children" end
function M.bridge_path(ws, id) return ws.state_dir .. "/" .. id .. ".bridge" end
function M.debug_path(ws, id) return ws.debug_root .. "/" .. id .. ".record" end
function M.extract_path(ws, id) return ws.root .. "/extract/" .. id end
function M.tasks_path(ws, id) return ws.root .. "/tasks/" .. id end
function M.spool_path(ws, id) return ws.root .. "/spool/" .. id end

local LINK_HINT = "raymond keeps its runs only in real folders and files under .raymond; "
  .. "remove the link and run again (raymond makes what it needs)"

-- Every path run `id` may leave under .raymond: the state file, the
-- write lock of its atomic replacement (src/atomicfile.h), the journal,
-- the run's lock, its children's records, the hook bridge's socket (left
-- by a killed raymond), the debug record, an archive's extracted
-- scripts, the agents' task folders and the spool folders of its
-- launches.  The lock comes last, so a remover going
-- down the list holds the lock until the rest is gone.
function M.run_paths(ws, id)
  local state = M.state_path(ws, id)
  return { state, state .. ".lock", ws.state_dir .. "/" .. id .. ".journal", M.children_dir(ws, id),
           M.bridge_path(ws, id), M.debug_path(ws, id), M.extract_path(ws, id), M.tasks_path(ws, id),
           M.spool_path(ws, id), M.lock_path(ws, id) }
end

-- Refuse if .raymond, one of its folders or (with `id`) one of the run's
-- files is a symbolic link: nil, message, hint.
function M.refuse_links(ws, id)
  local paths = { ws.root, ws.state_dir, ws.debug_root, ws.root .. "/extract", ws.root .. "/tasks",
                  ws.root .. "/worktrees", ws.root .. "/spool" }
  if id then
    local own = M.run_paths(ws, id)
    table.move(own, 1, #own, #paths + 1, paths)
  end
  for _, p in ipairs(paths) do
    if raymond.stat(p, true) == "link" then
      return nil, string.format("'%s' is a symbolic link, and raymond does not write through links", p), LINK_HINT
    end
  end
  return true
end

-- Make .raymond/state, refusing links (M.refuse_links).
function M.prepare(ws)
  local ok, err, hint = M.refuse_links(ws)
  if not ok then return nil, err, hint end
  return raymond.mkdir_p(ws.state_dir)
end

-- What .raymond/.gitignore holds: everything is ignored (the file itself
-- too, so a first run adds nothing to `git status`) but the project's
-- config, which a team may commit and share.  The "/" matches only the
-- config at the top of .raymond, never a file of that name further down.
local GITIGNORE = "*\n!/config.yaml\n"

-- What raymond wrote there before the config could be shared.
local OLD_GITIGNORE = "*\n"

-- Write .raymond/.gitignore (GITIGNORE) unless something of that name
-- is there: a user's own file is left as it is.  A file holding exactly
-- what an earlier raymond wrote is raymond's own, and is brought up to
-- date so the config shows to git.  A run goes on without it, with a
-- warning.
function M.ignore(ws)
  local path = ws.root .. "/.gitignore"
  local kind = raymond.stat(path, true)
  if kind and not (kind == "file" and raymond.read_file(path, #OLD_GITIGNORE) == OLD_GITIGNORE) then return end
  local ok, err = raymond.write_atomic(path, GITIGNORE)
  if not ok then
    console.warn("cannot write %s, so git may show the runs: %s", path, err)
  end
end

function M.valid_id(id)
  if #id == 0 or #id > 128 or not id:match("^[%w_-]+$") then
    return nil, string.format(
      "invalid run id '%s': use 1 to 128 letters, digits, '_' or '-'", id)
  end
  return true
end

-- A fresh id from the local time, with a suffix if that one is taken.
function M.new_id(ws)
  local t = raymond.now()
  local base = os.date("workflow_%Y-%m-%d_%H-%M-%S", math.floor(t))
    .. string.format("-%06d", math.floor((t % 1) * 1e6))
  local id, n = base, 0
  while raymond.stat(M.state_path(ws, id)) do
    n = n + 1
    id = base .. "_" .. n
  end
  return id
end

-- Take the run's lease (raymond.lock, src/lease.h), renewed until
-- M.unlock or the end of the process; fails if another process drives the
-- run, on this host or another sharing .raymond, or if a path the run
-- writes is a symbolic link: nil, message[, hint].  A new or resumed run
-- gives .raymond its .gitignore here (M.ignore).
function M.lock(ws, id)
  local ok, err, hint = M.refuse_links(ws, id)
  if not ok then return nil, err, hint end
  ok, err = raymond.mkdir_p(ws.state_dir)
  if not ok then return nil, err end
  M.ignore(ws)
  local path = M.lock_path(ws, id)
  local locked, lerr, why, holder = raymond.lock(path)
  if locked then
    -- We own the run now, so a write lock left by a killed process is stale.
    raymond.clear_stale(M.state_path(ws, id))
    return true
  end
  if why == "locked" then
    return nil, string.format("run %s is being driven by another raymond process (pid %d on host %s, "
      .. "its lease on %s runs until %s unless renewed)", id, holder.pid, holder.host, path,
      os.date("!%Y-%m-%dT%H:%M:%SZ", math.floor(holder.expires))),
      "a run is taken over only once its lease has expired: wait, or stop that raymond first"
  end
  return nil, lerr
end

-- The status to show for a run whose record `rec` was read: one saved as
-- running whose lease is not live lost its owner (kill -9, a crash, a
-- power cut) and is interrupted, as --resume will treat it.
function M.status(ws, id, rec)
  if rec.status == "running" and not raymond.lock_held(M.lock_path(ws, id)) then
    return "interrupted"
  end
  return rec.status
end

-- Give up the run's lease at the end of the process: the lease file goes
-- (if it is still ours), so finished runs leave no files behind but
-- their state.
function M.unlock(ws, id)
  raymond.unlock(M.lock_path(ws, id))
end

-- The ids of every run, oldest first.
function M.list(ws)
  local names = raymond.listdir(ws.state_dir) or {}
  local ids = {}
  for _, n in ipairs(names) do
    local id = n:match("^(.+)%.json$")
    if id then ids[#ids + 1] = id end
  end
  return ids
end

return M
