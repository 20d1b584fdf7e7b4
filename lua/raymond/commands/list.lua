-- raymond.commands.list: `raymond list`, and the old `raymond --list`:
-- every run of this project with its status, one a line.

local raymond = require("raymond")
local runstate = require("raymond.runstate")
local workspace = require("raymond.workspace")

local M = {}

M.usage = { "raymond list" }

M.help = [[
Lists the runs kept in .raymond/ at the project root, one a line: the id,
the status (running, completed, failed, stopped, interrupted), when it last
changed, and the workflow.  A run whose raymond died (kill -9, a crash)
shows as interrupted.  A state file that cannot be read shows as
unreadable, with the reason.]]

function M.main(opts)
  local ws = workspace.new(opts.cwd)
  local ids = workspace.list(ws)
  if #ids == 0 then
    raymond.stdout("No runs found.\n")
    return 0
  end
  for _, id in ipairs(ids) do
    local run, err = runstate.load(workspace.state_path(ws, id))
    local line
    if run then
      line = string.format("%-40s %-11s %s  %s\n", id, workspace.status(ws, id, run),
        (run.updated_at or ""):sub(1, 19), run.workflow)
    else
      line = string.format("%-40s %-11s %s\n", id, "unreadable", err)
    end
    -- The state file is untrusted text: its control characters are shown.
    raymond.stdout(raymond.printable(line))
  end
  return 0
end

return M
