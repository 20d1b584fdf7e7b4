-- raymond.svg: a diagram graph (raymond.diagram) laid out and drawn as
-- SVG, and the self-contained HTML page around it.
--
--   local lay = svg.layout(g)         -- positions of nodes and edges
--   local text = svg.render(g, title) -- <svg>...</svg>
--   local page = svg.html(g, title, mermaid_text)
--
-- The page needs nothing but itself: no script, no font, no style sheet
-- from elsewhere (its Content-Security-Policy forbids them), so it shows
-- the same offline, in a mail attachment or in a CI artefact.  The layout
-- is done here, at generation time, the layered way:
--   1. cycles are broken by turning round the edges a depth-first walk
--      from the start finds going back up;
--   2. each node goes on the layer of its longest path from a source,
--      and between two node layers lies a layer for edge labels;
--   3. an edge spanning several layers gets a dummy vertex on each, the
--      one on its first label layer carrying its label, so labels take
--      room like nodes and never sit on one; past a budget of dummies
--      (BEND_BUDGET), the longest edges go round the layers instead: a
--      dummy under the upper end, a track across the label layers under
--      each end, and a lane down the right of the drawing, so the work
--      grows with the number of edges and not with their lengths;
--   4. a few barycentre sweeps down and up reorder each layer, keeping
--      the order with the fewest crossings;
--   5. x positions follow the neighbours' mean, kept apart by the widths;
--   6. each edge runs through its dummies, rounded at each bend, and
--      ends in an arrow.

local diagram = require("raymond.diagram")

local M = {}

-- Sizes, in pixels.  Text is set in a monospace font at 13 px, whose
-- characters are about 7.8 px wide in the common fonts; 8 leaves room.
local CHAR, NODE_H, LABEL_H = 8, 34, 18
local NODE_SEP, DUMMY_SEP, LAYER_GAP, MARGIN = 28, 12, 16, 20
-- An edge round the layers runs across a label layer on a track of its
-- own, TRACK_SEP apart, and down a lane of its own, LANE_SEP apart.
local TRACK_SEP, LANE_SEP = 6, 8
-- How many bend points edges may take through the layers, beyond 4 a
-- node: past it, the longest edges go round the layers instead, so that
-- the work grows with the workflow, not with its edges' lengths.
local BEND_BUDGET = 1000
-- A self-loop is a curve out of its node's right side, its control
-- points LOOP to the right, so it reaches 3/4 of that; its label follows.
local LOOP = 36
local LOOP_LABEL = LOOP * 0.75 + 6

-- Code points that take two columns in a monospace font: CJK, Hangul,
-- full-width forms, emoji.
local WIDE = { { 0x1100, 0x115F }, { 0x2E80, 0xA4CF }, { 0xAC00, 0xD7A3 }, { 0xF900, 0xFAFF },
               { 0xFF00, 0xFF60 }, { 0xFFE0, 0xFFE6 }, { 0x1F300, 0x1FAFF }, { 0x20000, 0x3FFFD } }

-- The width of `s` as it is shown (control characters in caret notation).
local function width_of(s)
  local columns = 0
  for _, c in utf8.codes(diagram.text(s), true) do
    local w = 1
    for _, r in ipairs(WIDE) do
      if c >= r[1] and c <= r[2] then w = 2 end
    end
    columns = columns + w
  end
  return columns * CHAR
end

local function node_size(n)
  if n.kind == "start" then return 18, 18 end
  if n.kind == "end" then return 24, 24 end
  local w = math.max(64, width_of(n.label) + 28)
  if n.kind == "script" then w = w + 16 end
  return w, NODE_H
end

-- Vertices: the graph's nodes, then dummies.  Each has w, h, left and
-- right (its extent from its centre x), rank, and up and down (its
-- neighbours in the layers above and below).
local function vertices(g)
  local vs, index = {}, {}
  for i, n in ipairs(g.nodes) do
    local w, h = node_size(n)
    vs[i] = { node = n, w = w, h = h, left = w / 2, right = w / 2, up = {}, down = {} }
    index[n.id] = i
  end
  return vs, index
