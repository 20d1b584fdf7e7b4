-- raymond.serve_events: GET /api/runs/ID/events, one run as Server-Sent
-- Events (docs/api.md has the event types).
--
--   events.stream(api, req, id, snapshot)
--       answers `req` with a stream that lasts until the client goes;
--       snapshot(info) gives the JSON text of a `run` event
--
-- The daemon holds no run state, so a stream is made from the run's own
-- files, looked at again when a watch of their folders says they changed
-- ("changes" below) or a second has passed:
--
--   the debug record  .raymond/debug/ID.record, which only grows (one
--                     piece per write, src/record.h): each piece becomes
--                     events, and the byte offset after it is their id.
--                     A client that reconnects with Last-Event-ID gets
--                     the pieces after that offset: the id survives a
--                     restart of the daemon, since it names a place in a
--                     file, not anything the daemon kept.
--   the state         a `run` event, the object GET /api/runs/ID gives,
--                     first on every connect and again whenever the
--                     state file, its journal or the run's lock changed.
--                     It carries no id: it is the run as it is now, not
--                     a step of its history.
--
-- Only the last event of a piece carries the id, so a client cut off
-- among the events of one piece gets the whole piece again: a reconnect
-- may repeat events, never miss one.
--
-- Nothing is buffered without bound.  The record is read WINDOW bytes at
-- a time, and no further while the client's stream buffer is full
-- (req:send says "full"): a slow client falls behind in the file, not in
-- the daemon's memory.  An event's text is cut at MAX_TEXT bytes, a
-- piece over MAX_PIECE bytes is passed over, and a run whose state is over
-- MAX_SNAPSHOT bytes of JSON gets a `run` event of its status and cost
-- alone (too_large: GET /api/runs/ID has the rest).

local raymond = require("raymond")
local ask = require("raymond.ask")
local runinfo = require("raymond.runinfo")
local runstate = require("raymond.runstate")
local workspace = require("raymond.workspace")

local M = {}

M.TICK = 0.02
M.WINDOW = 64 * 1024
M.MAX_PIECE = 8 * 1024 * 1024
M.MAX_TEXT = 16 * 1024
M.KEEPALIVE = 15
M.MAX_SNAPSHOT = 256 * 1024

local MAGIC = "raymond record 1\n"

-- Pieces that say nothing a watcher needs: the prompt is the workflow's
-- own text, and can be large.
local QUIET = { prompt = true }

