-- raymond.process and raymond.signal (src/lua_sched.c, src/proc.c) take a
-- pid from a record anyone could have written: a number too large for a
-- pid_t is no pid at all, never one wrapped onto another process.
local T = require("testing")
local raymond = require("raymond")

-- A process of the test's own, leading a session of its own, so a signal
-- that reached it by mistake reaches nothing else.
local pipe = assert(io.popen("setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!"))
local pid = tonumber(pipe:read("l"))
pipe:close()
local deadline = raymond.clock() + 60
while not (raymond.process(pid) and raymond.process(pid).pgid == pid) and raymond.clock() < deadline do
  os.execute("sleep 0.05")
end
local start = raymond.process(pid).start

T.test("a pid past 2^32 that would wrap onto a live process is no pid", function()
  local wrapped = pid + 4294967296
  T.eq(raymond.process(wrapped), nil)
  T.eq(raymond.signal(wrapped, start, "TERM", false), nil)
  T.eq(raymond.signal(wrapped, start, "TERM", true), nil)
  local p = raymond.process(pid)
  T.eq(p ~= nil and not p.zombie, true, "the process that pid wraps onto is alive")
end)

os.execute("kill -9 " .. pid)
