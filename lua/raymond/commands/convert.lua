-- raymond.commands.convert: `raymond convert WORKFLOW [--output FILE]`: a
-- workflow folder or .zip archive as one YAML workflow (raymond.convert).

local console = require("raymond.console")
local convert = require("raymond.convert")
local diagram = require("raymond.commands.diagram")

local M = {}

M.usage = { "raymond convert WORKFLOW [--output FILE]" }

M.args = {
  { key = "workflow", name = "WORKFLOW", missing = "no workflow given",
    hint = "raymond convert WORKFLOW: a workflow folder or a .zip archive of one" },
}
M.extra_hint = "give one WORKFLOW"

M.flags = {
  { "convert options", "output" },
}

M.help = [[
Writes the workflow folder or .zip archive WORKFLOW as one YAML workflow
(docs/yaml.md), on stdout or into --output FILE: raymond FILE.yaml then
runs as the folder does.  The states come in the order a run meets them;
frontmatter is copied as written under its state, prompts and scripts
become literal blocks, hooks.lua and hooks/*.lua become hooks: entries.
A folder holding other files (data a script reads) is refused, naming
them: a YAML workflow holds only states and hooks.

exit status: 0 written, 1 WORKFLOW cannot be converted]]

function M.main(opts)
  -- The error when it fails, else the warnings.
  local text, said = convert.yaml(opts.workflow, opts.cwd)
  if not text then
    console.error(said.msg, nil, said.hint)
    return 1
  end
  for _, w in ipairs(said) do console.warn("%s", w) end
  return diagram.output(opts, text)
end

return M