local function cut(text)
  if #text <= M.MAX_TEXT then return text end
  return text:sub(1, M.MAX_TEXT) .. string.format("\n... (%d bytes more)", #text - M.MAX_TEXT)
end

-- A number read from JSON (a float, as cjson reads every number) that is
-- whole, as an integer: an exit status shows as 0, not 0.0.
local function whole(x)
  return type(x) == "number" and math.tointeger(x) or x
end

-- "2026-11-28T01:46:03.440264Z rest" -> the time and the rest.
local function stamped(data)
  local at, rest = data:match("^(%d%d%d%d%-%d%d%-%d%dT[%d:.]+Z) (.*)$")
  return at, rest or data
end

-- ----------------------------------------------------------------- prints

-- The <print> elements complete in what a step wrote so far; `st.pend`
-- keeps what may still become one.
local function prints(st, text, out)
  local pend = st.pend .. text
  local from = 1
  while true do
    local s, e, body = pend:find("<print[^>]*>(.-)</print>", from)
    if not s then break end
    out[#out + 1] = { "print", { step = st.n, agent = st.agent, text = cut(body) } }
    from = e + 1
  end
  pend = pend:sub(from)
  local open = pend:find("<print", 1, true)
  if open then
    pend = pend:sub(open)
    if #pend > M.MAX_TEXT then pend = "" end
  else
    pend = pend:sub(-6)
  end
  st.pend = pend
end

-- ------------------------------------------------------- a Claude turn

local function tool_input(input)
  if type(input) ~= "table" then return "" end
  local text = raymond.json_encode(input) or ""
  if #text > 200 then text = text:sub(1, 200) .. "..." end
  return text
end

-- One stream-json line of the Claude CLI: its assistant text and tool calls.
local function claude_line(st, line, out)
  local ok, msg = pcall(raymond.cjson.decode, line)
  if not ok or type(msg) ~= "table" or msg.type ~= "assistant" or type(msg.message) ~= "table" then return end
  local content = msg.message.content
  if type(content) ~= "table" then return end
  for _, block in ipairs(content) do
    if type(block) == "table" and block.type == "text" and type(block.text) == "string" then
      out[#out + 1] = { "text", { step = st.n, agent = st.agent, text = cut(block.text) } }
      prints(st, block.text, out)
    elseif type(block) == "table" and block.type == "tool_use" then
      out[#out + 1] = { "tool", { step = st.n, agent = st.agent, name = tostring(block.name),
                                  input = tool_input(block.input) } }
    end
  end
end

-- A chunk of a turn's stdout: whole lines are read, the rest kept.
local function claude_chunk(st, data, out, emit)
  local buf = st.line .. data
  local from = 1
  for line, after in buf:gmatch("([^\n]*)\n()") do
    if emit and line ~= "" then claude_line(st, line, out) end
    from = after
  end
  st.line = buf:sub(from)
  -- A line the engine would refuse (claude.LINE_MAX) is not kept either.
  if #st.line > M.MAX_PIECE then st.line = "" end
end

-- ----------------------------------------------------------------- pieces

-- The events of one piece of the record, added to `out`.  `emit` false:
-- the piece lies before where the client left off, and only what later
-- pieces need (which agent a step is) is kept.
local function piece_events(f, n, piece, data, out, emit)
  local steps = f.steps
  if piece == "start" then
    local ok, s = pcall(raymond.cjson.decode, data)
    s = ok and type(s) == "table" and s or {}
    steps[n] = { n = n, agent = s.agent, state = s.state, turn = s.turn == true, line = "", pend = "" }
    if emit then
      out[#out + 1] = { "step", { step = n, agent = s.agent, state = s.state, turn = s.turn == true,
        purpose = s.purpose, name = s.name,
        at = type(s.started_at) == "number" and runstate.iso(s.started_at) or nil } }
    end
    return
  end
  local st = steps[n] or { n = n, line = "", pend = "" }
  steps[n] = st
  if piece == "stdout" and st.turn then
    claude_chunk(st, data, out, emit)
  elseif piece == "stdout" or piece == "stderr" then
    if emit then out[#out + 1] = { "output", { step = n, agent = st.agent, stream = piece, text = cut(data) } } end
    -- A print begun before where the client left off ends after it.
    if piece == "stdout" then prints(st, data, emit and out or {}) end
  elseif piece == "end" then
    steps[n] = nil
    if not emit then return end
    local ok, e = pcall(raymond.cjson.decode, data)
    e = ok and type(e) == "table" and e or {}
    out[#out + 1] = { "step_end", { step = n, agent = st.agent, exit = whole(e.exit), signal = e.signal,
      duration = e.duration, cost = e.cost_usd, outcome = e.outcome, message = e.message } }
  elseif emit and piece == "transition" then
    local at, rest = stamped(data)
    local agent, from, to = rest:match("^%[([^%]]*)%] (.-) %-> (.*)$")
    out[#out + 1] = { "transition", { at = at, agent = agent, from = from, to = to or cut(rest) } }
  elseif emit and piece == "decision" then
    local at, rest = stamped(data)
    out[#out + 1] = { "decision", { at = at, text = cut(rest) } }
  elseif emit and not QUIET[piece] then
    local at, rest = stamped(data)
    out[#out + 1] = { "note", { piece = piece, at = at, text = cut(rest) } }
  end
end

-- The next piece of the record at `f.off`: step, piece, data, the offset
-- after it; or false when it is not all written yet; or nil and why the
-- record cannot be followed.  A piece too large to show comes with no
-- data.
local function next_piece(f)
  local win, err = raymond.read_range(f.path, f.off, M.WINDOW)
  if not win then return nil, err end
  local n, piece, len, after = win:match("^@ (%d+) ([%w._-]+) (%d+)\n()")
  if not n then
    if #win < 64 and not win:find("\n", 1, true) then return false end
    return nil, string.format("the run's record is damaged at byte %d", f.off)
  end
  len = tonumber(len)
  local total = after - 1 + len + 1
  if total <= #win then
    return tonumber(n), piece, win:sub(after, after + len - 1), f.off + total
  end
  local _, _, _, _, size = raymond.stat(f.path)
  if not size or size < f.off + total then return false end
  if len > M.MAX_PIECE or QUIET[piece] then return tonumber(n), piece, nil, f.off + total end
  local whole = raymond.read_range(f.path, f.off, total)
  if not whole or #whole < total then return false end
  return tonumber(n), piece, whole:sub(after, after + len - 1), f.off + total
end

-- ----------------------------------------------------------------- stream

local function frame(kind, data, id)
  return (id and ("id: " .. id .. "\n") or "") .. "event: " .. kind .. "\ndata: "
    .. (raymond.json_encode(data) or "{}") .. "\n\n"
end

-- Send what `f.queue` holds: all of it at once when it fits, else as
-- many whole events as fit.  True when all went, false when the client's
-- buffer is full, nil when the client has gone.
local function flush(f, req)
  local q = f.queue
  if #q == 0 then return true end
  local ok, why = req:send(table.concat(q))
  if ok then
    f.queue = {}
    return true
  end
  if why == "gone" then return nil end
  local i = 1
  while i <= #q do
    ok, why = req:send(q[i])
    if not ok then break end
    i = i + 1
  end
  if why == "gone" then return nil end
  f.queue = table.move(q, i, #q, 1, {})
  return #f.queue == 0
end

-- The record's events from `f.off` on, sent until the record has no more
-- or the client's buffer is full.  False when the client has gone.
local function follow_record(f, req)
  local sent = flush(f, req)
  if not sent then return sent ~= nil end
  if f.broken then return true end
  if f.off == 0 then
    local head = raymond.read_range(f.path, 0, #MAGIC)
    if not head or #head < #MAGIC then return true end
    if head ~= MAGIC then
      f.broken = true
      f.queue[1] = frame("note", { piece = "error", text = "the run's record is not a raymond debug record" })
      return flush(f, req) ~= nil
    end
    f.off = #MAGIC
  end
  f.more = false
  for _ = 1, 64 do
    local n, piece, data, after = next_piece(f)
    if n == false then return true end
    if not n then
      f.broken = true
      f.queue[1] = frame("note", { piece = "error", text = piece })
      return flush(f, req) ~= nil
    end
    local out, emit = {}, after > f.resume_from
    if data then piece_events(f, n, piece, data, out, emit) end
    f.off = after
    for i, e in ipairs(out) do f.queue[#f.queue + 1] = frame(e[1], e[2], i == #out and tostring(after) or nil) end
    sent = flush(f, req)
    if not sent then return sent ~= nil end
  end
  f.more = true
  return true
end

-- What tells the state changed: the state file, its journal and the lock.
local function state_key(ws, id)
  local parts = {}
  local state = workspace.state_path(ws, id)
  for i, p in ipairs({ state, runstate.journal_path(state) }) do
    local kind, _, mtime, _, size, ino = raymond.stat(p)
    parts[i] = kind and string.format("%.9f/%d/%d", mtime, size, ino) or "-"
  end
  parts[#parts + 1] = tostring(runinfo.held(ws, id))
  return table.concat(parts, " ")
end

-- The run as the streams of it see it now: { key =, info =, text = },
-- shared by every stream of the run, so that many clients of one run cost
-- one look at its files per tick and one read of its state per change.
-- Each stream holds its run's entry (f.run), which keeps it here.
local seen = setmetatable({}, { __mode = "v" })

-- The text of a `run` event: the whole run, or, for a run whose state is
-- too large for one event, what a list shows of it.
local function run_text(info, snapshot)
  local text = snapshot(info)
  if #text <= M.MAX_SNAPSHOT then return text end
  return raymond.json_encode({ id = info.id, status = info.status, running = info.held and true or false,
    cost = info.cost, budget = info.budget, too_large = true })
end

local function current(ws, id, snapshot, v)
  local c = seen[ws.root .. "/" .. id]
  if c and c.v == v then return c end
  local key = state_key(ws, id)
  if not (c and c.key == key) then
    local info = runinfo.read(ws, id)
    c = { key = key, info = info, text = info.rec and run_text(info, snapshot) }
  end
  c.v = v
  seen[ws.root .. "/" .. id] = c
  return c
end

-- The `run` event and the new asks, when the run changed since the last
-- one this stream sent.  `v` is the run's version (below); f.state_v
-- the one this stream has seen the state at.
local function follow_state(f, api, id, snapshot, req, v)
  if #f.queue > 0 then return true end
  local c = current(api.ws, id, snapshot, v)
  f.run = c
  if c.key == f.key or not c.text then
    f.state_v = v
    return true
  end
  local parts, asked = { "event: run\ndata: " .. c.text .. "\n\n" }, {}
  for _, a in ipairs(ask.pending(c.info.rec)) do
    if not f.asks[a.ask.id] then
      asked[#asked + 1] = a.ask.id
      parts[#parts + 1] = frame("ask", { ask_id = a.ask.id, agent = a.id, prompt = a.ask.prompt })
    end
  end
  local ok, why = req:send(table.concat(parts))
  if not ok then return why ~= "gone" end
  for _, ask_id in ipairs(asked) do f.asks[ask_id] = true end
  f.key, f.state_v = c.key, v
  return true
end

-- The offset a reconnecting client gives back: digits, else 0.
local function last_id(req)
  local v = req:header("Last-Event-ID") or req:arg("last_event_id") or ""
  return v:match("^%d+$") and #v < 16 and tonumber(v) or 0
end

-- The record's events after offset `from`, all that are there now, as
-- the SSE text a client would get.  With `room`, the client takes at most
-- that many bytes between two looks, as a slow one would.  For tests and
-- tools: the stream sends the same.
function M.read(path, from, room)
  local out, left = {}, math.huge
  local sink = { send = function(_, text)
    if #text > left then return nil, "full" end
    left = left - #text
    out[#out + 1] = text
    return true
  end }
  local f = { path = path, off = 0, resume_from = from or 0, steps = {}, asks = {}, queue = {} }
  repeat
    local before, queued = f.off, #f.queue
    left = room or math.huge
    follow_record(f, sink)
  until f.off == before and #f.queue == 0 or (f.off == before and #f.queue == queued and queued > 0)
  return table.concat(out)
end

-- ---------------------------------------------------------------- changes

-- Which runs changed, from inotify watches on the folders of the state
-- files and the records (raymond.dir_watch), so that a stream whose run
-- did not change does nothing but compare a number each tick.  One
-- watcher per workspace, run by a coroutine while any stream is open:
--
--   changes.version[id]   bumped when a file of run `id` changed
--   changes.streams       the streams open; at 0 the coroutine ends
--
-- A watch that cannot be made (no such folder yet, no inotify left) or
-- that lost events (a full queue, a folder replaced) bumps every run, and
-- is made again; so does the tick every EVERY seconds, so a change the
-- watches could not see (a lock dropped by a process that died) shows
-- within that time.
M.EVERY = 1

local watchers = {}

local function run_of(name)
  return name:match("^([%w_-]+)%.")
end

local function watch_pass(w)
  local all = raymond.now() - w.checked >= M.EVERY
  for i, dir in ipairs(w.dirs) do
    local changed = w.watches[i] and w.watches[i]:changes()
    if not changed then
      all = true
      if w.watches[i] then w.watches[i]:close() end
      w.watches[i] = raymond.dir_watch(dir)
    else
      for name in pairs(changed) do
        local id = run_of(name)
        if id then w.version[id] = (w.version[id] or 0) + 1 end
      end
    end
  end
  if all then
    w.epoch = w.epoch + 1
    w.checked = raymond.now()
  end
end

-- The watcher of `ws`, counting one more stream of it.
local function watcher(ws)
  local w = watchers[ws.root]
  if w then
    w.streams = w.streams + 1
    return w
  end
  w = { dirs = { ws.state_dir, ws.debug_root }, watches = {}, version = {}, epoch = 0, checked = 0, streams = 1 }
  watchers[ws.root] = w
  watch_pass(w)
  raymond.go(function()
    while w.streams > 0 and raymond.sleep(M.TICK / 2) do watch_pass(w) end
    for _, watch in pairs(w.watches) do watch:close() end
    watchers[ws.root] = nil
  end)
  return w
end

-- A number that changes whenever run `id` may have changed.
local function version(w, id)
  return (w.version[id] or 0) * 1e6 + w.epoch
end

function M.stream(api, req, id, snapshot)
  local gone = false
  req:stream(200, {
    ["Content-Type"] = "text/event-stream", ["Cache-Control"] = "no-store",
    ["X-Accel-Buffering"] = "no",
  }, function() gone = true end)
  local f = { path = workspace.debug_path(api.ws, id), off = 0, resume_from = last_id(req), steps = {},
              asks = {}, queue = {} }
  if not req:send("retry: 1000\n\n") then return end
  local w = watcher(api.ws)
  local quiet = raymond.now()
  while not gone do
    local v = version(w, id)
    -- A full queue, or a record left half read (64 pieces a pass), is
    -- work to go on with even if nothing changed.
    if v ~= f.state_v or v ~= f.record_v or #f.queue > 0 or f.more then
      if not follow_state(f, api, id, snapshot, req, v) then break end
      f.record_v = v
      if not follow_record(f, req) then break end
    end
    if raymond.now() - quiet >= M.KEEPALIVE and #f.queue == 0 then
      -- A comment line: it keeps proxies and idle timers from ending a
      -- stream that has nothing to say.
      req:send(": keepalive\n\n")
      quiet = raymond.now()
    end
    if not raymond.sleep(M.TICK) then break end
  end
  w.streams = w.streams - 1
  req:finish()
end

return M
