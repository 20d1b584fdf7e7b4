-- Loop detection: a markdown state that produces the same reply several
-- times in a row is stuck, and the run stops before it spends more.
--
--   ---
--   max_repeats: 5      # default 3; 0 turns the check off for this state
--   ---
--
-- Only a fingerprint of the last reply is kept (agent.data.last_reply).
-- Script states are left alone: a polling script repeating itself is
-- doing its job.

return {
  frontmatter = { max_repeats = "number" },

  PostState = function(ev)
    if ev.kind ~= "markdown" then return nil end
    local limit = ev.frontmatter and ev.frontmatter.max_repeats or 3
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
