-- raymond.commands.run: `raymond run WORKFLOW [options]`, and the old
-- `raymond WORKFLOW [options]`: start a new run.
--
-- main(opts) hands the options to the engine, which starts the agents and
-- returns while they work; finish() is the engine's, after the loop.

local raymond = require("raymond")
local cli = require("raymond.cli")
local commands = require("raymond.commands")

local M = {}

M.usage = { "raymond run WORKFLOW [options]", "raymond WORKFLOW [options]" }

M.args = {
  { key = "workflow", name = "WORKFLOW", missing = "no workflow given",
    hint = "raymond run WORKFLOW (a folder or a state file); see raymond help run" },
}
M.extra_hint = "give one WORKFLOW; quote --input text that has spaces"

M.flags = {
  { "run options", "input", "workflow-id", "timeout", "max-parallel", "max-agents", "allow-cd", "no-lint" },
  cli.groups.markdown,
  cli.groups.hooks,
  cli.groups.output,
}

M.help = [[
Runs WORKFLOW: a folder (entry state 1_START or START), a .zip archive of
one, or one state file.  The run gets an id, is saved in .raymond/ at the
project root after every step, and can be continued with raymond resume ID
if it fails, stops or is killed.  A workflow folder named like a command
runs with raymond run NAME or raymond ./NAME.  Before it starts, the error
checks of raymond lint run; a workflow with an error is not started
(--no-lint starts it anyway).

exit status: 0 completed (or stopped by a hook), 1 error, 130 interrupted]]

-- The number of single-letter edits (insert, delete, change) from a to b.
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local change = prev[j - 1] + (a:byte(i) == b:byte(j) and 0 or 1)
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, change)
    end
    prev = cur
  end
  return prev[#b]
end

-- For a bare WORKFLOW that does not exist: the command it may be a typo
-- of, within two edits and fewer than the command's length.
local function typo_hint(word)
  if word:find("/", 1, true) or raymond.stat(word) then return nil end
  local best, best_d
  for _, name in ipairs(commands.names()) do
    local d = distance(word:lower(), name)
    if d <= 2 and d < #name and (not best_d or d < best_d) then best, best_d = name, d end
  end
  if not best then return nil end
  return string.format("did you mean raymond %s? commands: %s", best,
    table.concat(commands.names(), ", "))
end

function M.main(opts)
  if not opts.no_lint and not require("raymond.commands.lint").check_before_run(opts) then return 1 end
  local run, err = require("raymond.engine").start(opts)
  if run then return nil, run end
  local hint = err.hint or (opts.implied and typo_hint(opts.workflow))
  require("raymond.console").error(err.msg, err.detail, hint)
  return 1
end

function M.finish(run, crashed, signo)
  return require("raymond.engine").finish(run, crashed, signo)
end

return M
