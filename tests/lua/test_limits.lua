-- Limits of hook calls reaching into C (src/lua_limit.c, src/lua_strlib.c),
-- the C functions of the scheduler under refused allocations and odd
-- arguments (src/lua_sched.c), and what a stop does to waiting coroutines.
-- The stop comes last: after it the run starts nothing.
local T = require("testing")
local raymond = require("raymond")

-- Backtracks for minutes in Lua's own matcher.
local HUGE = string.rep("a", 30000)
local SLOW = ".-.-.-.-.-b"

local function limited(fn, instructions, seconds)
  local t0 = raymond.clock()
  local ok, value, why = raymond.limited_call(fn, nil, instructions, seconds)
  return ok, value, why, raymond.clock() - t0
end

for name, call in pairs({
  find = function() return string.find(HUGE, SLOW) end,
  match = function() return string.match(HUGE, SLOW) end,
  gmatch = function() for _ in string.gmatch(HUGE, SLOW) do end end,
  gsub = function() return string.gsub(HUGE, SLOW, "x") end,
  method = function() return HUGE:find(SLOW) end,
}) do
  T.test("string." .. name .. " stops at the hook's instruction budget", function()
    local ok, msg, why, took = limited(call, 10000000, 0)
    T.eq(ok, false, "ok")
    T.eq(why, "instruction budget", "why")
    T.has(msg, "hook exceeded its instruction budget")
    -- Unstopped, minutes; the ceiling leaves room for a loaded machine.
    assert(took < 10, "took " .. took .. " s")
  end)
end

T.test("a pattern stops at the hook's time limit", function()
  local ok, msg, why, took = limited(function() return string.find(HUGE, SLOW) end, 0, 0.2)
  T.eq(ok, false, "ok")
  T.eq(why, "time limit", "why")
  T.has(msg, "hook exceeded its time limit")
  assert(took < 10, "took " .. took .. " s")
end)

T.test("a matcher's steps count against the instruction budget", function()
  -- About 4.5 million steps of matching in one call, few instructions.
  local s = string.rep("a", 300)
  T.eq(string.find(s, ".-.-b"), nil, "unlimited")
  local ok, _, why = limited(function() return string.find(s, ".-.-b") end, 100000, 0)
  T.eq(ok, false, "ok")
  T.eq(why, "instruction budget", "why")
  ok = limited(function() return string.find(s, ".-.-b") end, 100000000, 0)
  T.eq(ok, true, "with room")
end)

T.test("a hook that swallows the trip with pcall still fails", function()
  local ok, msg, why = limited(function()
    pcall(string.find, HUGE, SLOW)
    return "carried on"
  end, 1000000, 0)
  T.eq(ok, false, "ok")
  T.eq(why, "instruction budget", "why")
  T.has(msg, "hook exceeded its instruction budget")
end)

T.test("raymond.unlimited runs its function whole inside a hook call, whose limit holds again after", function()
  local inside, spent = nil, 0
  local ok, msg, why = limited(function()
    -- Some four million instructions, forty times the call's budget.
    inside = raymond.unlimited(function(n)
      local c = 0
      for _ = 1, n do c = c + 1 end
      return c
    end, 1000000)
    for _ = 1, 100000 do spent = spent + 1 end
    return "carried on"
  end, 100000, 0)
  T.eq(inside, 1000000, "the whole count")
  T.eq(ok, false, "ok")
  T.eq(why, "instruction budget", "why")
  T.has(msg, "hook exceeded its instruction budget")
  assert(spent < 100000, "the loop after it was not stopped")
end)

