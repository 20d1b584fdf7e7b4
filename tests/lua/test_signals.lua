-- A signal trips every hook call's limit at once (src/lua_limit.c,
-- src/lua_sched.c): a hook spinning in Lua or in a pattern function stops
-- within moments of a SIGINT or SIGTERM, not when its budget runs out.
-- A child of this process sends each signal once the test has made a
-- flag file, just before it starts spinning; the child ignores the SIGTERM
-- that the stop sends to every child.
local T = require("testing")
local raymond = require("raymond")

local function spin() while true do end end
local function spin_in_find() return string.find(string.rep("a", 30000), ".-.-.-.-.-b") end

local sleeper_ok
raymond.go(function() sleeper_ok = { raymond.sleep(30) } end)
local dir = T.tmpdir()
raymond.go(function()
  raymond.spawn({ argv = { "sh", "-c", [[
    trap '' TERM
    : >"$1/ready"
    until [ -e "$1/int" ]; do sleep 0.01; done; kill -INT $PPID
    until [ -e "$1/term" ]; do sleep 0.01; done; kill -TERM $PPID
  ]], "sh", dir } })
end)
-- A timer may fire before the loop first launches anything: wait until
-- the child runs.
for _ = 1, 1000 do
  if raymond.stat(dir .. "/ready") then break end
  raymond.sleep(0.01)
end

local function flag(name)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:close()
end

-- The hook makes the flag itself, so the signal comes while it runs.
local function limited(fn, name)
  local t0 = raymond.clock()
  local ok, msg, why = raymond.limited_call(function()
    flag(name)
    return fn()
  end, nil, 0, 0)
  return ok, msg, why, raymond.clock() - t0
end

T.test("SIGINT interrupts a hook spinning in Lua", function()
  local ok, msg, why, took = limited(spin, "int")
  T.eq(ok, false, "ok")
  T.eq(why, "interrupt", "why")
  T.has(msg, "hook interrupted by SIGINT")
  assert(took < 2, "took " .. took .. " s")
  T.eq(raymond.stopping(), 2, "the run is stopping, interrupted by SIGINT")
end)

T.test("SIGTERM interrupts a hook spinning in string.find", function()
  local ok, msg, why, took = limited(spin_in_find, "term")
  T.eq(ok, false, "ok")
  T.eq(why, "interrupt", "why")
  T.has(msg, "hook interrupted by SIGTERM")
  assert(took < 2, "took " .. took .. " s")
end)

T.test("a hook call begun after the signals runs normally", function()
  local ok, v = raymond.limited_call(function(x) return x * 2 end, 21, 1000000, 10)
  T.eq(ok, true, "ok")
  T.eq(v, 42)
end)

T.test("engine code goes on under no limit", function()
  T.eq(string.find("abc", "b"), 2)
end)

raymond.go(function()
  -- Runs after the loop has woken the sleeper; without the wake-up, when
  -- its 30 s timer fires.
  raymond.spawn({ argv = { "true" } })
  T.test("the stop woke the sleeper with false", function()
    T.eq(sleeper_ok and sleeper_ok[1], false)
  end)
  raymond.rmtree(dir)
end)
