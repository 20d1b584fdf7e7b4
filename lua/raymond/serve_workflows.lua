-- raymond.serve_workflows: the workflows under raymond serve's roots, and
-- what lint and diagram say of one (GET /api/workflows, /api/workflow).
--
--   local list = workflows.list(roots)        -- {path, root, name, kind}...
--   local w, err = workflows.inspect(path, cwd)
--       -- {path, name, kind, entry, lint, errors, warnings, mermaid, svg}
--
-- A folder is a workflow when it holds an entry state (START.md,
-- START.sh, 1_START.md or 1_START.sh), as `raymond run` finds one; a
-- .zip archive and a YAML file with a `states:` key are workflows too.
-- The walk under each root goes MAX_DEPTH folders deep, past hidden
-- folders (.git, .raymond) and node_modules, and looks at MAX_ENTRIES
-- names at most, so a root over a large tree answers in bounded time.

local raymond = require("raymond")
local analyse = require("raymond.analyse")
local diagram = require("raymond.diagram")
local lint = require("raymond.lint")
local scope = require("raymond.scope")
local svg = require("raymond.svg")

local M = {}

M.MAX_DEPTH = 4
M.MAX_ENTRIES = 20000

local ENTRIES = { ["START.md"] = true, ["START.sh"] = true, ["1_START.md"] = true, ["1_START.sh"] = true }
local SKIP = { node_modules = true }

local function yaml_workflow(path, name)
  if not scope.is_yaml(name) or name:match("%.test%.ya?ml$") then return false end
  local text = raymond.read_file(path, 1024 * 1024)
  if not text then return false end
  return text:sub(1, 7) == "states:" or text:find("\nstates:", 1, true) ~= nil
end

local function walk(root, dir, depth, out, budget)
  local names = raymond.listdir(dir)
  if not names then return end
  for _, name in ipairs(names) do
    if ENTRIES[name] then
      out[#out + 1] = { path = dir, root = root, name = dir:match("([^/]+)$"), kind = "folder" }
      return
    end
  end
  for _, name in ipairs(names) do
    budget.left = budget.left - 1
    if budget.left < 0 then return end
    local path = dir .. "/" .. name
    local kind = name:sub(1, 1) ~= "." and raymond.stat(path, true)
    if kind == "dir" and depth < M.MAX_DEPTH and not SKIP[name] then
      walk(root, path, depth + 1, out, budget)
    elseif kind == "file" and scope.is_zip(name) then
      out[#out + 1] = { path = path, root = root, name = name, kind = "zip" }
    elseif kind == "file" and yaml_workflow(path, name) then
      out[#out + 1] = { path = path, root = root, name = name, kind = "yaml" }
    end
  end
end

function M.list(roots)
  local out, budget = {}, { left = M.MAX_ENTRIES }
  for _, root in ipairs(roots) do
    local real = raymond.realpath(root)
    if real then walk(real, real, 0, out, budget) end
  end
  return out
end

-- Lint's findings and the drawing of the workflow at `path`, as
-- `raymond lint --json` and `raymond diagram --html` give them (the
-- default hooks, no config file); or nil and {msg, hint}.
function M.inspect(path, cwd)
  local wf, err = analyse.load(path, cwd)
  if not wf then return nil, err end
  local diags = lint.sort(lint.run(wf))
  local g = diagram.graph(wf)
  analyse.close(wf)
  local found = setmetatable({}, { __jsontype = "array" })
  for i, d in ipairs(diags) do
    found[i] = { file = d.file, line = d.line, severity = d.severity, message = d.message, check = d.check }
  end
  local n = { error = 0, warning = 0 }
  for _, d in ipairs(diags) do n[d.severity] = (n[d.severity] or 0) + 1 end
  local name = path:match("([^/]+)/*$") or path
  return {
    path = path, name = name, kind = wf.kind, entry = wf.entry, lint = found, errors = n.error,
    warnings = n.warning, mermaid = diagram.mermaid(g), svg = svg.render(g, name),
  }
end

return M