T.test("string.rep refuses results over 64 MiB", function()
  local ok, err = pcall(string.rep, "x", 64 * 1024 * 1024 + 1)
  T.eq(ok, false)
  T.has(err, "resulting string too large")
  T.eq(#string.rep("ab", 3, ","), 8)
  T.eq(string.rep("", math.maxinteger), "")
end)

-- ---- refused allocations at every point ---------------------------------

-- Call fn with the n-th allocation refused, for n = 1, 2, ... until a call
-- runs to its end without reaching the refusal.  Nothing may crash, and
-- under the sanitizers nothing may leak.  The count goes on while a call
-- waits, so fn runs no Lua from callbacks (a `lines` function, a new
-- coroutine's body): a refusal there is an internal error by design.
local function each_refusal(name, fn, allocates)
  T.test(name .. " survives a refused allocation at each point", function()
    for n = 1, 2000 do
      fail_alloc(n)
      local ok, err = pcall(fn)
      local left = fail_alloc(0)
      if left > 0 then
        assert(ok, err)
        assert(n > 1 or allocates == false, "no allocation was ever refused")
        return
      end
    end
    error("still refused after 2000 allocations")
  end)
end

each_refusal("raymond.spawn", function()
  local res = raymond.spawn({ argv = { "sh", "-c", "echo one; echo two" }, env = { A = "1", B = 2 },
                              cwd = ".", tags = true, capture = true, timeout = 10 })
  assert(res.exit == 0, "exit " .. tostring(res.exit))
end)
each_refusal("raymond.sleep", function() assert(raymond.sleep(0)) end, false)
each_refusal("raymond.limited_call", function()
  local ok, v = raymond.limited_call(function(x) return x .. "!" end, "hi", 1000000, 10)
  assert(ok and v == "hi!", v)
end)
each_refusal("raymond.mark_dirty", function() raymond.mark_dirty(); raymond.mark_dirty(100) end, false)
each_refusal("raymond.set_flush", function() raymond.set_flush(function() end) end)
each_refusal("string.gsub", function()
  assert(string.gsub("hello world", "(%w+)", "<%1>") == "<hello> <world>")
  assert(string.gsub("hello", "l", { l = "L" }) == "heLLo")
  assert(string.gsub("hello", "(l)", function(c) return c:upper() end) == "heLLo")
  for _ in string.gmatch("a b c", "%a") do end
end)

-- ---- arguments that raise -----------------------------------------------

T.test("raymond.spawn with a non-string argv entry raises", function()
  local ok, err = pcall(raymond.spawn, { argv = { "true", {} } })
  T.eq(ok, false)
  T.has(err, "argv[2] is a table")
end)

T.test("raymond.spawn with an env value whose __tostring raises raises", function()
  local bad = setmetatable({}, { __tostring = function() error("no text here") end })
  local ok, err = pcall(raymond.spawn, { argv = { "true" }, env = { A = "1", B = bad } })
  T.eq(ok, false)
  T.has(err, "no text here")
  collectgarbage()
  local res = raymond.spawn({ argv = { "true" }, env = { A = "1" } })
  T.eq(res.exit, 0)
end)

T.test("raymond.go passes many arguments", function()
  local args = {}
  for i = 1, 300 do args[i] = i end
  local sum
  raymond.go(function(...)
    sum = 0
    for _, v in ipairs({ ... }) do sum = sum + v end
  end, table.unpack(args))
  T.eq(sum, 300 * 301 // 2)
end)

T.test("a coroutine that waited several times is collected when it ends", function()
  local weak = setmetatable({}, { __mode = "k" })
  local done = false
  raymond.go(function()
    weak[coroutine.running()] = true
    raymond.sleep(0)
    raymond.sleep(0)
    raymond.spawn({ argv = { "true" } })
    done = true
  end)
  for _ = 1, 500 do
    if done then break end
    raymond.sleep(0.01)
  end
  T.eq(done, true, "done")
  collectgarbage()
  collectgarbage()
  T.eq(next(weak), nil, "still referenced")
end)

-- ---- stopping ------------------------------------------------------------

T.test("a stop wakes every sleeper at once, and later sleeps do not wait", function()
  local t0 = raymond.clock()
  for i = 1, 3 do
    raymond.go(function()
      local ok = raymond.sleep(300)
      local took = raymond.clock() - t0
      -- Without the wake-up this runs when the 300 s timer fires; the
      -- ceiling leaves room for a loaded machine.
      T.test("sleeper " .. i .. " returned false long before its timer", function()
        T.eq(ok, false, "sleep")
        assert(took < 30, "woke after " .. took .. " s")
      end)
    end)
  end
  raymond.go(function()
    raymond.sleep(0.05)
    raymond.stop()
  end)
  while raymond.sleep(0.01) do end
  local t1 = raymond.clock()
  T.eq(raymond.sleep(300), false, "sleep after the stop")
  assert(raymond.clock() - t1 < 30, "a sleep after the stop waited")
  T.eq(raymond.stopping(), true, "stopping")
end)
