-- raymond.live: the live view of a run on a terminal (docs/cli.md, "The
-- live view").
--
--   if live.wanted(quiet) then view = live.open(run) end
--   view:above(text)     stderr text (progress, errors): scrolls above
--   view:print(line)     one line for stdout (<print>): scrolls above
--   view:close()         the block gives way to its footer, as a line
--   live.title(name)     a run's --name in the terminal's title
--
-- The view is on when stdout and stderr are both terminals, TERM is not
-- "dumb" and --quiet is not given: with stdout a pipe or a file
-- (`$(raymond wf)`) nothing of it is written anywhere.  Its block is on
-- stderr, under everything that scrolls: one line per live agent (its
-- state, how long it has been there, the cost of its current or last
-- Claude turn) and a footer (the run's cost against its budget, agents
-- live and done, time since the run began).
--
-- While the block is up the cursor is hidden and parked at the start of
-- the block's first line, so that "\r ESC[J" clears it from anywhere: a
-- writer clears it, writes its lines, and the block is drawn again below
-- them.  The C side knows the block is up (raymond.set_live), so its own
-- messages (a signal, an internal error) clear it first, and the cursor is
-- shown again at exit however the process ends.
--
-- The block is drawn at most 10 times a second and only when what it
-- shows changed (the elapsed times change once a second).  A ticker
-- coroutine looks every 0.1 s and ends with the run, or at once when the
-- run stops.  Every line of the block is made of text already safe to
-- show (agent ids and state names come from the workflow and the model)
-- and is cut to the terminal's width.

local raymond = require("raymond")
local usd = require("raymond.text").usd

local M = {}

M.INTERVAL = 0.1

local View = {}
View.__index = View

function M.wanted(quiet)
  return not quiet and raymond.isatty("stdout") and raymond.isatty("stderr") and os.getenv("TERM") ~= "dumb"
end

-- Put a run's --name in the terminal's title (OSC 0) while it runs,
-- when stderr is a terminal, with or without the view.  The name was
-- checked to be printable text (raymond.text.printable_text), so it cannot
-- end the sequence early.  The title is left as it is at the end.
function M.title(name)
  if not name or not raymond.isatty("stderr") or os.getenv("TERM") == "dumb" then return end
  raymond.stderr("\27]0;" .. name .. " - raymond\7")
end

-- NO_COLOR (https://no-color.org): present and not empty turns colour off.
local function colour()
  local v = os.getenv("NO_COLOR")
  return v == nil or v == ""
end

local function width()
  local cols, rows = raymond.term_size()
  return cols or 80, rows or 24
end
M.width = width

-- `s` (safe text) cut to `cols` characters.
function M.cut(s, cols)
  if #s <= cols then return s end
  local n = utf8.len(s)
  if not n or n <= cols then return s end
  return s:sub(1, utf8.offset(s, cols + 1) - 1)
end

local function clock(seconds)
  seconds = math.floor(seconds)
  if seconds < 3600 then return string.format("%d:%02d", seconds // 60, seconds % 60) end
  return string.format("%d:%02d:%02d", seconds // 3600, seconds // 60 % 60, seconds % 60)
end

function M.open(run)
  local v = setmetatable({ run = run, agents = {}, done = 0, height = 0, drawn = nil,
                           last_draw = -1, colour = colour(), open = true }, View)
  raymond.set_live(true)
  raymond.stderr("\27[?25l")
  v:draw()
  raymond.go(function()
    while v.open and raymond.sleep(M.INTERVAL) do
      -- The run is over once no agent's loop runs any more.
      if run.looping == 0 then break end
      v:draw()
    end
  end)
  return v
end

-- What the view knows of each agent, brought up to date with the run.
function View:update(now)
  local rec, seen = self.run.rec, {}
  local open = {}
  for _, t in pairs(rec.open_turns or {}) do
    if t.agent then open[t.agent] = t end
  end
  for _, a in ipairs(rec.agents) do
    local s = self.agents[a.id]
    if not s then
      s = { cost = a.cost or 0 }
      self.agents[a.id] = s
    end
    if s.state ~= a.state then s.state, s.since = a.state, now end
    local cost = a.cost or 0
    if cost > s.cost then s.last, s.cost = cost - s.cost, cost end
    s.turn = open[a.id]
    seen[a.id] = true
  end
  for id in pairs(self.agents) do
    if not seen[id] then
      self.agents[id] = nil
      self.done = self.done + 1
    end
  end
end

function View:footer(now)
  local rec = self.run.rec
  local budget = rec.launch.budget
  local n = #rec.agents
  return string.format("%s%s  %d agent%s live, %d done  %s", usd(rec.cost),
    (budget and budget > 0) and string.format(" of $%.2f budget", budget) or "",
    n, n == 1 and "" or "s", self.done, clock(now - self.run.t0))
end

-- The block's lines, safe and cut to `cols`; fewer than `rows` of them.
function View:lines(now, cols, rows)
  local out, agents = {}, self.run.rec.agents
  -- The block leaves the screen's top row to what scrolls: agents, then
  -- the "more" line when they do not all fit, then the footer.
  local room = #agents
  if room + 1 > rows - 1 then room = math.max(0, rows - 3) end
  local bold, dim, plain = "", "", ""
  if self.colour then bold, dim, plain = "\27[1m", "\27[2m", "\27[0m" end
  for i = 1, room do
    local a = agents[i]
    local s = self.agents[a.id]
    local cost = s.turn and ("turn " .. usd(s.turn.seen)) or (s.last and ("last turn " .. usd(s.last)) or "")
    local id = raymond.printable(a.id)
    local at = raymond.printable(a.state) .. (a.status == "asking" and " (asking)" or "")
    local text = M.cut(string.format("%s  %s  %s%s", id, at, clock(now - s.since),
      cost ~= "" and ("  " .. cost) or ""), cols - 1)
    out[#out + 1] = bold .. text:sub(1, #id) .. plain .. text:sub(#id + 1)
  end
  if room < #agents then
    out[#out + 1] = M.cut(string.format("... and %d more agents", #agents - room), cols - 1)
  end
  out[#out + 1] = dim .. M.cut(self:footer(now), cols - 1) .. plain
  return out
end

-- Draw the block if what it shows changed, or `force`.  Called by the
-- ticker and after lines scrolled; at most 10 draws a second.
function View:draw(force)
  if not self.open then return end
  local now = raymond.clock()
  if not force and now - self.last_draw < M.INTERVAL then return end
  self:update(now)
  local cols, rows = width()
  local lines = self:lines(now, cols, rows)
  local text = table.concat(lines, "\n")
  if text == self.drawn and self.height > 0 then return end
  local up = #lines > 1 and string.format("\27[%dA", #lines - 1) or ""
  raymond.stderr("\r\27[J" .. text .. "\r" .. up)
  self.drawn, self.height, self.last_draw = text, #lines, now
end

-- Clear the block; the next draw puts it back.
function View:clear()
  if self.height > 0 then
    raymond.stderr("\r\27[J")
    self.height, self.drawn = 0, nil
  end
end

function View:above(text)
  self:clear()
  raymond.stderr(text)
  self:draw()
end

function View:print(line)
  self:clear()
  raymond.stdout(line .. "\n")
  self:draw()
end

-- The block gives way to its footer, left as an ordinary line, and the
-- cursor shows again.
function View:close()
  if not self.open then return end
  local now = raymond.clock()
  self:update(now)
  local cols = width()
  self:clear()
  raymond.stderr(M.cut(self:footer(now), cols - 1) .. "\n\27[?25h")
  self.open = false
  raymond.set_live(false)
end

return M
