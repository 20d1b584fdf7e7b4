-- raymond.commands.lint: `raymond lint WORKFLOW [--json] [--level L]`:
-- the static checks of raymond.lint, printed like a compiler's.
--
-- Also check_before_run(opts), which `raymond run` calls: the error
-- checks alone, printed on stderr; false when the run must not start.

local raymond = require("raymond")
local analyse = require("raymond.analyse")
local console = require("raymond.console")
local lint = require("raymond.lint")

local M = {}

M.usage = { "raymond lint WORKFLOW [--json] [--level info|warning|error]" }

M.args = {
  { key = "workflow", name = "WORKFLOW", missing = "no workflow given",
    hint = "raymond lint WORKFLOW (a folder, a .zip archive or a state file)" },
}
M.extra_hint = "give one WORKFLOW"

M.options = {
  { name = "json", key = "json",
    help = "print the findings as a JSON array of {file, line,\nseverity, message, check}" },
}

M.flags = {
  { "lint options", "json", "level", "hooks", "no-default-hooks", "no-config" },
}

M.help = [[
Checks WORKFLOW (a folder, a .zip archive, a YAML workflow or a state
file) without running it: every state file, its frontmatter and the tags
it writes, the transitions between states, and the hook files, as a run
would load them (--hooks and --no-default-hooks as for a run, and
the config files' hooks and no_default_hooks unless --no-config; a
launcher a state names must be built in or under the config's
launchers:).  Each
finding is one line, file:line: severity: message [check], then a summary;
--json prints them as a JSON array.  --level (default warning) hides the
findings below it; the summary counts them all.  raymond run does the error
checks before it starts (--no-lint skips them).  docs/lint.md lists every
check and how to fix what it finds.

exit status: 0 no error (warnings allowed), 1 an error found, or WORKFLOW
cannot be read]]

-- The model of opts.workflow as a run with these options would load it.
local function load(opts)
  local extra = {}
  for i, path in ipairs(opts.hooks or {}) do
    extra[i] = path:sub(1, 1) == "/" and path or (opts.cwd .. "/" .. path)
  end
  local wf, err = analyse.load(opts.workflow, opts.cwd, { hooks = extra, no_default_hooks = opts.no_default_hooks })
  -- The config's launchers, which a state's launcher may name.
  if wf then wf.launchers = opts.launchers or {} end
  return wf, err
end
M.load = load

local function rel(cwd)
  return function(path) return console.rel(path, cwd) end
end

local function json(diags, cwd)
  if #diags == 0 then return "[]" end
  local list = {}
  for i, d in ipairs(diags) do
    list[i] = { file = console.rel(d.file, cwd), line = d.line or raymond.cjson.null,
      severity = d.severity, message = d.message, check = d.check }
  end
  return raymond.json_encode(list)
end

-- The config files' settings the lint reads: those that choose the hooks,
-- and the launchers a state may name.
local SETTINGS = { hooks = true, no_default_hooks = true, launchers = true }

function M.main(opts)
  local from, cerr = require("raymond.config").settle(opts, SETTINGS)
  if not from then
    console.error(cerr.msg, nil, cerr.hint)
    return 1
  end
  local wf, err = load(opts)
  if not wf then
    console.error(err.msg, nil, err.hint)
    return 1
  end
  local diags = lint.sort(lint.run(wf))
  analyse.close(wf)
  local shown = lint.filter(diags, opts.level or "warning")
  if opts.json then
    raymond.stdout(json(shown, opts.cwd) .. "\n")
  else
    local out = {}
    for i, d in ipairs(shown) do out[i] = lint.line(d, rel(opts.cwd)) end
    out[#out + 1] = lint.summary(diags)
    raymond.stdout(raymond.printable(table.concat(out, "\n")) .. "\n")
  end
  return lint.errors(diags) > 0 and 1 or 0
end

-- The checks a run makes before it starts: the errors in what the run can
-- meet (not in states it cannot reach), but not those the engine reports
-- itself in its own words (no or two entry states).
local ENGINE_REPORTS = { ["no-entry-point"] = true, ["ambiguous-entry-point"] = true }

-- Returns true when the run may start.  A WORKFLOW that cannot be read is
-- left to the engine, which says why.  `wf`, when given, is the model
-- M.load made, which the caller closes.
function M.check_before_run(opts, wf)
  local own = wf == nil
  wf = wf or load(opts)
  if not wf then return true end
  local diags = lint.reachable_only(wf, lint.run(wf, "error"))
  if own then analyse.close(wf) end
  local errors = {}
  for _, d in ipairs(diags) do
    if not ENGINE_REPORTS[d.check] then errors[#errors + 1] = d end
  end
  if #errors == 0 then return true end
  lint.sort(errors)
  for _, d in ipairs(errors) do console.say(lint.line(d, rel(opts.cwd)) .. "\n") end
  console.error(string.format("%s has %s; the run was not started", opts.workflow, lint.summary(errors)),
    nil, "fix them (raymond lint " .. opts.workflow .. " shows every finding), or start anyway with --no-lint")
  return false
end

return M
