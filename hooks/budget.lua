-- The run's spending limit: --budget USD (default 10.00; 0 means none).
--
-- The budget bounds the whole run, agents in parallel and raymond.evaluate
-- included.  Before each Claude turn launches (PreTurn), the part of the
-- budget neither spent nor reserved by turns in flight is shared among the
-- agents that hold no reservation, and this turn's share becomes its
-- --max-budget-usd; raymond reserves it until the turn ends.  When what is
-- left cannot pay for one more turn (MIN_TURN), the turn waits for a turn
-- in flight to end and give back what it did not use; with none in
-- flight, it is not launched and the run stops.  A turn that used its share (the CLI's
-- error_max_budget_usd) is continued by raymond under a new PreTurn, so
-- agents share what is left until none can pay for a turn.  The run also
-- stops once its cost went past the budget.
--
-- The CLI checks its cap after each API call, so a turn may pass its share
-- by the cost of one call: the run's total stays within the budget plus
-- one API call for each turn that was running when the budget ran out.
--
-- Every stop is resumable and says how: `raymond --resume ID --budget N`,
-- N being what was spent plus the budget given before.  Scripts cost
-- nothing.

-- The least a turn is launched with: a cent, about what one short API call
-- costs; with less left the run stops instead.
local MIN_TURN = 0.01

local function budget(ev)
  local b = ev.run.budget_usd
  if type(b) ~= "number" or b <= 0 then return nil end
  return b
end

-- Dollars as a person writes them: cents, or more digits when cents would
-- round the amount.
local function usd(x)
  local s = string.format("%.2f", x)
  return tonumber(s) == x and s or string.format("%.4f", x)
end

-- A stop decision with the resume command's raised budget.
local function stop(ev, b, why)
  local more = math.ceil((ev.run.cost_usd + b) * 100) / 100
  return { continue = false, stopReason = why, resumeArgs = string.format("--budget %.2f", more) }
end

return {
  PreTurn = function(ev)
    local b = budget(ev)
    if not b then return nil end
    local r = ev.run
    local free = b - r.cost_usd - r.reserved_usd
    if free < MIN_TURN then
      -- Turns in flight may give back what they reserved and did not use.
      if r.open_turns > 0 then return { waitForTurns = true } end
      return stop(ev, b, string.format("budget exhausted: spent $%.4f and $%.4f reserved by %d turn(s) in "
        .. "flight, of the $%s budget; a turn needs at least $%s", r.cost_usd, r.reserved_usd,
        r.open_turns, usd(b), usd(MIN_TURN)))
    end
    -- Every agent without a turn in flight may want one now.
    local waiting = math.max(1, r.agents - r.open_turns)
    return { maxBudgetUsd = math.min(free, math.max(MIN_TURN, free / waiting)) }
  end,

  Cost = function(ev)
    local b = budget(ev)
    if not b then return nil end
    if ev.run.cost_usd > b then
      return stop(ev, b, string.format("budget exceeded: spent $%.4f of the $%s budget", ev.run.cost_usd, usd(b)))
    end
  end,
}
