-- raymond.diagram: a workflow's states and transitions as a graph, and
-- that graph as a Mermaid flowchart.
--
--   local g = diagram.graph(wf)      -- wf from raymond.analyse.load
--   local text = diagram.mermaid(g)  -- "flowchart TD\n..."
--
-- The graph is what both drawings (this Mermaid text and the SVG of
-- raymond.svg) are made from, so they always show the same nodes and
-- edges:
--   g.nodes  list of { id =, label =, kind =, state =, entry = }, where
--            kind is "markdown", "script", "missing" (a target no file
--            holds), "workflow" (another workflow a -workflow tag
--            names, labelled with its path as written), "start" or
--            "end"; state is the file name
--   g.edges  list of { from = id, to = id, text =, style = }, style one of
--            "solid" (the agent goes on, an <ask>'s answer or timeout
--            too), "worker" (a <fork> starts a new agent there; a
--            join's summary too, drawn from the worker's state and
--            labelled "join") or "hook" (a route a hook takes: an
--            evaluate: answer, on_max_visits)
--
-- A <result> ends the agent, or returns to the state its <call> or
-- <function> named.  Which of the two it does depends on how the agent
-- got there, so the graph follows the moves that stay in one call frame
-- (goto, reset, a fork's next, hook routes, and a call's return state)
-- from the entry state and from every fork's worker state, whose agents
-- start with an empty stack: a <result> met there goes to the end node.
-- From each call's target the same moves give the states whose <result>
-- goes back to the call's return state, drawn as a "return" edge.

local raymond = require("raymond")
local tags = require("raymond.tags")

local M = {}

local START, END = "__start__", "__end__"

-- A Mermaid node id for state `name`: only letters, digits and _, and
-- never one of Mermaid's words (end, graph, ...) or a prefix its parser
-- reads as an arrow head (o, x), since every id begins with "s_".
local function base_id(name)
  return "s_" .. name:gsub("[^A-Za-z0-9_]", "_")
end

-- The payload of a <result> edge worth showing: one allowed_transitions
-- fixes (the only payloads the state may give).  A payload written in a
-- prompt is an example ("<result>your reply</result>"), not a route.
local function payload(e)
  return e.from == "allowed_transitions" and e.label or nil
end

-- The text an edge is labelled with: its tag, a fixed <result>
-- payload, or the worktree the agent goes to work in; a hook's route
-- says which answer or limit takes it.
local function edge_text(e)
  if e.via == "hook" then
    if e.from == "evaluate" and e.label then return "evaluate: " .. e.label end
    return e.label or e.from or "hook"
  end
  if e.tag == "result" and payload(e) then return "result: " .. payload(e) end
  if type(e.worktree) == "string" then return e.tag .. " in worktree " .. e.worktree end
  return e.tag
end

-- The state an edge's `key` ("target", "ret", "next" or "timeout_next")
-- names: the file
-- it resolved to, else the name as written (a misspelt state, or one
-- computed at run time), drawn as a missing state.
local function name_of(e, key)
  local raw = e["raw_" .. key]
  return e[key] or (raw ~= "" and raw or nil)
end

