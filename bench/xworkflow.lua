-- The engine's own work for a cross-workflow call against a plain call,
-- run by bench/xworkflow.sh through build/tests/luarun: deciding the tag
-- (a -workflow path is resolved to another folder and its entry),
-- applying it (the checks against the run's folders and the depth, the
-- frame) and applying the <result> that comes back, ROUNDS times each.
-- What it leaves out, the script's own run and the state save, is the
-- same for both.
local raymond = require("raymond")
local T = require("testing")
local transition = require("raymond.transition")

local N = tonumber(os.getenv("XWF_ROUNDS") or "") or 20000

local top = T.tmpdir()
for _, d in ipairs({ "a", "b" }) do
  assert(raymond.mkdir_p(top .. "/" .. d))
  for _, f in ipairs({ "1_START.sh", "R.sh" }) do T.put(top .. "/" .. d .. "/" .. f, "echo\n") end
end

local function time(text)
  local call = assert(raymond.parse_tags(text))
  local result = assert(raymond.parse_tags("<result>x</result>"))
  local rec = { id = "r", workflow = top .. "/a", fork_counters = {}, agents = {} }
  local agent = { id = "main", state = "1_START.sh", stack = {}, cwd = top, vars = {}, data = {} }
  local t0 = raymond.clock()
  for _ = 1, N do
    assert(transition.apply(rec, agent, assert(transition.decide(call, top .. "/a")), { top }))
    assert(transition.apply(rec, agent, assert(transition.decide(result, top .. "/b")), { top }))
  end
  return (raymond.clock() - t0) / N
end

local plain = time('<call return="R">1_START</call>')
local xwf = time('<call-workflow return="R">../b</call-workflow>')
print(string.format("XWF %.3f %.3f", plain * 1e6, xwf * 1e6))
os.execute("rm -rf '" .. top .. "'")
