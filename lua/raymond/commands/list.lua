-- raymond.commands.list: `raymond list [--json] [--status S]`, and the
-- old `raymond --list`: every run of this project with its status, cost,
-- time and where its agents are, newest first.

local raymond = require("raymond")
local console = require("raymond.console")
local runinfo = require("raymond.runinfo")
local text = require("raymond.text")
local workspace = require("raymond.workspace")

local M = {}

M.usage = { "raymond list [--json] [--status S]" }

-- The statuses a run can show (raymond.workspace.status, and
-- raymond.runinfo's "unreadable").
M.STATUSES = { "running", "completed", "asking", "stopped", "interrupted", "failed", "unreadable" }

-- --status as list and prune read it: a filter, not the old form's
-- --status ID.
M.options = {
  { name = "status", key = "only", arg = "S", one_of = M.STATUSES, many = #M.STATUSES,
    too_many = { "filters", "each status needs to be given once" },
    help = "only runs with this status (running, completed,\nasking, stopped, interrupted, failed or unreadable); may\nbe given again" },
  { name = "json", key = "json", help = "print the runs as a JSON array, for scripts" },
}

M.flags = { { "list options", "json", "status", "recover" } }

-- The statuses of the runs raymond resume continues: a run saved as
-- running whose raymond died shows as interrupted.
M.RECOVERABLE = { "failed", "stopped", "interrupted", "asking" }

M.help = [[
Lists the runs kept in .raymond/ at the project root, newest first, under
a header line: the id, the status (running, completed, asking: waiting
for answers, stopped, interrupted, failed), what it cost, how long it ran (to its last change,
or until now while it runs), the states its live agents are at, and the
workflow.  A run whose raymond died (kill -9, a crash) shows as
interrupted.  A state file that cannot be read shows as unreadable, with
the reason.  With --json it prints the same as an array of objects
(id, name, status, cost_usd, budget_usd, elapsed_seconds, created_at,
updated_at, steps, states, workflow, error), numbers as numbers.  With
--recover (or raymond --recover) it prints only the ids of the runs
raymond resume would continue (failed, stopped, interrupted, asking), one a
line, or "No recoverable workflows found.".]]

-- Whether `info` passes the --status filters `only` (any of them).
function M.wanted(info, only)
  if not only then return true end
  for _, s in ipairs(only) do
    if info.status == s then return true end
  end
  return false
end

-- The fields of --json in the order written.
local FIELDS = { "id", "name", "status", "cost_usd", "budget_usd", "elapsed_seconds", "created_at", "updated_at",
                 "steps", "states", "workflow", "error" }

-- One value of --json.  The state's writer gives every float 17 digits
-- (0.0075 is 0.0074999999999999997), which serves a record read back but
-- not a script or a person; 14 digits hold every cost and time shown.
local function json_value(v)
  if type(v) == "number" then
    return math.type(v) == "integer" and tostring(v) or string.format("%.14g", v)
  end
  if type(v) == "table" then
    local items = {}
    for i, s in ipairs(v) do items[i] = raymond.json_encode(s) end
    return "[" .. table.concat(items, ",") .. "]"
  end
  return raymond.json_encode(v)
end

-- The fields of `info` for scripts.
local function json_fields(info)
  local t = { id = info.id, status = info.status, error = info.error }
  if info.rec then
    t.workflow, t.cost_usd, t.budget_usd = info.workflow, info.cost, info.budget
    t.name = info.rec.launch.name
    t.elapsed_seconds = math.floor(info.elapsed * 1000 + 0.5) / 1000
    t.created_at, t.updated_at = info.rec.created_at, info.rec.updated_at
    t.steps, t.states = info.rec.steps, info.states
  end
  return t
end

-- One object of --json (also raymond serve's GET /api/runs).
local function json_object(info)
  local fields, parts = json_fields(info), {}
  for _, k in ipairs(FIELDS) do
    if fields[k] ~= nil then parts[#parts + 1] = string.format("%q:%s", k, json_value(fields[k])) end
  end
  return "{" .. table.concat(parts, ",") .. "}"
end
M.json_object = json_object

-- The columns of one run; NAME last, when `names` (some run has one).
local function row(info, cwd, names)
  if not info.rec then return { info.id, info.status, info.error } end
  local r = { info.id, info.status, text.usd(info.cost), runinfo.duration(info.elapsed),
              runinfo.short_states(info.states), console.rel(info.workflow, cwd) }
  if names then r[#r + 1] = info.rec.launch.name or "-" end
  return r
end

-- `rows` as lines, each column as wide as its widest cell; the last
-- column, and a row's last cell, unpadded.
local function table_lines(rows)
  local width = {}
  for _, r in ipairs(rows) do
    for i = 1, #r - 1 do width[i] = math.max(width[i] or 0, #r[i]) end
  end
  local lines = {}
  for n, r in ipairs(rows) do
    local cells = {}
    for i, c in ipairs(r) do
      cells[i] = i < #r and c .. string.rep(" ", width[i] - #c) or c
    end
    lines[n] = table.concat(cells, "  ")
  end
  return lines
end

-- --recover, as the original raymond prints it: the ids of the runs a
-- resume would continue, one a line, for scripts.
local function recover(runs)
  local ids = {}
  for _, info in ipairs(runs) do
    if M.wanted(info, M.RECOVERABLE) then ids[#ids + 1] = info.id .. "\n" end
  end
  raymond.stdout(#ids == 0 and "No recoverable workflows found.\n" or table.concat(ids))
  return 0
end

function M.main(opts)
  if opts.recover and (opts.json or opts.only) then
    console.error("--recover prints run ids only; it does not go with --json or --status", nil,
      "raymond list --recover")
    return 1
  end
  local ws = workspace.new(opts.cwd)
  local runs = {}
  for _, info in ipairs(runinfo.all(ws)) do
    if M.wanted(info, opts.only) then runs[#runs + 1] = info end
  end
  if opts.recover then return recover(runs) end
  if opts.json then
    local items = {}
    for i, info in ipairs(runs) do items[i] = json_object(info) end
    raymond.stdout("[" .. table.concat(items, ",\n") .. "]\n")
    return 0
  end
  if #runs == 0 then
    raymond.stdout(opts.only and "No runs with that status.\n" or "No runs found.\n")
    return 0
  end
  local names = false
  for _, info in ipairs(runs) do names = names or (info.rec and info.rec.launch.name ~= nil) end
  local rows = { { "ID", "STATUS", "COST", "ELAPSED", "STATES", "WORKFLOW", names and "NAME" or nil } }
  for _, info in ipairs(runs) do rows[#rows + 1] = row(info, opts.cwd, names) end
  -- The state files are untrusted text: their control characters are shown.
  raymond.stdout(raymond.printable(table.concat(table_lines(rows), "\n") .. "\n"))
  return 0
end

return M
