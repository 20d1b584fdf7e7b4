-- raymond.coverage: which states of a workflow its test cases ran and
-- which of its transitions they took (`raymond test --coverage`).
--
--   local cov = coverage.compute(wf, events)
--   -- wf: the workflow's static model (raymond.analyse)
--   -- events: the trace lines of all its cases (raymond.trace)
--   -- cov.states   { {name=, ran=} } every state file, sorted
--   -- cov.ran      how many of them ran
--   -- cov.edges    { {state=, edge=, taken=} } every transition the
--   --              model lists (analyse's edges, dynamic ones left out)
--   -- cov.taken    how many of them were taken
--   -- cov.percent  taken / #edges, in percent (100 with no edges)
--   -- cov.dynamic  { "FROM -> tag TO" } transitions taken that match no
--   --              edge of the model: a state computed at run time
--   --              ($NEXT in a script, {{name}} in a prompt), or a hook
--   --              of the workflow's own that routes
--   local text = coverage.report(shown, cov, cwd)
--
-- A transition is an edge of the static model: a tag written in a state
-- or in its allowed_transitions (via "tag"), or a route a default hook
-- takes from frontmatter (via "hook": on_max_visits, evaluate's routes).
-- A step of the trace takes the edge of its state with its tag and way
-- (tag or hook) that leads where the agent went: goto and reset by their
-- target; call and function by their target (and return, when both
-- name one); fork by the parent's next and the workers' states; result,
-- ask and the -workflow tags, whose agent goes somewhere the edge does
-- not name (a caller's return state, the other workflow's entry), by
-- the tag alone.  Steps of states of another workflow (a -workflow tag
-- took the agent there) belong to that workflow, not this one.

local console = require("raymond.console")

local M = {}

local TAG_ONLY = { result = true, ask = true, ["call-workflow"] = true, ["function-workflow"] = true,
                   ["fork-workflow"] = true, ["reset-workflow"] = true }

local function has(list, x)
  for _, v in ipairs(list or {}) do
    if v == x then return true end
  end
  return false
end

-- Whether step `e` (a trace step line) took `edge`.
function M.matches(edge, e)
  if (edge.via or "tag") ~= (e.via or "tag") then return false end
  -- <fork> tags and a <goto> in one output are one transition: the
  -- parent's continuation is the goto's target.
  if edge.tag == "goto" and e.tag == "fork" and e.forks then return edge.target == e.to end
  if edge.tag ~= e.tag then return false end
  if TAG_ONLY[edge.tag] then return true end
  if edge.tag == "fork" then
    -- A fork without next= continues where the output's <goto> says.
    local next_ = e.next or e.to
    return (edge.next == nil or edge.next == next_) and (edge.target == nil or e.forks == nil or has(e.forks, edge.target))
  end
  if edge.target ~= e.to then return false end
  if (edge.tag == "call" or edge.tag == "function") and edge.ret and e.ret and edge.ret ~= e.ret then
    return false
  end
  return true
end

local function own(wf, e)
  return e.wf == nil or e.wf == wf.path
end

local function describe_step(e)
  return string.format("%s -> %s%s%s", e.state, e.via == "hook" and "(hook) " or "", e.tag,
    (e.to or "") ~= "" and (" " .. e.to) or "")
end

function M.compute(wf, events)
  local ran, cov = {}, { states = {}, edges = {}, ran = 0, taken = 0, dynamic = {} }
  for _, e in ipairs(events) do
    if (e.ev == "start" or e.ev == "step") and own(wf, e) then ran[e.state] = true end
  end
  for _, st in ipairs(wf.states) do
    cov.states[#cov.states + 1] = { name = st.name, ran = ran[st.name] == true }
    if ran[st.name] then cov.ran = cov.ran + 1 end
    for _, edge in ipairs(st.edges) do
      if not edge.dynamic then cov.edges[#cov.edges + 1] = { state = st, edge = edge, taken = false } end
    end
  end
  local by_state, seen_dynamic = {}, {}
  for _, c in ipairs(cov.edges) do
    by_state[c.state.name] = by_state[c.state.name] or {}
    table.insert(by_state[c.state.name], c)
  end
  for _, e in ipairs(events) do
    if e.ev == "step" and own(wf, e) and wf.by_name[e.state] then
      local hit = false
      for _, c in ipairs(by_state[e.state] or {}) do
        if M.matches(c.edge, e) then
          hit = true
          if not c.taken then
            c.taken = true
            cov.taken = cov.taken + 1
          end
        end
      end
      local text = describe_step(e)
      if not hit and not seen_dynamic[text] then
        seen_dynamic[text] = true
        cov.dynamic[#cov.dynamic + 1] = text
      end
    end
  end
  cov.percent = #cov.edges == 0 and 100 or 100 * cov.taken / #cov.edges
  return cov
end

-- How an edge is listed: FROM -> tag TARGET, with what else it names.
function M.describe(st, edge)
  local parts = { st.name, "->" }
  parts[#parts + 1] = edge.tag
  local target = edge.target or edge.raw_target or edge.raw
  if target then parts[#parts + 1] = target end
  if edge.tag == "result" and edge.label then parts[#parts + 1] = string.format("%q", edge.label) end
  if edge.ret or edge.raw_ret then parts[#parts + 1] = "(return " .. (edge.ret or edge.raw_ret) .. ")" end
  if edge.next or edge.raw_next then parts[#parts + 1] = "(next " .. (edge.next or edge.raw_next) .. ")" end
  if edge.via == "hook" then parts[#parts + 1] = "(hook: " .. (edge.label or edge.from) .. ")" end
  return table.concat(parts, " ")
end

local function pct(n, m)
  return m == 0 and 100 or math.floor(100 * n / m)
end

-- The table for one workflow, `shown` its name as the user gave it.
function M.report(shown, cov, wf, cwd)
  local out = { string.format("coverage of %s", shown),
    string.format("  states       %d/%d  %3d%%", cov.ran, #cov.states, pct(cov.ran, #cov.states)),
    string.format("  transitions  %d/%d  %3d%%", cov.taken, #cov.edges, pct(cov.taken, #cov.edges)) }
  if #cov.dynamic > 0 then
    out[#out + 1] = string.format("  dynamic      %d taken that the workflow's text does not list (not counted):",
      #cov.dynamic)
    for _, d in ipairs(cov.dynamic) do out[#out + 1] = "    " .. d end
  end
  local untested = {}
  for _, s in ipairs(cov.states) do
    if not s.ran then untested[#untested + 1] = s.name end
  end
  if #untested > 0 then out[#out + 1] = "  states never run: " .. table.concat(untested, ", ") end
  local first = true
  for _, c in ipairs(cov.edges) do
    if not c.taken then
      if first then out[#out + 1] = "  transitions never taken:" end
      first = false
      local file = wf.kind == "dir" and (wf.path .. "/" .. c.state.name) or (wf.path .. ":" .. c.state.name)
      out[#out + 1] = string.format("    %s:%d  %s", console.rel(file, cwd), c.edge.line or 1,
        M.describe(c.state, c.edge))
    end
  end
  return table.concat(out, "\n") .. "\n"
end

return M
