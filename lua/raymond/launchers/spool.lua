-- raymond.launchers.spool: the spool kind of launch (docs/cluster.md,
-- "The spool protocol").
--
-- raymond writes the folder .raymond/spool/<run id>/<job>/ (0700): env
-- (the variables, 0600), in (the child's stdin, when it has one) and
-- task.sh (raymond.launchers.script), and starts its follower,
-- `raymond-launch-follow DIR ...` (or `raymond launch-follow DIR ...`), as
-- the step's child.  The follower submits task.sh with the launcher's
-- submit: command (or attaches to the job when the folder or the cluster
-- shows one was submitted), copies the task's out and err to its own
-- stdout and stderr as they grow, and ends as the task did; on a stop it
-- runs cancel: and waits for the task to end.  A launch resumed under its
-- saved job name writes the files again unless its task ran.

local raymond = require("raymond")
local script = require("raymond.launchers.script")
local template = require("raymond.launchers.template")

local M = {}

M.CHECK, M.GRACE = 10, 20 -- the follower's defaults, in seconds
M.ERROR_MAX = 4096

local PRIVATE = 448 -- 0700

-- Write the folder's files; returns true, or nil and a message.  Each is
-- written whole but not synced (a sync of each costs more than the rest
-- of a launch): a launch resumed after a crash (`resumed`) writes them
-- again, since a power cut may have torn or lost them, unless its task
-- has started or ended, and the saved job name makes the follower ask
-- the cluster before it submits.  Writing them again harms no job of the
-- launch: Slurm runs its own copy of task.sh, and a rename never changes
-- a file a reader holds open.
local function prepare(dir, req, env, resumed)
  local ok, err = raymond.mkdir_p(dir:match("^(.*)/[^/]*$"), PRIVATE)
  if ok then ok, err = raymond.mkdir_p(dir, PRIVATE) end
  if not ok then return nil, err end
  if resumed and (raymond.stat(dir .. "/started", true) or raymond.stat(dir .. "/exit", true)) then return true end
  local input = req.input ~= nil and req.input ~= ""
  local how = "private unsynced"
  ok, err = raymond.write_atomic(dir .. "/env", script.exports(env), how)
  if ok and input then ok, err = raymond.write_atomic(dir .. "/in", req.input, how) end
  if ok then ok, err = raymond.write_atomic(dir .. "/task.sh", script.task(dir, req.cwd or ".", req.argv, input), how) end
  return ok, err
end

-- The follower's program: raymond-launch-follow beside the raymond
-- binary, which links libc alone and starts 4 ms sooner (src/main_follow.c),
-- or else the binary's own `launch-follow`, so that a lone copy of raymond
-- still launches.  Looked up once a process.
local program
local function follower_program()
  if not program then
    local exe = raymond.exe_path()
    local lite = exe:match("^(.*)/[^/]*$") .. "/raymond-launch-follow"
    local kind, _, _, mode = raymond.stat(lite)
    program = kind == "file" and mode & 73 ~= 0 and { lite } or { exe, "launch-follow" } -- 73: 0111
  end
  return program
end

-- The follower's command line for launch `c` in `dir`; `new` when the
-- job's name was made for this launch (the follower then submits without
-- asking the cluster first whether an earlier one did).
function M.follower(c, dir, new)
  local l, vals = c.l, c.values
  vals.spool, vals.script = dir, dir .. "/task.sh"
  local argv = { table.unpack(follower_program()) }
  for _, a in ipairs({ dir, "--name", c.name, "--check", tostring(l.check or M.CHECK),
                       "--grace", tostring(l.grace or M.GRACE) }) do
    argv[#argv + 1] = a
  end
  if new then argv[#argv + 1] = "--new" end
  for _, which in ipairs({ "submit", "cancel", "status" }) do
    local list = template.expand(l[which], vals, c.resources)
    argv[#argv + 1] = "--" .. which
    argv[#argv + 1] = tostring(#list)
    table.move(list, 1, #list, #argv + 1, argv)
  end
  return argv
end

-- Launch `c` (see raymond.launchers.spawn); returns the result and the
-- spool folder.
function M.run(c)
  local dir = require("raymond.launchers").spool_root(c.run) .. "/" .. c.name
  local ok, err = prepare(dir, c.req, c.env, c.resumed)
  if not ok then
    return { exit = 125, launch_error = "cannot write the spool folder " .. dir .. ": " .. tostring(err),
             stdout_tail = "", stderr_tail = "" }, nil
  end
  local req = {}
  for k, v in pairs(c.req) do req[k] = v end
  local env = c.local_env
  if c.l.module and c.l.module.follower_env then env = c.l.module.follower_env(env) end
  -- A name saved before a crash may have been submitted even when its
  -- folder did not outlive the crash: only a fresh name skips the status.
  req.argv, req.env, req.cwd, req.input = M.follower(c, dir, not c.resumed), env, c.run.cwd, nil
  -- A stop waits for the follower's cancel and its grace before SIGKILL.
  req.grace = (tonumber(c.l.check) or M.CHECK) + (tonumber(c.l.grace) or M.GRACE) + 5
  local res = raymond.spawn(req)
  local text = raymond.read_file(dir .. "/launch-error", M.ERROR_MAX)
  if text and text:find("%S") then
    res.launch_error = text:gsub("%s+$", "")
  elseif res.spawn_error then
    res.launch_error = "cannot start the follower: " .. res.spawn_error
  end
  return res, dir
end

return M
