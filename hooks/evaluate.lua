-- An evaluator from frontmatter, without writing Lua: after the state's
-- turn, a second, stateless model call reads its output and picks the
-- next state.
--
--   ---
--   evaluate:
--     model: haiku
--     prompt: |
--       Did this review find problems? Answer YES or NO.
--       {{output}}
--     routes:
--       YES: IMPLEMENT
--       NO: COMMIT
--     default: COMMIT        # optional: when no route matches
--   ---
--
-- {{output}} is the state's reply.  The answer picks the route whose key
-- it equals (ignoring case and white space), else the first key, in name
-- order, that it contains as a word.  With no match and no default, the
-- state's own tag decides.  The evaluation's cost counts against the
-- budget.

local trim = raymond.trim

local function route(routes, answer)
  local a = trim(answer):upper()
  local keys = {}
  for k in pairs(routes) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    if a == trim(k):upper() then return routes[k] end
  end
  for _, k in ipairs(keys) do
    local K = trim(k):upper():gsub("%p", "%%%0")
    if a:find("%f[%w]" .. K .. "%f[%W]") then return routes[k] end
  end
  return nil
end

return {
  frontmatter = { evaluate = "table" },

  PostState = function(ev)
    local e = ev.frontmatter and ev.frontmatter.evaluate
    if type(e) ~= "table" then return nil end
    if type(e.prompt) ~= "string" or type(e.routes) ~= "table" then
      error(ev.state .. ": evaluate needs a prompt and routes (answer: STATE)", 0)
    end
    local prompt = e.prompt:gsub("{{output}}", function() return ev.output or "" end)
    local answer, err = raymond.evaluate({ prompt = prompt, model = e.model or "haiku", effort = e.effort })
    if not answer then error(ev.state .. ": the evaluator failed: " .. tostring(err), 0) end
    local target = route(e.routes, answer) or e.default
    if not target then
      raymond.log(string.format("%s: evaluator answered %q, which matches no route", ev.state, answer))
      return nil
    end
    return { transition = { tag = "goto", target = target },
             reason = string.format("the evaluator answered %q", answer) }
  end,
}
