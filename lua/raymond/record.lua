-- raymond.record: the debug record of a run, .raymond/debug/<id>/.
--
--   local rec = record.open(dir)        nil when there is no record
--   local step = rec:step(n, name)      one script run or Claude turn
--   step:path(ext)                      where the spawn copies an output
--   step:put(ext, text)                 a piece of the step (prompt, argv)
--   step:meta(table)                    timing and outcome, as JSON
--   rec:transition(agent_id, from, to)  one line of transitions.log
--   rec:close()
--
-- Keeping a record never stops a run: a piece that cannot be written is
-- left out.

local raymond = require("raymond")
local runstate = require("raymond.runstate")

local M = {}

local Record = {}
Record.__index = Record

local Step = {}
Step.__index = Step

local function write_file(path, text)
  local f = io.open(path, "wb")
  if f then
    f:write(text)
    f:close()
  end
end

function M.open(dir)
  local ok, err = raymond.mkdir_p(dir)
  if not ok then return nil, err end
  return setmetatable({ dir = dir }, Record)
end

-- Step `n` of the run, named e.g. "main_START.md" or "hook_evaluate".
function Record:step(n, name)
  local base = string.format("%s/%05d_%s", self.dir, n, name)
  return setmetatable({ base = base }, Step)
end

function Step:path(ext) return self.base .. "." .. ext end

function Step:put(ext, text) write_file(self.base .. "." .. ext, text) end

function Step:meta(t) write_file(self.base .. ".meta.json", raymond.json_encode(t) or "") end

function Record:transition(agent_id, from, text)
  raymond.append_file(self.dir .. "/transitions.log",
    string.format("%s [%s] %s -> %s\n", runstate.iso(raymond.now()), agent_id, from, text))
end

function Record:close() end

return M