-- The states reached from `seeds` by the moves that keep the call frame.
local function closure(seeds, moves)
  local seen, queue = {}, {}
  for _, s in ipairs(seeds) do
    if not seen[s] then
      seen[s] = true
      queue[#queue + 1] = s
    end
  end
  local i = 1
  while queue[i] do
    for _, t in ipairs(moves[queue[i]] or {}) do
      if not seen[t] then
        seen[t] = true
        queue[#queue + 1] = t
      end
    end
    i = i + 1
  end
  return seen
end

-- For each state, the states the same agent, in the same call frame, can
-- be at next; and the calls, the fork workers, and for each state with a
-- <result> the labels of its return edges.
-- Whether edge `e` leads into another workflow (raymond.xworkflow).
local function other(e)
  return tags.by_name[e.tag].body == "workflow"
end

local function moves_of(wf)
  local moves, calls, workers, results = {}, {}, {}, {}
  local function move(from, to)
    if to then
      moves[from] = moves[from] or {}
      table.insert(moves[from], to)
    end
  end
  for _, st in ipairs(wf.states) do
    for _, e in ipairs(st.edges) do
      if other(e) then
        -- The other workflow's states are not drawn: the caller goes on
        -- at the return state or the fork's next.
        move(st.name, name_of(e, "ret") or name_of(e, "next"))
      elseif e.tag == "result" then
        results[st.name] = results[st.name] or {}
        table.insert(results[st.name], payload(e) and "return: " .. payload(e) or "return")
      elseif e.tag == "fork" then
        local worker = name_of(e, "target")
        if worker then workers[#workers + 1] = worker end
        -- A join's summary starts as a new agent too (raymond.join).
        local summary = name_of(e, "join")
        if summary then workers[#workers + 1] = summary end
        move(st.name, name_of(e, "next"))
      elseif e.tag == "call" or e.tag == "function" then
        local callee, ret = name_of(e, "target"), name_of(e, "ret")
        if callee and ret then calls[#calls + 1] = { caller = st.name, callee = callee, ret = ret } end
        move(st.name, ret)
      elseif e.tag == "ask" then
        move(st.name, name_of(e, "next"))
        move(st.name, name_of(e, "timeout_next"))
      else
        move(st.name, name_of(e, "target"))
      end
    end
  end
  return moves, calls, workers, results
end

function M.graph(wf)
  local g = { nodes = {}, edges = {} }
  local ids, taken = {}, {}

  -- Ids are given in sorted order, so two names that clean to the same
  -- id (A-B.md and A_B.md) always get the same suffixes.
  local function add_node(name, kind, key)
    key = key or name
    if ids[key] then return ids[key] end
    local id, n = base_id(key), 1
    while taken[id] do
      n = n + 1
      id = base_id(key) .. "_" .. n
    end
    taken[id], ids[key] = true, id
    g.nodes[#g.nodes + 1] = { id = id, label = name, kind = kind, state = key == name and name or nil,
                              entry = key == name and name == wf.entry }
    return id
  end

  local seen_edge = {}
  local function add_edge(from, to, text, style)
    local key = table.concat({ from, to, text, style }, "\0")
    if seen_edge[key] then return end
    seen_edge[key] = true
    g.edges[#g.edges + 1] = { from = from, to = to, text = text, style = style }
  end

  for _, st in ipairs(wf.states) do add_node(st.name, st.kind) end
  -- Targets no state file holds are drawn too, marked missing, so the
  -- drawing shows where a transition would fail.
  local missing = {}
  for _, st in ipairs(wf.states) do
    for _, e in ipairs(st.edges) do
      for _, key in ipairs({ "target", "ret", "next", "join", "timeout_next" }) do
        local t = name_of(e, key)
        if t and not wf.by_name[t] and not (key == "target" and other(e)) then missing[t] = true end
      end
    end
  end
  local names = {}
  for t in pairs(missing) do names[#names + 1] = t end
  table.sort(names)
  for _, t in ipairs(names) do add_node(t, "missing") end
  -- Each other workflow once, by its path as written, after the states.
  local others = {}
  for _, st in ipairs(wf.states) do
    for _, e in ipairs(st.edges) do
      if other(e) and e.raw and e.raw ~= "" then others[e.raw] = e.workflow and "workflow" or "missing" end
    end
  end
  names = {}
  for t in pairs(others) do names[#names + 1] = t end
  table.sort(names)
  for _, t in ipairs(names) do add_node(t, others[t], "workflow:" .. t) end

  if wf.entry and ids[wf.entry] then
    table.insert(g.nodes, 1, { id = START, label = "start", kind = "start" })
    add_edge(START, ids[wf.entry], "", "solid")
  end

  local moves, calls, workers, results = moves_of(wf)
  local seeds = { wf.entry }
  for _, w in ipairs(workers) do seeds[#seeds + 1] = w end
  local top = closure(seeds, moves)
  local inside = {}
  for _, c in ipairs(calls) do
    c.region = closure({ c.callee }, moves)
    for s in pairs(c.region) do inside[s] = true end
  end

  local ends = false
  for _, st in ipairs(wf.states) do
    local from = ids[st.name]
    for _, e in ipairs(st.edges) do
      local style = e.via == "hook" and "hook" or "solid"
      local target, next = name_of(e, "target"), name_of(e, "next")
      if other(e) then
        local wid = target and ids["workflow:" .. target]
        local ret = name_of(e, "ret")
        if wid then add_edge(from, wid, edge_text(e), e.tag == "fork-workflow" and "worker" or style) end
        if next then add_edge(from, ids[next], "next", style) end
        if wid and ret then add_edge(wid, ids[ret], "return", "solid") end
      elseif e.tag == "fork" then
        if target then add_edge(from, ids[target], edge_text(e), e.via == "hook" and "hook" or "worker") end
        if next then add_edge(from, ids[next], "next", style) end
        local summary = name_of(e, "join")
        if summary then add_edge(target and ids[target] or from, ids[summary], "join", "worker") end
      elseif e.tag == "ask" then
        -- The answer's way, and the way taken when nobody answers in time.
        if next then add_edge(from, ids[next], "ask", style) end
        local late = name_of(e, "timeout_next")
        if late then add_edge(from, ids[late], "ask: timeout", style) end
      elseif e.tag == "result" then
        -- A state no call reaches ends its agent, even when the entry
        -- does not reach it either: nothing else can happen to it.
        if top[st.name] or not inside[st.name] then
          add_edge(from, END, edge_text(e), style)
          ends = true
        end
      elseif target then
        add_edge(from, ids[target], edge_text(e), style)
      end
    end
  end

  -- The return edges: from each <result> state a call reaches back to
  -- the call's return state; when none is known (a script's output, a
  -- missing target), from the call's target.
  for _, c in ipairs(calls) do
    local found = {}
    for s in pairs(c.region) do
      if results[s] then found[#found + 1] = s end
    end
    table.sort(found)
    if #found == 0 then add_edge(ids[c.callee], ids[c.ret], "return", "solid") end
    for _, s in ipairs(found) do
      for _, text in ipairs(results[s]) do add_edge(ids[s], ids[c.ret], text, "solid") end
    end
  end

  if ends then g.nodes[#g.nodes + 1] = { id = END, label = "end", kind = "end" } end
  return g
end

-- `s` for a quoted Mermaid label: letters, digits and a few plain signs
-- pass, every other character becomes its entity (#35; for #), so no
-- file name can end the label, open a tag or start markdown.
local SAFE = "[A-Za-z0-9 _.,:;/+=@%-]"
function M.escape(s)
  local out = {}
  for _, c in utf8.codes(s, true) do
    local ch = utf8.char(c)
    if c < 0x80 and ch:find(SAFE) then
      out[#out + 1] = ch
    else
      out[#out + 1] = "#" .. c .. ";"
    end
  end
  return table.concat(out)
end

-- A name or label as a person may read it: control characters in caret
-- notation, bytes that are not UTF-8 as \xNN.
local text = raymond.printable
M.text = text

local SHAPES = {
  markdown = { "[", "]" },
  script = { "{{", "}}" },
  missing = { "[", "]" },
  workflow = { "[[", "]]" },
  start = { "((", "))" },
  ["end"] = { "(((", ")))" },
}

local ARROWS = { solid = "-->", worker = "==>", hook = "-.->" }

-- The graph `g` as a Mermaid flowchart, top down.
function M.mermaid(g)
  local out = { "flowchart TD" }
  for _, n in ipairs(g.nodes) do
    local shape = SHAPES[n.kind]
    out[#out + 1] = string.format('  %s%s"%s"%s', n.id, shape[1], M.escape(text(n.label)), shape[2])
  end
  for _, e in ipairs(g.edges) do
    local label = e.text ~= "" and string.format('|"%s"|', M.escape(text(e.text))) or ""
    out[#out + 1] = string.format("  %s %s%s %s", e.from, ARROWS[e.style], label, e.to)
  end
  local classes = {}
  for _, n in ipairs(g.nodes) do
    if n.entry then classes[#classes + 1] = "  class " .. n.id .. " entry" end
    if n.kind == "missing" then classes[#classes + 1] = "  class " .. n.id .. " missing" end
  end
  if #classes > 0 then
    out[#out + 1] = "  classDef entry stroke-width:3px"
    out[#out + 1] = "  classDef missing stroke-dasharray:5 5"
    table.move(classes, 1, #classes, #out + 1, out)
  end
  return table.concat(out, "\n") .. "\n"
end

return M
