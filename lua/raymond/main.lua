-- raymond.main: the entry points the C core calls (src/cmd_run.c).
--
--   main(argv, cwd)          runs as the first coroutine
--   finish(crashed, signo)   runs after the event loop has drained;
--                            returns the process exit status
--
-- main reads the command line (raymond.cli) and runs the command's module
-- (raymond.commands).  A command that finishes at once (list, status,
-- help, an error) returns its exit status; one that leaves work in the
-- loop (run, resume) returns nil and what it left (the run), and its
-- finish(left, crashed, signo) gives the status once the loop drained.

local cli = require("raymond.cli")
local commands = require("raymond.commands")

local M = {}

local cmd
local code, left

function M.main(argv, cwd)
  local name, opts = cli.parse(argv, cwd)
  if not name then
    local err = opts
    require("raymond.console").error(err.msg, nil, err.hint)
    code = 1
    return
  end
  cmd = commands.load(name)
  code, left = cmd.main(opts)
end

function M.finish(crashed, signo)
  if code then return code end
  if cmd and cmd.finish then return cmd.finish(left, crashed, signo) end
  return 1
end

return M
