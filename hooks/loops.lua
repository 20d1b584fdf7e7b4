-- Loop detection: a markdown state that produces the same reply several
-- times in a row is stuck, and the run stops before it spends more.
--
--   ---
--   max_repeats: 5      # default 3 (--max-repeats); 0 turns the check off
--   ---
--
-- A state with max_visits and no max_repeats is left to its own limit
-- (hooks/visits.lua): the author said how often it may run, and where to
-- go then, so the same reply each time is not a reason to stop the run.
--
-- Only a fingerprint of the last reply is kept (agent.data.last_reply).
-- Script states are left alone: a polling script repeating itself is
-- doing its job.

return {
  frontmatter = { max_repeats = "number" },

  PostState = function(ev)
    if ev.kind ~= "markdown" then return nil end
    local fm = ev.frontmatter or {}
    if fm.max_visits ~= nil and fm.max_repeats == nil then
      ev.agent.data.last_reply = nil -- another state ran: what follows is not a repeat
      return nil
    end
    local limit = fm.max_repeats or ev.run.max_repeats or 3
    if limit <= 0 then return nil end
    local key = raymond.hash(ev.state .. "\0" .. (ev.output or ""))
    local last = ev.agent.data.last_reply
    local n = (last and last.key == key) and last.n + 1 or 1
    ev.agent.data.last_reply = { key = key, n = n }
    if n >= limit then
      ev.agent.data.last_reply = nil
      return { continue = false,
               stopReason = string.format("%s produced the same reply %d times in a row", ev.state, n) }
    end
  end,
}
