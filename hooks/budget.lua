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
-- A turn whose tool calls go to hooks (turn.tool_hooks) is paused while
-- they decide, and a hook's raymond.evaluate then opens a turn of its
-- own.  That turn cannot wait for the paused one, which waits for it; so
-- the paused turn is given HOOKS_KEEP less than its share, left free for
-- what its hooks evaluate, and a turn that finds too little free with
-- only paused turns in flight (run.paused_turns) stops the run like any
-- other.  Nothing is lent out of a reservation: the paused turn's CLI
-- may still spend all of its cap once the hook has answered.
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

-- The part of its share a turn with tool hooks leaves free for their
-- raymond.evaluate calls; what they do not use is shared again by the
-- next turns.
local HOOKS_KEEP = 0.1

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

-- A stop decision with the resume command's raised budget: what was
-- spent, and `held` (what turns in flight reserved, when that is why no
-- turn can launch), on top of the budget given.
local function stop(ev, b, why, held)
  local more = math.ceil((ev.run.cost_usd + (held or 0) + b) * 100) / 100
  return { continue = false, stopReason = why, resumeArgs = string.format("--budget %.2f", more) }
end

return {
  PreTurn = function(ev)
    local b = budget(ev)
    if not b then return nil end
    local r = ev.run
    local free = b - r.cost_usd - r.reserved_usd
    if free < MIN_TURN then
      -- Turns in flight may give back what they reserved and did not use;
      -- not those paused in a tool hook, which may be waiting for this
      -- very turn.
      local paused = r.paused_turns or 0
      if r.open_turns > paused then return { waitForTurns = true } end
      return stop(ev, b, string.format("budget exhausted: spent $%.4f and $%.4f reserved by %d turn(s) in "
        .. "flight%s, of the $%s budget; a turn needs at least $%s", r.cost_usd, r.reserved_usd,
        r.open_turns, paused > 0 and string.format(" (%d paused in a tool hook)", paused) or "",
        usd(b), usd(MIN_TURN)), r.reserved_usd)
    end
    -- Every agent without a turn in flight may want one now.
    local waiting = math.max(1, r.agents - r.open_turns)
    local share = math.min(free, math.max(MIN_TURN, free / waiting))
    if ev.turn.tool_hooks then share = math.max(math.min(MIN_TURN, free), share * (1 - HOOKS_KEEP)) end
    return { maxBudgetUsd = share }
  end,

  Cost = function(ev)
    local b = budget(ev)
    if not b then return nil end
    if ev.run.cost_usd > b then
      return stop(ev, b, string.format("budget exceeded: spent $%.4f of the $%s budget", ev.run.cost_usd, usd(b)))
    end
  end,
}
