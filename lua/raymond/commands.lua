-- raymond.commands: the table of raymond's commands, git style.
--
--   local cmd = commands.load("run")   -- the module, with name and summary
--
-- One line per command: its name, a one-line summary for `raymond help`,
-- and its module's name when that is not the command's.  Everything else about a command lives in its module,
-- raymond.commands.NAME, which returns a table:
--
--   usage       the usage lines, e.g. { "raymond status ID [--json]" }
--   args        its arguments in order: { key = field of opts, name =,
--               rest = true (the last: a list of all that are left),
--               optional = true, or missing = message and hint = }
--   extra_hint  the hint when more arguments are given
--   flags       the options it accepts, in groups for help text:
--               { "group title", "option", "option", ... } (see raymond.cli)
--   help        a paragraph saying what it does, for `raymond help NAME`
--   main(opts)  does the command; returns the exit status, or nil and
--               what it left working in the event loop (a run)
--   finish(left, crashed, signo)
--               optional: the exit status once the loop has drained
--
-- So a new command is one module plus one line here.  A first argument
-- naming a command is that command even when a folder of that name
-- exists; `raymond run NAME` or `raymond ./NAME` runs such a workflow.

local M = {}

M.list = {
  { name = "run", summary = "run a workflow (raymond WORKFLOW does the same)" },
  { name = "resume", summary = "continue a run that failed, stopped or was killed" },
  { name = "answer", summary = "answer a pending <ask> of a run, and continue it" },
  { name = "list", summary = "list runs with their status" },
  { name = "status", summary = "show a run's agents, stacks and hooks" },
  { name = "watch", summary = "follow a run another raymond drives until it ends" },
  { name = "prune", summary = "remove old or finished runs and all their files" },
  { name = "test", summary = "run workflows' test cases offline, with a scripted model" },
  { name = "serve", summary = "serve the project's runs over HTTP (an API with a token)" },
  { name = "lint", summary = "check a workflow without running it" },
  { name = "diagram", summary = "draw a workflow's states and transitions (Mermaid, HTML)" },
  { name = "convert", summary = "write a workflow folder or archive as one YAML file" },
  { name = "config", summary = "show the settings in effect, and where each comes from" },
  { name = "init-config", module = "init_config", summary = "write a config file with every setting, commented" },
  { name = "help", summary = "print this help, or a command's" },
  { name = "version", summary = "print the version" },
  { name = "hook-bridge", module = "hook_bridge", summary = "the Claude Code CLI's tool hook (not run by hand)" },
  { name = "launch-follow", module = "launch_follow", summary = "the follower of a step a cluster runs (not run by hand)" },
}

M.by_name = {}
for _, c in ipairs(M.list) do M.by_name[c.name] = c end

-- The command's module, with its name and summary filled in.
function M.load(name)
  local entry = M.by_name[name]
  local cmd = require("raymond.commands." .. (entry.module or name))
  cmd.name, cmd.summary = entry.name, entry.summary
  return cmd
end

-- The names in table order.
function M.names()
  local names = {}
  for i, c in ipairs(M.list) do names[i] = c.name end
  return names
end

return M
