-- raymond.commands.status: `raymond status ID [--json]`, and the old
-- `raymond --status ID [--json]`: one run's agents, stacks and hooks, or
-- its whole state as JSON.

local raymond = require("raymond")
local hooks = require("raymond.hooks")
local join = require("raymond.join")
local resolve = require("raymond.resolve")
local runinfo = require("raymond.runinfo")
local text = require("raymond.text")

local M = {}

M.usage = { "raymond status ID [--json]" }

M.args = {
  { key = "status", name = "ID", missing = "no run id given",
    hint = "raymond status ID; list runs with: raymond list" },
}

M.options = {
  { name = "json", key = "json",
    help = "print the run's state file and journal as one JSON\nrecord, exactly as a resume would read it" },
}

M.flags = {
  { "status options", "json" },
}

M.help = [[
Shows the run ID: its --name, its workflow, status, steps, what it cost
against its budget, how long it ran, the hook files it loads, each agent
with the state it is at, the states its <result> returns to, its input,
its cost and the git worktree it works in, the worktrees kept when their
agents ended because they held uncommitted changes, and each join still
waiting for its workers.  With --json it prints the state file and
journal as one record, exactly as a resume would read it, for scripts
(cost is "cost", each agent's "cost", the budget "launch.budget", the
name "launch.name").  A run whose raymond died (kill -9, a crash) shows
as interrupted, not running.]]

-- "$1.2345 of a $10.00 budget", or "of no budget" when it has none.
local function cost_line(info)
  if info.budget > 0 then
    return string.format("%s of a $%.2f budget", text.usd(info.cost), info.budget)
  end
  return text.usd(info.cost) .. " (no budget)"
end

function M.main(opts)
  local _, info = runinfo.open(opts.cwd, opts.status)
  if not info then return 1 end
  local run = info.rec
  run.status = info.status
  if opts.json then
    raymond.stdout(raymond.json_encode(run) .. "\n")
    return 0
  end
  local out = {
    "Run:       " .. run.id,
    "Workflow:  " .. run.workflow .. " (entry " .. tostring(run.entry) .. ")",
    "Status:    " .. run.status .. (run.error and (" - " .. run.error) or ""),
    "Started:   " .. tostring(run.created_at),
    "Updated:   " .. tostring(run.updated_at),
    "Steps:     " .. run.steps,
    "Cost:      " .. cost_line(info),
    "Elapsed:   " .. runinfo.duration(info.elapsed) .. (info.status == "running" and " so far" or ""),
  }
  if run.launch.name then table.insert(out, 2, "Name:      " .. run.launch.name) end
  local scope, serr = resolve.reopen(run.workflow)
  local files, herr
  if scope then files, herr = hooks.discover(scope, run.launch) else herr = serr end
  local names = files and hooks.names(files) or { "(" .. tostring(herr) .. ")" }
  out[#out + 1] = "Hooks:     " .. (#names > 0 and table.concat(names, "\n           ") or "(none)")
  out[#out + 1] = "Agents:    " .. (#run.agents == 0 and "(none)" or "")
  for _, a in ipairs(run.agents) do
    local stack = {}
    for i, f in ipairs(a.stack) do stack[i] = f.state end
    local line = string.format("  %s at %s", a.id, a.state)
    -- An agent another workflow's tag took elsewhere (raymond.xworkflow).
    if a.workflow and a.workflow ~= run.workflow then
      line = line .. string.format(" in %s (depth %d)", a.workflow, a.depth or 0)
    end
    if #stack > 0 then line = line .. " (returns to " .. table.concat(stack, " < ") .. ")" end
    if a.input then line = line .. string.format(" [input: %q]", a.input:sub(1, 60)) end
    line = line .. ", " .. text.usd(a.cost) .. " spent"
    out[#out + 1] = line
    if a.status == "asking" and type(a.ask) == "table" then
      out[#out + 1] = string.format("    asking %s%s: %s", a.ask.id, a.ask.deadline
        and (", times out " .. require("raymond.runstate").iso(a.ask.deadline)
          .. (a.ask.timeout_next and (" to " .. a.ask.timeout_next) or "")) or "", a.ask.prompt)
    end
    if a.worktree and a.worktree.path then
      out[#out + 1] = string.format("    in worktree %s (branch %s)", a.worktree.path, a.worktree.branch)
    end
  end
  -- Worktrees of ended agents that hold work (raymond.isolation).
  for i, k in ipairs(run.kept_worktrees or {}) do
    out[#out + 1] = (i == 1 and "Kept:      " or "           ")
      .. string.format("%s (branch %s, agent %s): %s", k.path, k.branch, k.agent, k.why)
  end
  -- The joins still waiting for their workers (raymond.join).
  local gids = {}
  for gid in pairs(run.joins or {}) do gids[#gids + 1] = gid end
  table.sort(gids)
  for i, gid in ipairs(gids) do
    out[#out + 1] = (i == 1 and "Joins:     " or "           ") .. join.describe(gid, run.joins[gid])
  end
  if run.result then out[#out + 1] = "Result:    " .. run.result end
  -- The result and the error may quote a model: shown, not obeyed.
  raymond.stdout(raymond.printable(table.concat(out, "\n") .. "\n"))
  return 0
end

return M
