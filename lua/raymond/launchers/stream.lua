-- raymond.launchers.stream: the stream kind of launch (ssh, kubernetes,
-- templates with run:).  raymond starts the launcher's run: argv as the
-- step's child and writes the task script (raymond.launchers.script) to
-- its stdin: the remote shell checks the directory and the program,
-- exports the variables and runs the command, whose output comes back
-- through the launcher's own stdout and stderr as it is printed.  A
-- failed check is one stderr line, "raymond-launch-error: TEXT", and exit
-- status 125.  After a stop or a timeout, which end the local process
-- only, the launcher's cancel: runs once, so the remote command ends too.

local raymond = require("raymond")
local script = require("raymond.launchers.script")
local template = require("raymond.launchers.template")

local M = {}

function M.run(c)
  local req = {}
  for k, v in pairs(c.req) do req[k] = v end
  req.argv = template.expand(c.l.run, c.values, c.resources)
  req.input = script.stream(c.req.cwd or c.run.cwd, c.env, c.name, c.req.argv, c.req.input)
  req.env, req.cwd = c.local_env, c.run.cwd
  local res = raymond.spawn(req)
  if res.exit == 125 then
    res.launch_error = (res.stderr_tail or ""):match("raymond%-launch%-error: ([^\n]*)")
  elseif res.exit == 255 and c.l.module and c.l.module.name == "ssh" then
    -- ssh's own failures (no route, refused key) end it with 255.
    local last = (res.stderr_tail or ""):gsub("%s+$", ""):match("([^\n]*)$")
    res.launch_error = string.format("cannot reach %s: %s", tostring(c.l.host), last ~= "" and last
      or "ssh exited with status 255")
  end
  -- A launch the stop caught before it started (no duration) has nothing to cancel.
  if (res.killed or res.timed_out) and res.duration and c.cancel then
    require("raymond.launchers").run_once(c.cancel, c.local_env)
  end
  return res
end

return M
