-- Tests for raymond.diagram (the graph and its Mermaid text) and
-- raymond.svg (its layout, SVG and HTML page), fed hand-made workflow
-- models of the shape raymond.analyse.load returns.

local T = require("testing")
local diagram = require("raymond.diagram")
local svg = require("raymond.svg")

-- A workflow model: `states` maps a file name to its list of edges.
local function wf(entry, states)
  local m = { entry = entry, states = {}, by_name = {} }
  local names = {}
  for name in pairs(states) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local st = { name = name, kind = name:match("%.sh$") and "script" or "markdown", edges = {} }
    for i, e in ipairs(states[name]) do
      e.line, e.via = i, e.via or "tag"
      st.edges[i] = e
    end
    m.states[#m.states + 1] = st
    m.by_name[name] = st
  end
  return m
end

local function ok(cond, what)
  if not cond then error("not true: " .. tostring(what), 2) end
end

local function mermaid(m)
  return diagram.mermaid(diagram.graph(m))
end

-- The edge lines of a Mermaid text, as a set of "FROM ARROW|LABEL| TO".
local function edge_lines(text)
  local set = {}
  for line in text:gmatch("[^\n]+") do
    if line:find("%-%->") or line:find("==>") or line:find("%-%.%->") then set[line:match("^%s*(.-)$")] = true end
  end
  return set
end

local function has(set, line)
  if not set[line] then
    local all = {}
    for l in pairs(set) do all[#all + 1] = l end
    table.sort(all)
    error("no edge " .. line .. " among:\n" .. table.concat(all, "\n"), 2)
  end
end

T.test("a goto and a result: start, nodes by kind, end", function()
  local text = mermaid(wf("START.sh", {
    ["START.sh"] = { { tag = "goto", target = "DONE.md" } },
    ["DONE.md"] = { { tag = "result" } },
  }))
  T.eq(text, table.concat({
    "flowchart TD",
    '  __start__(("start"))',
    '  s_DONE_md["DONE.md"]',
    '  s_START_sh{{"START.sh"}}',
    '  __end__((("end")))',
    "  __start__ --> s_START_sh",
    '  s_DONE_md -->|"result"| __end__',
    '  s_START_sh -->|"goto"| s_DONE_md',
    "  classDef entry stroke-width:3px",
    "  classDef missing stroke-dasharray:5 5",
    "  class s_START_sh entry",
    "",
  }, "\n"))
end)

T.test("a call's target returns to the call's return state, not to the end", function()
  local e = edge_lines(mermaid(wf("A.md", {
    ["A.md"] = { { tag = "call", target = "SUB.md", ret = "R.sh" } },
    ["SUB.md"] = { { tag = "goto", target = "S2.md" } },
    ["S2.md"] = { { tag = "result" } },
    ["R.sh"] = { { tag = "result" } },
  })))
  has(e, 's_A_md -->|"call"| s_SUB_md')
  has(e, 's_S2_md -->|"return"| s_R_sh')
  has(e, 's_R_sh -->|"result"| __end__')
  T.eq(e['s_S2_md -->|"result"| __end__'], nil, "S2 only returns")
end)

T.test("nested calls: each result returns to its own caller's return state", function()
  local e = edge_lines(mermaid(wf("A.md", {
    ["A.md"] = { { tag = "call", target = "B.md", ret = "R1.md" } },
    ["B.md"] = { { tag = "call", target = "C.md", ret = "B2.md" } },
    ["C.md"] = { { tag = "result" } },
    ["B2.md"] = { { tag = "result" } },
    ["R1.md"] = { { tag = "goto", target = "C.md" } },
  })))
  has(e, 's_C_md -->|"return"| s_B2_md')
  has(e, 's_B2_md -->|"return"| s_R1_md')
  T.eq(e['s_C_md -->|"return"| s_R1_md'], nil, "C returns to B2 only")
  T.eq(e['s_B2_md -->|"result"| __end__'], nil, "B2 is only reached inside the call")
  -- R1 goes to C at the top level, where C's result ends the agent.
  has(e, 's_C_md -->|"result"| __end__')
end)

T.test("a function whose target's result is unknown returns from the target", function()
  local e = edge_lines(mermaid(wf("A.md", {
    ["A.md"] = { { tag = "function", target = "F.sh", ret = "B.md" } },
    ["F.sh"] = {},
    ["B.md"] = {},
  })))
  has(e, 's_A_md -->|"function"| s_F_sh')
  has(e, 's_F_sh -->|"return"| s_B_md')
end)

T.test("a fork draws the worker edge thick and the next edge plain; a worker's result ends", function()
  local e = edge_lines(mermaid(wf("START.sh", {
    ["START.sh"] = { { tag = "fork", target = "WORKER.sh", next = "COLLECT.sh" } },
    ["WORKER.sh"] = { { tag = "result" } },
    ["COLLECT.sh"] = { { tag = "result" } },
  })))
  has(e, 's_START_sh ==>|"fork"| s_WORKER_sh')
  has(e, 's_START_sh -->|"next"| s_COLLECT_sh')
  has(e, 's_WORKER_sh -->|"result"| __end__')
  has(e, 's_COLLECT_sh -->|"result"| __end__')
end)

T.test("hook routes are dotted and labelled; reset is drawn", function()
  local e = edge_lines(mermaid(wf("1_START.md", {
    ["1_START.md"] = { { tag = "goto", target = "DONE.sh", via = "hook", from = "evaluate", label = "YES" },
                       { tag = "goto", target = "DONE.sh", via = "hook", from = "on_max_visits",
                         label = "max_visits 3" },
                       { tag = "reset", target = "1_START.md" } },
    ["DONE.sh"] = {},
  })))
  has(e, 's_1_START_md -.->|"evaluate: YES"| s_DONE_sh')
  has(e, 's_1_START_md -.->|"max_visits 3"| s_DONE_sh')
  has(e, 's_1_START_md -->|"reset"| s_1_START_md')
end)

T.test("the same edge twice is drawn once", function()
  local text = mermaid(wf("C.md", { ["C.md"] = { { tag = "result" }, { tag = "result" }, { tag = "result" } } }))
  local _, n = text:gsub("__end__\n", "")
  T.eq(n, 1)
end)

T.test("a target no file holds is drawn as written, marked missing", function()
  local text = mermaid(wf("A.md", { ["A.md"] = {
    { tag = "goto", raw_target = "GONE", target_error = "state 'GONE' not found" },
    { tag = "call", target = "A.md", raw_ret = "$BACK" } } }))
  ok(text:find('\n  s_GONE%["GONE"%]\n'), text)
  ok(text:find('\n  s_GONE -->|"goto"| s_GONE\n', 1, true) == nil, "no edge from it")
  ok(text:find('\n  s_A_md -->|"goto"| s_GONE\n', 1, true), text)
  ok(text:find("\n  class s_GONE missing\n"), text)
  ok(text:find('\n  s_A_md -->|"return"| s__BACK\n', 1, true), text)
end)

T.test("a result payload shows when allowed_transitions fixes it, not when a prompt shows one", function()
  local e = edge_lines(mermaid(wf("A.md", {
    ["A.md"] = { { tag = "function", target = "C.md", ret = "R.sh" } },
    ["C.md"] = { { tag = "result", label = "YES", from = "allowed_transitions" },
                 { tag = "result", label = "NO", from = "allowed_transitions" } },
    ["R.sh"] = { { tag = "result", label = "your reply", from = "body" } },
  })))
  has(e, 's_C_md -->|"return: YES"| s_R_sh')
  has(e, 's_C_md -->|"return: NO"| s_R_sh')
  has(e, 's_R_sh -->|"result"| __end__')
end)

T.test("unsafe state names get safe, distinct ids and escaped labels", function()
  local names = { 'a"b[c]|d#e.md', "A-B.md", "A_B.md", "end.md", "o.sh", "x y.sh", "<b>&.md", "é.md",
                  "`tick`.md", "bell\7.md", "bad\255.md", "A B.md" }
  local states = {}
  for i, n in ipairs(names) do
    states[n] = { { tag = "goto", target = names[i % #names + 1] } }
  end
  local m = wf(nil, states)
  local g = diagram.graph(m)
  local text = diagram.mermaid(g)
  local ids = {}
  for _, n in ipairs(g.nodes) do
    ok(n.id:find("^s_[A-Za-z0-9_]+$"), "id " .. n.id)
    T.eq(ids[n.id], nil, "id used twice: " .. n.id)
    ids[n.id] = true
  end
  T.eq(#g.nodes, #names)
  for line in text:gmatch("[^\n]+") do
    local inside = line:match('"(.*)"')
    if inside then
      ok(not inside:find('["|<>&`%[%]#]') or inside:find("#%d+;"), line)
      ok(not inside:gsub("#%d+;", ""):find('["|<>&`%[%]#]'), "raw sign in " .. line)
      ok(not inside:find("%c"), "control character in " .. line)
    end
  end
  ok(text:find('"a#34;b#91;c#93;#124;d#35;e.md"', 1, true), text)
  ok(text:find('"#233;.md"', 1, true), "UTF-8 as one entity")
  ok(text:find('"bell#94;G.md"', 1, true), "caret notation for BEL")
  ok(text:find('"bad#92;xff.md"', 1, true), "a byte that is not UTF-8 as \\xFF")
end)

-- ------------------------------------------------------------ layout

local function review_loop()
  return wf("1_START.md", {
    ["1_START.md"] = { { tag = "reset", target = "IMPLEMENT.md" } },
    ["IMPLEMENT.md"] = { { tag = "goto", target = "CHECK.sh" } },
    ["CHECK.sh"] = { { tag = "goto", target = "REVIEW.md" } },
    ["REVIEW.md"] = { { tag = "goto", target = "IMPLEMENT.md" }, { tag = "goto", target = "COMMIT.md" },
                      { tag = "goto", target = "COMMIT.md", via = "hook", from = "on_max_visits",
                        label = "max_visits 3" } },
    ["COMMIT.md"] = { { tag = "result" } },
    ["LOOP.sh"] = { { tag = "reset", target = "LOOP.sh" }, { tag = "goto", target = "LOOP.sh" },
                    { tag = "result" } },
  })
end

local function overlap(a, b)
  return math.abs(a.x - b.x) * 2 < a.w + b.w and math.abs(a.y - b.y) * 2 < a.h + b.h
end

-- Whether segment a-b passes through box n (centre x, y, size w, h),
-- for segments that run straight across or down, as lanes do.
local function through(a, b, n)
  local x1, x2 = math.min(a.x, b.x), math.max(a.x, b.x)
  local y1, y2 = math.min(a.y, b.y), math.max(a.y, b.y)
  return x1 < n.x + n.w / 2 and x2 > n.x - n.w / 2 and y1 < n.y + n.h / 2 and y2 > n.y - n.h / 2
end

-- Check a layout: no two nodes or labels overlap, all lie inside it, each
-- edge starts on its source and ends on its target, and an edge sent
-- round the layers passes through no node and no other label on the way.
local function check_layout(g, lay)
  local boxes = {}
  for _, n in ipairs(lay.nodes) do boxes[#boxes + 1] = n end
  for _, e in ipairs(lay.edges) do
    if e.label then boxes[#boxes + 1] = e.label end
  end
  for i = 1, #boxes do
    for j = i + 1, #boxes do
      ok(not overlap(boxes[i], boxes[j]), string.format("boxes %d and %d overlap", i, j))
    end
    ok(boxes[i].x - boxes[i].w / 2 >= 0 and boxes[i].x + boxes[i].w / 2 <= lay.width, "inside width")
    ok(boxes[i].y - boxes[i].h / 2 >= 0 and boxes[i].y + boxes[i].h / 2 <= lay.height, "inside height")
  end
  T.eq(#lay.edges, #g.edges)
  for _, e in ipairs(lay.edges) do
    local a, b = lay.nodes[e.from], lay.nodes[e.to]
    local p, q = e.points[1], e.points[#e.points]
    local function on(n, pt)
      return math.abs(pt.x - n.x) <= n.w / 2 + 0.01 and math.abs(pt.y - n.y) <= n.h / 2 + 0.01
    end
    ok(on(a, p), "edge starts on its source " .. e.edge.from)
    ok(on(b, q), "edge ends on its target " .. e.edge.to)
    if e.lane then
      for i = 2, #e.points - 2 do
        for k, box in ipairs(boxes) do
          ok(box == e.label or not through(e.points[i], e.points[i + 1], box),
            string.format("edge %s to %s passes through box %d", e.edge.from, e.edge.to, k))
        end
      end
    end
  end
end

T.test("layout: nodes and labels never overlap; edges start and end on their nodes", function()
  local g = diagram.graph(review_loop())
  local lay = svg.layout(g)
  check_layout(g, lay)
  -- The entry is above the state it goes to, and the end below COMMIT.
  local y = {}
  for _, n in ipairs(lay.nodes) do y[n.node.id] = n.y end
  ok(y.__start__ < y.s_1_START_md and y.s_1_START_md < y.s_IMPLEMENT_md, "flows down")
  ok(y.s_COMMIT_md < y.__end__, "end at the bottom")
end)

T.test("layout: barycentre sweeps remove crossings the name order makes", function()
  -- By name, layer 2 is A, B and layer 3 is C, D; A goes to D and B to
  -- C, so the first order crosses, and reordering undoes it.
  local g = diagram.graph(wf("S.md", {
    ["S.md"] = { { tag = "goto", target = "A.md" }, { tag = "goto", target = "B.md" } },
    ["A.md"] = { { tag = "goto", target = "D.md" } },
    ["B.md"] = { { tag = "goto", target = "C.md" } },
    ["C.md"] = { { tag = "goto", target = "E.md" } },
    ["D.md"] = { { tag = "goto", target = "E.md" } },
    ["E.md"] = { { tag = "goto", target = "A.md" } },
  }))
  T.eq(svg.layout(g).crossings, 0)
end)

-- A workflow of `n` markdown states, each going on to the next and to
-- one more spread over the others, so that most edges span many layers.
local function spread(n)
  local states = {}
  local function name(i) return i == 1 and "1_START.md" or string.format("S%04d.md", i) end
  for i = 1, n do
    local other = name(i * 7919 % n + 1)
    states[name(i)] = i < n and { { tag = "goto", target = name(i + 1) }, { tag = "goto", target = other } }
      or { { tag = "result" }, { tag = "goto", target = other } }
  end
  return diagram.graph(wf("1_START.md", states))
end

T.test("layout: a workflow of long edges is laid out whole, none through a state or label", function()
  local g = spread(300)
  local lay = svg.layout(g)
  check_layout(g, lay)
  local lanes = 0
  for _, e in ipairs(lay.edges) do
    if e.lane then lanes = lanes + 1 end
  end
  ok(lanes > 0, "some edges go round the layers")
end)

T.test("the page's processor time grows about linearly with the workflow", function()
  local small, big = spread(100), spread(600)
  local function cpu(g, runs)
    local best
    for _ = 1, runs do
      local t0 = os.clock()
      svg.html(g, "spread", "")
      local t = os.clock() - t0
      best = best and math.min(best, t) or t
    end
    return best
  end
  local t_small, t_big = cpu(small, 3), cpu(big, 1)
  -- Six times the states; quadratic work would take 36 times as long.
  -- Eighteen leaves room for a busy machine.
  if t_big > 18 * t_small then
    error(string.format("600 states took %.3fs, 100 took %.3fs: %.1f times", t_big, t_small, t_big / t_small))
  end
end)

-- ------------------------------------------------------------ SVG, HTML

T.test("the SVG has one node group per state and one edge group per edge", function()
  local g = diagram.graph(review_loop())
  local s = svg.render(g, "review-loop")
  local _, nodes = s:gsub('<g class="node ', "")
  local _, edges = s:gsub('<g class="edge ', "")
  T.eq(nodes, #g.nodes)
  T.eq(edges, #g.edges)
  for _, n in ipairs({ "1_START.md", "IMPLEMENT.md", "CHECK.sh", "REVIEW.md", "COMMIT.md" }) do
    ok(s:find('data-state="' .. n .. '"', 1, true), n)
    ok(s:find(">" .. n .. "</text>", 1, true), n .. " as text")
  end
  ok(s:find('<g class="node markdown entry" id="s_1_START_md"', 1, true), "entry marked")
  ok(s:find('<g class="node script" id="s_CHECK_sh"', 1, true), "script kind")
  ok(s:find('<g class="edge hook" data-from="REVIEW.md" data-to="COMMIT.md">', 1, true), "hook edge")
  ok(s:find('role="img" aria-label="Diagram of workflow review-loop: 6 states, ', 1, true), "aria-label")
end)

T.test("the HTML page is whole: no script, no link, nothing fetched; names escaped", function()
  local m = wf("<script>alert(1)</script>.md", { ["<script>alert(1)</script>.md"] = { { tag = "result" } } })
  local g = diagram.graph(m)
  local page = svg.html(g, "wf <x>", diagram.mermaid(g))
  ok(not page:find("<script", 1, true), "no script element")
  ok(not page:find("<link", 1, true) and not page:find("src=", 1, true), "nothing loaded")
  ok(not page:find("url%(http") and not page:find("@import", 1, true), "nothing imported")
  ok(page:find("default-src 'none'", 1, true), "CSP forbids fetching")
  ok(page:find("<title>wf &lt;x&gt; - raymond diagram</title>", 1, true), "title")
  ok(page:find("&lt;script&gt;alert(1)&lt;/script&gt;.md</text>", 1, true), "label escaped")
  ok(page:find("<pre>flowchart TD\n", 1, true), "Mermaid source shown")
  ok(page:find("prefers-color-scheme: dark", 1, true), "dark scheme")
  ok(page:find('aria-label="Diagram of workflow wf &lt;x&gt;: 1 state, 2 transitions, entry ', 1, true),
    "aria-label counts in words")
end)