end

-- Break cycles: a depth-first walk from each vertex in order (the start
-- first) marks the edges that lead back to a vertex on its path.
local function reversed_edges(n, out)
  local state, back = {}, {}
  local function walk(v)
    state[v] = 1
    for _, e in ipairs(out[v]) do
      if state[e.to] == 1 then
        back[e] = true
      elseif not state[e.to] then
        walk(e.to)
      end
    end
    state[v] = 2
  end
  for v = 1, n do
    if not state[v] then walk(v) end
  end
  return back
end

-- Longest-path ranks on the acyclic graph `dag` (lists of successors).
local function ranks(n, dag)
  local indeg, rank, queue = {}, {}, {}
  for v = 1, n do indeg[v] = 0 end
  for v = 1, n do
    for _, w in ipairs(dag[v]) do indeg[w] = indeg[w] + 1 end
  end
  for v = 1, n do
    rank[v] = 0
    if indeg[v] == 0 then queue[#queue + 1] = v end
  end
  local i = 1
  while queue[i] do
    local v = queue[i]
    for _, w in ipairs(dag[v]) do
      rank[w] = math.max(rank[w], rank[v] + 1)
      indeg[w] = indeg[w] - 1
      if indeg[w] == 0 then queue[#queue + 1] = w end
    end
    i = i + 1
  end
  return rank
end

-- The number of crossings between adjacent layers: for the segments
-- between two layers sorted by their upper end, the pairs whose lower
-- ends come in the other order, counted with a Fenwick tree.
local function crossings(layers, vs)
  local count = 0
  for l = 1, #layers - 1 do
    local segs = {}
    for _, v in ipairs(layers[l]) do
      for _, w in ipairs(vs[v].down) do segs[#segs + 1] = { vs[v].order, vs[w].order } end
    end
    table.sort(segs, function(a, b)
      if a[1] ~= b[1] then return a[1] < b[1] end
      return a[2] < b[2]
    end)
    local size, tree, seen = #layers[l + 1], {}, 0
    for i = 1, size do tree[i] = 0 end
    for _, seg in ipairs(segs) do
      -- Segments already counted whose lower end is right of this one's.
      local below, i = 0, seg[2]
      while i > 0 do
        below, i = below + tree[i], i - (i & -i)
      end
      count = count + seen - below
      i = seg[2]
      while i <= size do
        tree[i], i = tree[i] + 1, i + (i & -i)
      end
      seen = seen + 1
    end
  end
  return count
end

local function number_layer(layer, vs)
  for i, v in ipairs(layer) do vs[v].order = i end
end

-- Reorder layer `l` by the mean order of each vertex's neighbours on the
-- side `side` ("up" or "down"); a vertex with none keeps its place.
local function barycentre(layer, vs, side)
  local key = {}
  for i, v in ipairs(layer) do
    local sum, n = 0, 0
    for _, w in ipairs(vs[v][side]) do
      sum, n = sum + vs[w].order, n + 1
    end
    key[v] = { n > 0 and sum / n or i, i }
  end
  table.sort(layer, function(a, b)
    local ka, kb = key[a], key[b]
    if ka[1] ~= kb[1] then return ka[1] < kb[1] end
    return ka[2] < kb[2]
  end)
  number_layer(layer, vs)
end

local function copy_layers(layers)
  local c = {}
  for l, layer in ipairs(layers) do c[l] = table.move(layer, 1, #layer, 1, {}) end
  return c
end

local function order(layers, vs)
  for _, layer in ipairs(layers) do number_layer(layer, vs) end
  local best, best_count = copy_layers(layers), crossings(layers, vs)
  for _ = 1, 6 do
    for l = 2, #layers do barycentre(layers[l], vs, "up") end
    for l = #layers - 1, 1, -1 do barycentre(layers[l], vs, "down") end
    local c = crossings(layers, vs)
    if c < best_count then best, best_count = copy_layers(layers), c end
  end
  for l, layer in ipairs(best) do
    layers[l] = layer
    number_layer(layer, vs)
  end
  return best_count
end

-- The room between two neighbours on a layer: edges passing each other
-- may run close, but keep clear of a state's box.
local function gap(a, b)
  return (a.node or b.node) and NODE_SEP or DUMMY_SEP
end

-- Place layer's vertices as near their wanted x as the widths allow:
-- the mean of the placement packed from the left and the one packed from
-- the right, each of which keeps them apart, so the mean does too.
local function place(layer, vs, want)
  local n = #layer
  if n == 0 then return end
  local L, R = {}, {}
  for i, v in ipairs(layer) do
    L[i] = want[v]
    if i > 1 then
      local p = vs[layer[i - 1]]
      L[i] = math.max(L[i], L[i - 1] + p.right + gap(p, vs[v]) + vs[v].left)
    end
  end
  for i = n, 1, -1 do
    local v = layer[i]
    R[i] = want[v]
    if i < n then
      local q = vs[layer[i + 1]]
      R[i] = math.min(R[i], R[i + 1] - q.left - gap(vs[v], q) - vs[v].right)
    end
  end
  for i, v in ipairs(layer) do vs[v].x = (L[i] + R[i]) / 2 end
end

local function position(layers, vs, tracks)
  for _, layer in ipairs(layers) do
    local x = 0
    for _, v in ipairs(layer) do
      x = x + vs[v].left
      vs[v].x = x
      x = x + vs[v].right + NODE_SEP
    end
  end
  local function sweep(l, sides)
    local want = {}
    for _, v in ipairs(layers[l]) do
      local sum, n = 0, 0
      for _, side in ipairs(sides) do
        for _, w in ipairs(vs[v][side]) do sum, n = sum + vs[w].x, n + 1 end
      end
      want[v] = n > 0 and sum / n or vs[v].x
    end
    place(layers[l], vs, want)
  end
  for _ = 1, 4 do
    for l = 2, #layers do sweep(l, { "up" }) end
    for l = #layers - 1, 1, -1 do sweep(l, { "down" }) end
  end
  for l = 1, #layers do sweep(l, { "up", "down" }) end
  local min, max = math.huge, -math.huge
  for _, v in ipairs(vs) do
    min = math.min(min, v.x - v.left)
    max = math.max(max, v.x + v.right)
  end
  if min == math.huge then min, max = 0, 0 end
  for _, v in ipairs(vs) do v.x = v.x - min + MARGIN end
  -- A layer's tracks lie under its labels, where no edge ends.
  local y, tracks_y = MARGIN, {}
  for l, layer in ipairs(layers) do
    local h = 0
    for _, v in ipairs(layer) do h = math.max(h, vs[v].h) end
    for _, v in ipairs(layer) do vs[v].y = y + h / 2 end
    tracks_y[l - 1] = y + h
    y = y + h + (tracks[l - 1] or 0) * TRACK_SEP + LAYER_GAP
  end
  return max - min + 2 * MARGIN, y - LAYER_GAP + MARGIN, tracks_y
end

-- Where edges meet a node: on its bottom (leaving downwards) or top,
-- spread along the side in the order of the points they come from.
local function ports(edges, vs)
  local sides = {}
  local function add(v, side, e, which, toward, index)
    local key = v .. side
    sides[key] = sides[key] or { v = v, side = side }
    table.insert(sides[key], { e = e, which = which, toward = toward, index = index })
  end
  for i, e in ipairs(edges) do
    local p = e.points
    if not e.loop then
      local down = e.dy > 0
      add(e.from, down and "bottom" or "top", e, 1, p[2], i)
      add(e.to, down and "top" or "bottom", e, #p, p[#p - 1], i)
    end
  end
  for _, s in pairs(sides) do
    local v = vs[s.v]
    table.sort(s, function(a, b)
      if a.toward.x ~= b.toward.x then return a.toward.x < b.toward.x end
      return a.index < b.index
    end)
    -- The start and end circles take every edge at their centre.
    local span = (v.node.kind == "start" or v.node.kind == "end") and 0 or v.w * 0.6
    for i, port in ipairs(s) do
      local x = v.x - span / 2 + span * i / (#s + 1)
      local y = v.y + (s.side == "bottom" and v.h / 2 or -v.h / 2)
      port.e.points[port.which] = { x = x, y = y }
    end
  end
end

-- The edges of `g` between vertices, with the self-loops apart: a loop
-- widens its node on the right, for the curve and its label.
local function edges_of(g, vs, index)
  local edges, loops = {}, {}
  for _, ge in ipairs(g.edges) do
    local e = { edge = ge, from = index[ge.from], to = index[ge.to] }
    edges[#edges + 1] = e
    if e.from == e.to then
      e.loop = true
      loops[e.from] = (loops[e.from] or 0) + 1
      local v = vs[e.from]
      v.right = math.max(v.right, v.w / 2 + LOOP_LABEL + width_of(ge.text) + 10)
    end
  end
  return edges, loops
end

-- Steps 1 and 2: each edge's top and bottom end once cycles are broken,
-- and the layers of the nodes: node layers are even, label layers odd.
-- The nodes start in the graph's order (the start, then states by name).
local function layering(vs, edges)
  local n, out, dag = #vs, {}, {}
  for v = 1, n do out[v], dag[v] = {}, {} end
  for _, e in ipairs(edges) do
    if not e.loop then table.insert(out[e.from], e) end
  end
  local back = reversed_edges(n, out)
  for _, e in ipairs(edges) do
    if not e.loop then
      e.back = back[e] or false
      e.top, e.bottom = e.from, e.to
      if e.back then e.top, e.bottom = e.to, e.from end
      table.insert(dag[e.top], e.bottom)
    end
  end
  local rank, layers = ranks(n, dag), {}
  for v = 1, n do
    vs[v].rank = 2 * rank[v]
    layers[vs[v].rank + 1] = layers[vs[v].rank + 1] or {}
    table.insert(layers[vs[v].rank + 1], v)
  end
  return layers
end

-- The edges that go round the layers: past the budget of bend points,
-- the longest of those that cross a node layer.
local function mark_lanes(vs, edges, n)
  local long = {}
  for i, e in ipairs(edges) do
    if not e.loop and vs[e.bottom].rank - vs[e.top].rank >= 4 then long[#long + 1] = { e = e, i = i } end
  end
  local function span(l) return vs[l.e.bottom].rank - vs[l.e.top].rank end
  table.sort(long, function(a, b)
    if span(a) ~= span(b) then return span(a) < span(b) end
    return a.i < b.i
  end)
  local budget = BEND_BUDGET + 4 * n
  for _, l in ipairs(long) do
    budget = budget - (span(l) - 1)
    l.e.lane = budget < 0
  end
end

-- Step 3: a dummy vertex on each layer an edge crosses; the one on the
-- label layer next to where the edge starts carries its label.  An edge
-- round the layers has one only, under its upper end, with its label,
-- and a track on the label layers under its two ends.  Returns the
-- number of tracks on each label layer, by rank.
local function add_dummies(vs, edges, layers, n)
  mark_lanes(vs, edges, n)
  local tracks = {}
  local function track(r)
    tracks[r] = (tracks[r] or 0) + 1
    return tracks[r]
  end
  for _, e in ipairs(edges) do
    if not e.loop then
      local chain = { e.top }
      local r1, r2 = vs[e.top].rank, vs[e.bottom].rank
      local label_rank = (e.back and not e.lane) and r2 - 1 or r1 + 1
      if e.lane then
        r2 = r1 + 2
        e.track_top, e.track_bottom = track(r1 + 1), track(vs[e.bottom].rank - 1)
      end
      for r = r1 + 1, r2 - 1 do
        local d = { w = 0, h = 0, left = 4, right = 4, up = {}, down = {}, rank = r }
        if r == label_rank and e.edge.text ~= "" then
          d.w, d.h = width_of(e.edge.text) + 10, LABEL_H
          d.left, d.right = d.w / 2, d.w / 2
          e.label_vertex = #vs + 1
        end
        vs[#vs + 1] = d
        layers[r + 1] = layers[r + 1] or {}
        table.insert(layers[r + 1], #vs)
        chain[#chain + 1] = #vs
      end
      if not e.lane then chain[#chain + 1] = e.bottom end
      for i = 1, #chain - 1 do
        table.insert(vs[chain[i]].down, chain[i + 1])
        table.insert(vs[chain[i + 1]].up, chain[i])
      end
      e.chain = chain
    end
  end
  for r = 1, #layers do layers[r] = layers[r] or {} end
  return tracks
end

-- The x of each edge round the layers: lanes right of the drawing,
-- `right` the drawing's right edge; an edge takes the innermost lane
-- free over the layers it spans.  Returns the lanes' number.
local function assign_lanes(vs, edges, right)
  local lanes, busy, pos = {}, {}, {}
  for i, e in ipairs(edges) do
    if e.lane then lanes[#lanes + 1], pos[e] = e, i end
  end
  -- In full order, so the same workflow always gives the same page.
  table.sort(lanes, function(a, b)
    if vs[a.top].rank ~= vs[b.top].rank then return vs[a.top].rank < vs[b.top].rank end
    return pos[a] < pos[b]
  end)
  for _, e in ipairs(lanes) do
    local k = 1
    while busy[k] and busy[k] >= vs[e.top].rank do k = k + 1 end
    busy[k] = vs[e.bottom].rank
    e.lane_x = right + LANE_SEP * k
  end
  return #busy
end

-- The box of a label starting at `left`, centred on `y`.
local function label_box(left, y, text)
  local w = width_of(text) + 10
  return { x = left + w / 2, y = y, w = w, h = LABEL_H }
end

-- `pts` with a point just before and after each bend: an edge is drawn
-- rounded from the middle of one segment to the middle of the next, which
-- on a lane's long runs would cut far across the drawing; this keeps the
-- curve within a few pixels of the bend.
local function tight_corners(pts)
  local out = { pts[1] }
  local function toward(a, b, r)
    local len = math.sqrt((b.x - a.x) ^ 2 + (b.y - a.y) ^ 2)
    if len == 0 then return { x = a.x, y = a.y } end
    local t = math.min(r, len / 3) / len
    return { x = a.x + (b.x - a.x) * t, y = a.y + (b.y - a.y) * t }
  end
  for i = 2, #pts - 1 do
    local p = pts[i]
    out[#out + 1] = toward(p, pts[i - 1], TRACK_SEP)
    out[#out + 1] = p
    out[#out + 1] = toward(p, pts[i + 1], TRACK_SEP)
  end
  out[#out + 1] = pts[#pts]
  return out
end

-- Step 6: the points each edge goes through, in its own direction.
local function route(vs, e, loops, looped, tracks_y)
  local le = { edge = e.edge, from = e.from, to = e.to }
  if e.loop then
    -- Several loops on one node have their labels one under another.
    local v, k = vs[e.from], looped[e.from] or 0
    looped[e.from] = k + 1
    le.loop = true
    local x, y = v.x + v.w / 2, v.y - (loops[e.from] - 1) * LABEL_H / 2 + k * LABEL_H
    le.points = { { x = x, y = y - 6 }, { x = x + LOOP, y = y - 12 }, { x = x + LOOP, y = y + 12 },
                  { x = x, y = y + 6 } }
    if e.edge.text ~= "" then
      le.label = label_box(x + LOOP_LABEL, y, e.edge.text)
    end
    return le
  end
  local pts = {}
  for i, v in ipairs(e.chain) do pts[i] = { x = vs[v].x, y = vs[v].y } end
  if e.lane then
    -- Down from the dummy to its track, across to the lane, down it,
    -- and across the track over the lower end to it.
    local d, b = vs[e.chain[2]], vs[e.bottom]
    local y1 = tracks_y[d.rank] + (e.track_top - 0.5) * TRACK_SEP
    local y2 = tracks_y[b.rank - 1] + (e.track_bottom - 0.5) * TRACK_SEP
    for _, p in ipairs({ { d.x, y1 }, { e.lane_x, y1 }, { e.lane_x, y2 }, { b.x, y2 }, { b.x, b.y } }) do
      pts[#pts + 1] = { x = p[1], y = p[2] }
    end
    le.lane = true
  end
  if e.back then
    local r = {}
    for i = #pts, 1, -1 do r[#r + 1] = pts[i] end
    pts = r
  end
  le.points, le.dy = pts, e.back and -1 or 1
  if e.label_vertex then
    local d = vs[e.label_vertex]
    le.label = { x = d.x, y = d.y, w = d.w, h = d.h }
  end
  return le
end

-- Lay out graph `g`: { width =, height =, nodes = {{node, x, y, w, h}},
-- edges = {{edge, points = {{x, y} ...}, label = {x, y, w, h} or nil,
-- loop = true for an edge from a node to itself, lane = true for one
-- round the layers}}, crossings = the number of edge crossings between
-- layers }.
function M.layout(g)
  local vs, index = vertices(g)
  local n = #vs
  local edges, loops = edges_of(g, vs, index)
  local layers = layering(vs, edges)
  local tracks = add_dummies(vs, edges, layers, n)
  local crossed = order(layers, vs)
  local width, height, tracks_y = position(layers, vs, tracks)
  width = width + LANE_SEP * assign_lanes(vs, edges, width - MARGIN)
  local lay = { width = width, height = height, nodes = {}, edges = {}, crossings = crossed }
  for i = 1, n do
    local v = vs[i]
    lay.nodes[i] = { node = v.node, x = v.x, y = v.y, w = v.w, h = v.h }
  end
  local looped = {}
  for i, e in ipairs(edges) do lay.edges[i] = route(vs, e, loops, looped, tracks_y) end
  ports(lay.edges, lay.nodes)
  for _, le in ipairs(lay.edges) do
    if le.lane then
      -- The run over the lower end turns to it where its port is.
      local p = le.points
      local port, before = #p, #p - 1
      if le.dy < 0 then port, before = 1, 2 end
      p[before].x = p[port].x
      le.points = tight_corners(p)
    end
  end
  return lay
end

-- `s` for XML text and attribute values.
local function xml(s)
  return (diagram.text(s):gsub("[&<>\"']", { ["&"] = "&amp;", ["<"] = "&lt;", [">"] = "&gt;",
    ['"'] = "&quot;", ["'"] = "&#39;" }))
end
M.xml = xml

local function f(x) return string.format("%.1f", x) end

local function node_svg(out, ln)
  local n, x, y, w, h = ln.node, ln.x, ln.y, ln.w, ln.h
  local classes = "node " .. n.kind .. (n.entry and " entry" or "")
  local attrs = string.format('class="%s" id="%s"', classes, n.id)
  if n.state then attrs = attrs .. string.format(' data-state="%s"', xml(n.state)) end
  out[#out + 1] = "<g " .. attrs .. ">"
  if n.kind == "start" then
    out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="%s"/>', f(x), f(y), f(w / 2))
  elseif n.kind == "end" then
    out[#out + 1] = string.format('<circle cx="%s" cy="%s" r="%s"/>', f(x), f(y), f(w / 2))
    out[#out + 1] = string.format('<circle class="inner" cx="%s" cy="%s" r="%s"/>', f(x), f(y), f(w / 2 - 5))
  else
    if n.kind == "script" then
      local l, r, t, b = x - w / 2, x + w / 2, y - h / 2, y + h / 2
      out[#out + 1] = string.format('<polygon points="%s,%s %s,%s %s,%s %s,%s %s,%s %s,%s"/>',
        f(l + 10), f(t), f(r - 10), f(t), f(r), f(y), f(r - 10), f(b), f(l + 10), f(b), f(l), f(y))
    else
      out[#out + 1] = string.format('<rect x="%s" y="%s" width="%s" height="%s" rx="6"/>',
        f(x - w / 2), f(y - h / 2), f(w), f(h))
    end
    out[#out + 1] = string.format('<text x="%s" y="%s">%s</text>', f(x), f(y), xml(n.label))
  end
  out[#out + 1] = "</g>"
end

local function edge_svg(out, le, id_of)
  local e, p = le.edge, le.points
  out[#out + 1] = string.format('<g class="edge %s" data-from="%s" data-to="%s">', e.style,
    xml(id_of[e.from]), xml(id_of[e.to]))
  local d
  if le.loop then
    d = string.format("M%s %sC%s %s %s %s %s %s", f(p[1].x), f(p[1].y), f(p[2].x), f(p[2].y),
      f(p[3].x), f(p[3].y), f(p[4].x), f(p[4].y))
  else
    -- Straight between the midpoints of the segments, and a curve round
    -- each bend, so an edge through several layers bends smoothly.
    local function mid(a, b) return f((a.x + b.x) / 2) .. " " .. f((a.y + b.y) / 2) end
    local parts = { "M" .. f(p[1].x) .. " " .. f(p[1].y), "L" .. mid(p[1], p[2]) }
    for i = 2, #p - 1 do
      parts[#parts + 1] = "Q" .. f(p[i].x) .. " " .. f(p[i].y) .. " " .. mid(p[i], p[i + 1])
    end
    parts[#parts + 1] = "L" .. f(p[#p].x) .. " " .. f(p[#p].y)
    d = table.concat(parts)
  end
  out[#out + 1] = string.format('<path d="%s" marker-end="url(#arrow)"/>', d)
  if le.label then
    local l = le.label
    out[#out + 1] = string.format('<rect class="label" x="%s" y="%s" width="%s" height="%s" rx="3"/>',
      f(l.x - l.w / 2), f(l.y - l.h / 2), f(l.w), f(l.h))
    out[#out + 1] = string.format('<text x="%s" y="%s">%s</text>', f(l.x), f(l.y), xml(e.text))
  end
  out[#out + 1] = "</g>"
end

-- What the drawing shows, in words, for readers that cannot see it.
local function describe(g)
  local label = {}
  for _, n in ipairs(g.nodes) do label[n.id] = n.label end
  local lines = {}
  for _, e in ipairs(g.edges) do
    lines[#lines + 1] = string.format("%s to %s%s", label[e.from], label[e.to],
      e.text ~= "" and " (" .. e.text .. (e.style == "hook" and ", by a hook" or "") .. ")" or "")
  end
  return table.concat(lines, "; ")
end

-- The graph as one <svg> element, `title` naming the workflow.
function M.render(g, title)
  local lay = M.layout(g)
  local id_of, states, entry = {}, 0, nil
  for _, n in ipairs(g.nodes) do
    id_of[n.id] = n.state or n.id
    if n.state and n.kind ~= "missing" then states = states + 1 end
    if n.entry then entry = n.label end
  end
  local function count(n, what) return n .. " " .. what .. (n == 1 and "" or "s") end
  local summary = string.format("Diagram of workflow %s: %s, %s%s", title, count(states, "state"),
    count(#g.edges, "transition"), entry and ", entry " .. entry or "")
  local out = {}
  out[#out + 1] = string.format(
    '<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="%s" width="%s" height="%s" viewBox="0 0 %s %s">',
    xml(summary), f(lay.width), f(lay.height), f(lay.width), f(lay.height))
  out[#out + 1] = "<title>" .. xml(summary) .. "</title>"
  out[#out + 1] = "<desc>" .. xml(describe(g)) .. "</desc>"
  out[#out + 1] = '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="8" '
    .. 'markerHeight="8" orient="auto-start-reverse" markerUnits="userSpaceOnUse">'
    .. '<path d="M0 0L10 5L0 10z"/></marker></defs>'
  for _, le in ipairs(lay.edges) do edge_svg(out, le, id_of) end
  for _, ln in ipairs(lay.nodes) do node_svg(out, ln) end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

-- The drawing's own rules, over the colours its page defines (--fg,
-- --bg, --muted, --node, --script, --accent, --hook): also served to
-- raymond serve's page (raymond.webpage), which draws the same SVG.
M.DIAGRAM_STYLE = [[
svg text { font: 13px ui-monospace, "SFMono-Regular", Menlo, Consolas, "DejaVu Sans Mono", monospace;
  fill: var(--fg); text-anchor: middle; dominant-baseline: central; }
.node rect, .node polygon, .node circle { fill: var(--node); stroke: var(--fg); stroke-width: 1.2; }
.node.script polygon { fill: var(--script); }
.node.entry rect, .node.entry polygon { stroke: var(--accent); stroke-width: 3; }
.node.missing rect { stroke-dasharray: 5 4; fill: none; }
.node.start circle { fill: var(--fg); }
.node.end circle { fill: var(--bg); stroke-width: 2; }
.node.end circle.inner { fill: var(--fg); }
.edge path { fill: none; stroke: var(--muted); stroke-width: 1.4; }
.edge.worker path { stroke-width: 3; }
.edge.hook path { stroke: var(--hook); stroke-dasharray: 2 4; stroke-linecap: round; }
.edge.hook text { fill: var(--hook); }
.edge rect.label { fill: var(--bg); }
marker path { fill: currentColor; }
]]

local STYLE = [[
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #57606a;
  --node: #f6f8fa; --script: #fff4d6; --accent: #0969da; --hook: #8250df; }
@media (prefers-color-scheme: dark) {
  :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9da7b3;
    --node: #161b22; --script: #2b2111; --accent: #58a6ff; --hook: #d2a8ff; }
}
body { background: var(--bg); color: var(--fg); margin: 1.5rem;
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; }
h1 { font-size: 1.3rem; margin: 0 0 .5rem; }
.legend { color: var(--muted); margin: 0 0 1rem; }
figure { margin: 0; overflow: auto; }
svg { display: block; color: var(--muted); }
]] .. M.DIAGRAM_STYLE .. [[
details { margin-top: 1.5rem; }
pre { background: var(--node); padding: .75rem; overflow: auto; }
]]

-- A whole HTML page showing the graph, with `mermaid` (its Mermaid
-- source) below, ready to copy.
function M.html(g, title, mermaid)
  return table.concat({
    "<!DOCTYPE html>",
    '<html lang="en">',
    "<head>",
    '<meta charset="utf-8">',
    -- Nothing may be fetched: the page is whole as it is.
    [[<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">]],
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<meta name="color-scheme" content="light dark">',
    "<title>" .. xml(title) .. " - raymond diagram</title>",
    "<style>", STYLE, "</style>",
    "</head>",
    "<body>",
    "<h1>Workflow " .. xml(title) .. "</h1>",
    '<p class="legend">Boxes are markdown states, hexagons scripts; the blue border marks the '
      .. "entry state. Solid arrows: the agent goes on; thick: a &lt;fork&gt; starts a new agent; "
      .. "dotted: a route a hook takes (evaluate:, on_max_visits).</p>",
    "<figure>",
    M.render(g, title),
    "</figure>",
    "<details>",
    "<summary>Mermaid source</summary>",
    "<pre>" .. xml(mermaid) .. "</pre>",
    "</details>",
    "</body>",
    "</html>",
    "",
  }, "\n")
end

return M
