-- raymond.template: {{name}} placeholders in prompts.
--
-- One pass over the text: a placeholder whose name has a value is replaced
-- by it; any other stays exactly as written, so prompts may show {{x}} to
-- the model.  Values are never scanned again, so a payload that contains
-- "{{agent_id}}" reaches the model as written.

local M = {}

-- The variables a prompt of `agent` sees.
function M.vars(run, agent)
  local v = {}
  for k, x in pairs(agent.vars or {}) do v[k] = x end
  v.workflow_id = run.id
  v.agent_id = agent.id
  v.ask_id = agent.ask_id -- the state right after an answered <ask>
  v.task_folder = agent.task_folder
  if agent.input ~= nil then
    v.input = agent.input
    v.result = agent.input
  end
  -- A join's summary, in its first state: the gathered results (raymond.join).
  if agent.results ~= nil then v.results = agent.results end
  return v
end

function M.render(text, vars)
  return (text:gsub("{{([%w_]+)}}", function(name)
    local value = vars[name]
    if value == nil then return nil end
    return tostring(value)
  end))
end

return M
