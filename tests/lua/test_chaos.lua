-- Tests for raymond.chaos (kill points, the checks of a resumed run) and
-- the part of raymond.trace that makes a kill at any point safe.

local T = require("testing")
local raymond = require("raymond")
local chaos = require("raymond.chaos")
local trace = require("raymond.trace")

T.test("the kill points are spread over the whole run, one in each equal part", function()
  local rand = chaos.random(42, "case")
  local ks = chaos.points(100, 10, rand)
  T.eq(#ks, 10)
  for i, k in ipairs(ks) do
    if k < (i - 1) * 10 + 1 or k > i * 10 then error(string.format("point %d is %d, outside %d..%d", i, k,
      (i - 1) * 10 + 1, i * 10)) end
  end
  -- More trials than points: every point is taken, in order.
  local all = chaos.points(5, 10, rand)
  T.eq(#all, 10)
  for i = 2, #all do
    if all[i] < all[i - 1] or all[i] < 1 or all[i] > 5 then error("not in order within 1..5: " .. table.concat(all, " ")) end
  end
  T.same(chaos.points(0, 10, rand), {}, "a run without points")
end)

T.test("a seed gives the same points, another seed or case others", function()
  local a = chaos.points(1000, 20, chaos.random(7, "appends once"))
  T.same(chaos.points(1000, 20, chaos.random(7, "appends once")), a, "same seed and case")
  local b = chaos.points(1000, 20, chaos.random(8, "appends once"))
  local c = chaos.points(1000, 20, chaos.random(7, "another case"))
  if table.concat(a, " ") == table.concat(b, " ") then error("seeds 7 and 8 gave the same points") end
  if table.concat(a, " ") == table.concat(c, " ") then error("two cases gave the same points") end
  local rand = chaos.random(0, "")
  for _ = 1, 1000 do
    local v = rand(3)
    if v < 1 or v > 3 or math.type(v) ~= "integer" then error("rand(3) gave " .. tostring(v)) end
  end
end)

local function start(state, visit) return { ev = "start", agent = "main", state = state, visit = visit } end
local function step(state, visit) return { ev = "step", agent = "main", state = state, visit = visit } end

T.test("a start after the step line of the same visit is a state executed twice", function()
  local events = { start("A", 1), start("B", 1), step("A", 1), start("A", 1), step("B", 1), start("A", 2) }
  local twice = chaos.twice(events)
  T.eq(#twice, 1)
  T.eq(twice[1].state, "A")
  T.eq(twice[1].visit, 1)
end)

T.test("starts repeated before the step line are the at-least-once window, not executed twice", function()
  local events = { start("A", 1), start("A", 1), start("A", 1), step("A", 1), start("B", 1), step("B", 1) }
  T.same(chaos.twice(events), {})
  local rerun = chaos.rerun(events)
  T.eq(#rerun, 1, "listed once")
  T.eq(rerun[1].state, "A")
end)

local function outcome(over)
  local o = { exit = 0, status = "completed", result = "ok", paths = { main = { "A", "B" } }, order = { "main" },
              files = { ["log.txt"] = "ran\n" }, events = { start("A", 1), step("A", 1), start("B", 1), step("B", 1) } }
  for k, v in pairs(over or {}) do o[k] = v end
  return o
end

T.test("a trial like the uninterrupted run passes; each difference is named", function()
  local files = { { path = "log.txt" } }
  T.same(chaos.compare(outcome(), outcome(), files), {})
  local fails = chaos.compare(outcome(), outcome({ exit = 1, status = "failed", result = "no",
    paths = { main = { "A", "A", "B" } } }), files)
  T.eq(#fails, 4)
  T.has(fails[1], "exit status: 0 uninterrupted, 1 after the kill")
  T.has(fails[2], "status: completed uninterrupted, failed after the kill")
  T.has(fails[3], 'result: "ok" uninterrupted, "no" after the kill')
  T.has(fails[4], "path of main:\n  uninterrupted:  A B\n  after the kill: A A B")
end)

T.test("a file that differs after a step ran again names the step and what to do", function()
  local files = { { path = "log.txt" } }
  local got = outcome({ files = { ["log.txt"] = "ran\nran\n" },
    events = { start("A", 1), start("A", 1), step("A", 1), start("B", 1), step("B", 1) } })
  local fails = chaos.compare(outcome(), got, files)
  T.has(fails[1], 'file log.txt: "ran\\n" uninterrupted, "ran\\nran\\n" after the kill')
  T.has(fails[2], "A ran twice: the kill came before its transition was saved")
  T.has(fails[2], "make it idempotent")
  -- Files the case does not name are not compared.
  T.same(chaos.compare(outcome(), got, {}), {})
end)

T.test("a trial that executed a saved step again fails, whatever its outcome", function()
  local got = outcome({ events = { start("A", 1), step("A", 1), start("A", 1), start("B", 1), step("B", 1) } })
  local fails = chaos.compare(outcome(), got, {})
  T.eq(#fails, 1)
  T.has(fails[1], "[main] A (visit 1) ran again after its transition was saved")
end)

T.test("a trace opened at a state's revision drops the step lines of later saves, and counts visits without them", function()
  local dir = T.tmpdir()
  local path = dir .. "/trace.jsonl"
  local tr = trace.open(path, nil)
  tr:start("main", "A")
  tr:transition({ id = "main" }, "A", { tag = "goto" }, "B")
  tr:commit(1)
  tr:start("main", "B")
  tr:transition({ id = "main" }, "B", { tag = "goto" }, "A")
  tr:commit(2) -- written, but the save of revision 2 never happened
  local again = trace.open(path, 1)
  T.eq(again:visit("main", "B"), 1, "B's step of revision 2 is gone")
  T.eq(again:visit("main", "A"), 2, "A's step of revision 1 stays")
  local steps = 0
  for _, e in ipairs(trace.read(path)) do
    if e.ev == "step" then
      steps = steps + 1
      T.eq(e.rev, 1, "rev")
    end
  end
  T.eq(steps, 1, "the file holds the saved step only")
  T.eq(#trace.read(path), 3, "and both starts")
  T.eq(trace.open(path, 5):visit("main", "A"), 2, "an older line is kept by a later revision")
  os.execute("rm -rf '" .. dir .. "'")
end)

T.test("without RAYMOND_TEST_KILL_AT a trace counts no points", function()
  local dir = T.tmpdir()
  local tr = trace.open(dir .. "/trace.jsonl", nil)
  tr:point("anything")
  T.eq(raymond.stat(dir .. "/points"), nil, "no points file")
  os.execute("rm -rf '" .. dir .. "'")
end)
