-- A team policy: sonnet while the budget lasts, haiku once half of it is
-- spent, and a note in the log when the switch happens.

return {
  PreState = function(ev)
    if ev.kind ~= "markdown" then return nil end
    local budget = ev.run.budget_usd
    if type(budget) ~= "number" or budget <= 0 then return nil end
    if ev.run.cost_usd > budget / 2 then
      if not ev.run.data.cheap then
        ev.run.data.cheap = true
        raymond.log(string.format("half the $%.2f budget is spent: switching to haiku", budget))
      end
      return { model = "haiku" }
    end
    return { model = "sonnet" }
  end,
}
