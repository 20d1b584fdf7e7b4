-- raymond.commands.launch_follow: `raymond launch-follow DIR ...`.
-- The C side answers every `raymond launch-follow ...` itself, without
-- starting Lua (src/cmd_follow.c), since it runs once for every step a
-- cluster runs; this module gives the command its line in `raymond help`
-- and its help text.  Should a command line ever reach main here, it is a
-- launch error, as the C side reports one.

local raymond = require("raymond")

local M = {}

M.usage = { "raymond launch-follow DIR --name JOB [--check S] [--grace S] [--new] CMDS" }

M.help = [[
Run by raymond, not by hand: the local process of a step that a cluster
runs from the spool folder DIR (docs/cluster.md). CMDS are --submit N
ARG... --cancel N ARG... --status N ARG..., each command's N arguments
after its option. The follower submits DIR/task.sh with the submit
command, or attaches to the job JOB already submitted, or replays a
finished one; copies the task's stdout and stderr as they arrive; asks
the cluster about the job with the --status command every --check
seconds (10); on SIGTERM or SIGINT runs the --cancel command and waits
up to --grace seconds (20) for the task to end; and exits as the task
did. 125 means the launch failed (DIR/launch-error says why), 129 that
its raymond died (the job goes on for a resume to attach to).]]

function M.main()
  raymond.stderr("raymond launch-follow: not answered by this build\n")
  return 125
end

return M
