-- Hook dispatch cost per transition, run by bench/run.sh through
-- build/tests/luarun.  A transition fires PreState, PostState,
-- PreTransition and PostTransition; this times those four emits with
-- FILES no-op hook files (each handling every event) against none.
local raymond = require("raymond")
local events = require("raymond.events")
local hooks = require("raymond.hooks")

local FILES = tonumber(os.getenv("HOOK_FILES") or "") or 4
local N = tonumber(os.getenv("HOOK_ROUNDS") or "") or 100000

local src = "local function nop(ev) return nil end\nreturn {"
for name in pairs(events.by_name) do src = src .. name .. " = nop, " end
src = src .. "}"
local files = {}
for i = 1, FILES do files[i] = { name = "nop" .. i .. ".lua", source = src } end

local function agent_event(name)
  return { run_id = "r", workflow = "/w", run = { id = "r", data = {}, cost_usd = 0 },
           agent_id = "main", state = "S.sh",
           agent = { id = "main", data = {}, state = "S.sh", cwd = "/", depth = 0, cost_usd = 0 },
           transition = { tag = "goto", target = "S.sh" }, kind = "script", output = "" }
end

local function time(set)
  local t0 = raymond.clock()
  for _ = 1, N do
    for _, e in ipairs({ "PreState", "PostState", "PreTransition", "PostTransition" }) do
      assert(hooks.emit(set, e, agent_event(e)))
    end
  end
  return (raymond.clock() - t0) / N
end

local none = time(assert(hooks.load({})))
local some = time(assert(hooks.load(files)))
print(string.format("HOOKS %d %.3f %.3f", FILES, none * 1e6, some * 1e6))
