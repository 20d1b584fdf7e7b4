-- raymond.commands.run: `raymond run WORKFLOW [options]`, and the old
-- `raymond WORKFLOW [options]`: start a new run.
--
-- main(opts) hands the options to the engine, which starts the agents and
-- returns while they work; finish() is the engine's, after the loop.

local raymond = require("raymond")
local cli = require("raymond.cli")
local commands = require("raymond.commands")
local text = require("raymond.text")

local M = {}

M.usage = { "raymond run WORKFLOW [options]", "raymond WORKFLOW [options]" }

M.args = {
  { key = "workflow", name = "WORKFLOW", missing = "no workflow given",
    hint = "raymond run WORKFLOW (a folder or a state file); see raymond help run" },
}
M.extra_hint = "give one WORKFLOW; quote --input text that has spaces"

M.flags = {
  { "run options", "input", "workflow-id", "name", "timeout", "max-parallel", "max-agents", "allow-cd", "on-ask", "no-lint", "record",
    "launcher" },
  cli.groups.markdown,
  cli.groups.hooks,
  cli.groups.output,
  cli.groups.config,
}

M.help = [[
Runs WORKFLOW: a folder (entry state 1_START or START), a .zip archive of
one, a YAML workflow (FILE.yaml, see docs/yaml.md), either of the last two
as FILE/STATE to start at STATE, or one state file.  The run gets an id, is saved in .raymond/ at the
project root after every step, and can be continued with raymond resume ID
if it fails, stops or is killed.  A workflow folder named like a command
runs with raymond run NAME or raymond ./NAME.  Options not given take their
values from the config files (raymond help config).  Before it starts, the
error checks of raymond lint run; a workflow with an error is not started
(--no-lint starts it anyway).

A workflow whose states can <ask> a person is refused unless --on-ask
pause is given (or on_ask: pause in a config file).

States run on this machine unless a launcher says otherwise: --launcher
for the run, launcher: in a state's frontmatter or a script's header
block, <fork launcher=NAME> for a worker; slurm, ssh, kubernetes or one
defined under launchers: in a config file (docs/cluster.md).

exit status: 0 completed, 1 error, 2 waiting for answers (--on-ask pause),
3 stopped resumably (a hook, a usage limit with --no-wait), 130 interrupted]]

-- For a bare WORKFLOW that does not exist: the command it may be a typo
-- of, within two edits and fewer than the command's length.
local function typo_hint(word)
  if word:find("/", 1, true) or raymond.stat(word) then return nil end
  local best, best_d
  for _, name in ipairs(commands.names()) do
    local d = text.distance(word:lower(), name)
    if d <= 2 and d < #name and (not best_d or d < best_d) then best, best_d = name, d end
  end
  if not best then return nil end
  return string.format("did you mean raymond %s? commands: %s", best,
    table.concat(commands.names(), ", "))
end

-- False when the workflow can <ask> and the run takes no questions: the
-- error names where (raymond.ask.refusal).
local function refuse_asks(opts, wf)
  local console = require("raymond.console")
  local err = require("raymond.ask").refusal(wf, opts.workflow, function(p) return console.rel(p, opts.cwd) end)
  if not err then return true end
  console.error(err.msg, nil, err.hint)
  return false
end

-- The checks before a run, on one static model of the workflow: lint's
-- errors (unless --no-lint) and, under --on-ask reject, the asks.  A
-- workflow that cannot be read is left to the engine, which says why.
local function checks_pass(opts)
  local reject = (opts.on_ask or "reject") == "reject"
  if opts.no_lint and not reject then return true end
  local lint_cmd = require("raymond.commands.lint")
  local wf = lint_cmd.load(opts)
  if not wf then return true end
  local ok = (opts.no_lint or lint_cmd.check_before_run(opts, wf)) and (not reject or refuse_asks(opts, wf))
  require("raymond.analyse").close(wf)
  return ok
end

function M.main(opts)
  local from, cerr = require("raymond.config").settle(opts)
  if not from then
    require("raymond.console").error(cerr.msg, nil, cerr.hint)
    return 1
  end
  -- A file may turn this on unseen, so the run says where it came from.
  local dsp, console = from.dangerously_skip_permissions, require("raymond.console")
  console.quiet = opts.quiet
  if dsp.value and dsp.source ~= "command line" then
    console.progress("raymond: dangerously_skip_permissions is on (%s)", dsp.source)
  end
  -- A config file's launcher: that names none is its line's error.
  local lf = from.launcher
  local launchers = require("raymond.launchers")
  if lf.value and lf.source:find(":%d+$") and not launchers.known(lf.value, opts.launchers or {}) then
    console.error(string.format("%s: launcher %s: %s", lf.source, lf.value, launchers.unknown_text(opts.launchers or {})),
      nil, "fix the file, or give --launcher; see docs/cluster.md")
    return 1
  end
  if not checks_pass(opts) then return 1 end
  local run, err = require("raymond.engine").start(opts)
  if run then
    require("raymond.live").title(opts.name)
    return nil, run
  end
  local hint = err.hint or (opts.implied and typo_hint(opts.workflow))
  require("raymond.console").error(err.msg, err.detail, hint)
  return 1
end

function M.finish(run, crashed, signo)
  return require("raymond.engine").finish(run, crashed, signo)
end

return M
