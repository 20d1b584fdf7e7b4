-- The run's spending limit: --budget USD (default 10.00; 0 means none).
--
-- Before each Claude invocation the remaining budget is passed on as
-- --max-budget-usd, so a single long turn cannot run far past the limit.
-- After each invocation, once the run's total cost exceeds the budget, the
-- run stops cleanly; `raymond --resume ID --budget MORE` carries on.
-- Scripts cost nothing.

local function budget(ev)
  local b = ev.run.budget_usd
  if type(b) ~= "number" or b <= 0 then return nil end
  return b
end

return {
  PreState = function(ev)
    local b = budget(ev)
    if not b then return nil end
    local left = b - ev.run.cost_usd
    -- Never ask for less than a cent: the CLI needs room to answer at all.
    return { maxBudgetUsd = math.max(left, 0.01) }
  end,

  Cost = function(ev)
    local b = budget(ev)
    if b and ev.run.cost_usd > b then
      return {
        continue = false,
        stopReason = string.format("budget exceeded: spent $%.4f of the $%.2f budget", ev.run.cost_usd, b),
      }
    end
  end,
}
