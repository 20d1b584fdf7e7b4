-- Iteration limits from frontmatter, without writing Lua:
--
--   ---
--   max_visits: 5
--   on_max_visits: COMMIT.md     # optional; without it the run stops
--   ---
--
-- Each agent counts its visits to every state (in agent.data.visits, so
-- the count survives a crash and --resume).  The visit after the limit is
-- not run: the agent goes to on_max_visits instead, or the run stops.
--
-- A visit is counted once even when it runs twice.  The count is saved
-- before the state's work starts, and a crash before the state's
-- transition is saved makes --resume run the state again: the same visit.
-- So the state being visited is kept with the count (agent.data.visiting)
-- until the transition that leaves it, which is saved together with it
-- (PostTransition); a PreState that finds it there counts nothing.

return {
  frontmatter = { max_visits = "number", on_max_visits = "string" },

  PreState = function(ev)
    local fm = ev.frontmatter
    local max = fm and fm.max_visits
    if type(max) ~= "number" then return nil end
    local data = ev.agent.data
    local visits = data.visits or {}
    data.visits = visits
    if data.visiting ~= ev.state then
      visits[ev.state] = (visits[ev.state] or 0) + 1
      data.visiting = ev.state
    end
    local n = visits[ev.state]
    if n <= max then return nil end
    if type(fm.on_max_visits) == "string" and fm.on_max_visits ~= "" then
      -- A later return here starts a fresh count, once the route is taken.
      data.leaving = ev.state
      return { transition = { tag = "goto", target = fm.on_max_visits },
               reason = string.format("%s reached max_visits (%d), so on_max_visits decides", ev.state, max) }
    end
    -- The run stops before the state: a resume runs it, counted afresh.
    visits[ev.state], data.visiting = nil, nil
    return { continue = false,
             stopReason = string.format("%s reached max_visits (%d)", ev.state, max) }
  end,

  PostTransition = function(ev)
    local data = ev.agent.data
    if data.visiting == nil and data.leaving == nil then return nil end
    if data.leaving and data.visits then data.visits[data.leaving] = nil end
    data.visiting, data.leaving = nil, nil
  end,
}
