-- raymond.spawn's grace= (src/lua_sched.c, src/proc.c): the time between
-- the SIGTERM of a stop or an inactivity timeout and the SIGKILL.  A
-- command whose TERM handler needs 1.5 s to finish is killed half way by
-- the default second, and ends by its own exit with grace = 4.
local T = require("testing")
local raymond = require("raymond")

-- The shell traps TERM, which the whole group gets; its sleep dies, and
-- the trap then takes 1.5 s before it prints and exits 4.
local slow_stop = { "sh", "-c", "trap 'sleep 1.5; echo stopped; exit 4' TERM; echo up; sleep 30 & wait" }

local default = raymond.spawn({ argv = slow_stop, timeout = 0.3, capture = true })
T.test("without grace, SIGKILL comes 1 s after the SIGTERM of a timeout", function()
  T.eq(default.timed_out, true)
  T.eq(default.signal, 9)
  T.eq(default.stdout, "up\n")
end)

local t0 = raymond.now()
local graced = raymond.spawn({ argv = slow_stop, timeout = 0.3, grace = 4, capture = true })
T.test("with grace = 4 the TERM handler finishes and its exit status is the result", function()
  T.eq(graced.timed_out, true)
  T.eq(graced.signal, nil)
  T.eq(graced.exit, 4)
  T.eq(graced.stdout, "up\nstopped\n")
  T.eq(raymond.now() - t0 < 4, true, "ended by the handler, not by a SIGKILL at the end of the grace")
end)
