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

return {
  frontmatter = { max_visits = "number", on_max_visits = "string" },

  PreState = function(ev)
    local fm = ev.frontmatter
    local max = fm and fm.max_visits
    if type(max) ~= "number" then return nil end
    local visits = ev.agent.data.visits or {}
    ev.agent.data.visits = visits
    local n = (visits[ev.state] or 0) + 1
    visits[ev.state] = n
    if n <= max then return nil end
    visits[ev.state] = nil -- a later return here starts a fresh count
    if type(fm.on_max_visits) == "string" and fm.on_max_visits ~= "" then
      return { transition = { tag = "goto", target = fm.on_max_visits },
               reason = string.format("%s reached max_visits (%d), so on_max_visits decides", ev.state, max) }
    end
    return { continue = false,
             stopReason = string.format("%s reached max_visits (%d)", ev.state, max) }
  end,
}
