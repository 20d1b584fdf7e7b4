-- raymond.states: the kinds of state, one entry per kind.
--
-- A state file's extension says its kind, and each kind is a module
-- under raymond.states exposing
--
--   run(run, agent) -> outcome
--
-- where `run` is the raymond.run object and the outcome one of
--
--   { kind = "transition", transition = tr }   a decided transition
--   { kind = "error", msg =, detail =, hint = } the run fails
--   { kind = "stopped" }                       the run is stopping
--
-- The engine knows only outcomes.  Adding a kind of state is one entry
-- here plus its module.

local M = {}

M.list = {
  { ext = "md", name = "markdown", module = "raymond.states.markdown" },
  { ext = "sh", name = "script", module = "raymond.states.script" },
}

M.by_ext = {}
for _, k in ipairs(M.list) do M.by_ext[k.ext] = k end

-- The kind entry of state file `name`, or nil.
function M.of(name)
  return M.by_ext[name:match("%.(%w+)$") or ""]
end

-- Outcomes.
function M.transition(tr) return { kind = "transition", transition = tr } end
function M.error(msg, detail, hint) return { kind = "error", msg = msg, detail = detail, hint = hint } end
M.STOPPED = { kind = "stopped" }

-- Run `agent`'s current state.
function M.run(run, agent)
  local k = M.of(agent.state)
  if not k then return M.error("state " .. agent.state .. " has no kind raymond can run") end
  return require(k.module).run(run, agent)
end

return M
