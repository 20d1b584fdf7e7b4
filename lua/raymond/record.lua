-- raymond.record: the debug record of a run, .raymond/debug/<id>.record.
--
--   local rec = record.open(path)       nil and a message if it cannot be
--   local step = rec:step(n, name)      one script run or Claude turn
--   step:put(piece, text)               a piece of it: prompt, ...
--   step:finish(table)                  its outcome ("end", as JSON)
--   step.record, step.n                 for raymond.spawn, which puts the
--                                       child's stdout and stderr chunks
--   rec:transition(agent_id, from, to)  one transition ("transition")
--   rec:decision(line)                  a hook's decision ("decision")
--   rec:note(piece, line)               another event of the run, e.g. a
--                                       worktree removed or kept ("worktree")
--   rec:close()
--
-- One file per run, appended to (src/record.h has the layout): a piece is
-- one write, so the record costs little even for a chain of short steps.
-- Keeping a record never stops a run: a piece that cannot be written is
-- left out.  `raymond.record_read` (below) reads it back.

local raymond = require("raymond")
local runstate = require("raymond.runstate")

local M = {}

local Record = {}
Record.__index = Record

local Step = {}
Step.__index = Step

function M.open(path)
  local ud, err = raymond.record_open(path)
  if not ud then return nil, err end
  return setmetatable({ ud = ud, last = 0 }, Record)
end

-- Step `n` of the run, named e.g. "main_START.md" or "hook_evaluate";
-- `start` (a table) says what it runs.
function Record:step(n, name, start)
  self.last = n
  local s = setmetatable({ record = self.ud, n = n }, Step)
  start.name = name
  s:put("start", raymond.json_encode(start) or "{}")
  return s
end

function Step:put(piece, text) self.record:put(self.n, piece, text) end

function Step:finish(t) self:put("end", raymond.json_encode(t) or "{}") end

-- A transition belongs to the last step that began.
function Record:transition(agent_id, from, text)
  self.ud:put(self.last, "transition",
    string.format("%s [%s] %s -> %s", runstate.iso(raymond.now()), agent_id, from, text))
end

-- A hook's decision, as the progress line shows it ("decision").
function Record:decision(line)
  self.ud:put(self.last, "decision", string.format("%s %s", runstate.iso(raymond.now()), line))
end

-- Another event of the run, as the console line shows it.
function Record:note(piece, line)
  self.ud:put(self.last, piece, string.format("%s %s", runstate.iso(raymond.now()), line))
end

function Record:close() self.ud:close() end

-- The pieces of the record at `path`, in order: a list of
-- { step =, piece =, data = }; or nil and a message.
function M.read(path)
  local text, err = raymond.read_file(path)
  if not text then return nil, err end
  local magic = "raymond record 1\n"
  if text:sub(1, #magic) ~= magic then return nil, path .. " is not a raymond debug record" end
  local pieces, pos = {}, #magic + 1
  while pos <= #text do
    local step, piece, len, after = text:match("^@ (%d+) ([%w._-]+) (%d+)\n()", pos)
    if not step then return nil, string.format("%s: a piece header is damaged at byte %d", path, pos) end
    len = tonumber(len)
    if after + len > #text + 1 then
      return nil, string.format("%s: the piece at byte %d is damaged: cut short", path, pos)
    end
    pieces[#pieces + 1] = { step = tonumber(step), piece = piece, data = text:sub(after, after + len - 1) }
    pos = after + len + 1
  end
  return pieces
end

return M
