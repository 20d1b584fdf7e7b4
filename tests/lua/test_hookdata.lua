-- Hook data that was saved always loads: every shape a hook may store in
-- run.data or agent.data comes back from the state file as it was, and a
-- table JSON cannot hold faithfully is refused when it is saved, with the
-- path to it, rather than written in a form that would load as something
-- else (src/json.h, lua/raymond/runstate.lua).

local T = require("testing")
local raymond = require("raymond")
local runstate = require("raymond.runstate")

local function run_with(data)
  local run = runstate.new("r1", "/w", "START.sh", { cwd = "/" })
  run.agents[1] = { id = "main", state = "START.sh", cwd = "/", stack = {}, vars = {}, data = {} }
  run.data = data
  return run
end

-- Save `data` as run.data through the real store, load it back, compare.
local function round_trip(data, what)
  local dir = T.tmpdir()
  local path = dir .. "/run.json"
  local store = runstate.store(path)
  local ok, err = store:save(run_with(data), true)
  T.eq(err, nil, what .. ": save message")
  T.eq(ok, true, what .. ": saved")
  local back, lerr = runstate.load(path)
  T.eq(lerr, nil, what .. ": load message")
  T.same(back.data, data, what)
  raymond.rmtree(dir)
end

-- A table of `levels` levels of tables, counting the outermost.
local function nest(levels)
  local top = {}
  local t = top
  for _ = 2, levels do
    t.a = {}
    t = t.a
  end
  t.leaf = true
  return top
end

T.test("every shape JSON holds round-trips through a save and a load", function()
  round_trip({}, "empty")
  round_trip({ s = "text", i = 42, neg = -7, f = 0.1, big = 9007199254740992, small = -9007199254740992, t = true, no = false },
    "scalars")
  round_trip({ list = { 1, "two", 3.5, false, { x = 1 }, { 1, 2 } } }, "a list of anything")
  round_trip({ map = { ["1x"] = 1, ["01"] = 2, ["-0"] = 3, [""] = 4, ["a b"] = 5, ["é"] = 6 } },
    "string keys that look like numbers but are not their decimal form")
  round_trip({ nested = { { { { "deep" } } } } }, "lists of lists")
  round_trip({ empty_list = {}, empty_map = {} }, "empty tables")
  round_trip({ nul = "a\0b", ctl = "\1\27[31m" }, "strings with any bytes")
end)

T.test("data nested as deep as a save allows loads again", function()
  -- The record is one level, run.data a second, so data may nest the rest.
  local data = nest(raymond.JSON_MAX_DEPTH - 1)
  round_trip(data, "deepest data")
  local _, err = runstate.encode(run_with(nest(raymond.JSON_MAX_DEPTH)))
  T.has(err, "data.a.a.a", "one level more is refused at save, with its path")
  T.has(err, "is nested too deeply", "why")
end)

-- The message runstate.encode gives for run.data = data.
local function refused(data)
  local text, err = runstate.encode(run_with(data))
  T.eq(text, nil, "encoded")
  return err
end

T.test("tables JSON cannot hold faithfully are refused at save, naming where", function()
  T.has(refused({ a = { b = { 1, nil, 3 } } }),
    "data.a.b is a list with a hole: [2] is nil but [3] is not, which JSON cannot hold", "sparse list")
  T.has(refused({ a = { [2] = "x", [3] = "y" } }),
    "data.a is a list whose first key is 2; JSON lists start at 1", "list not from 1")
  T.has(refused({ a = { [0] = "x", "y" } }),
    "data.a is a list whose first key is 0; JSON lists start at 1", "key 0")
  T.has(refused({ a = { [1] = "n", ["1"] = "s" } }),
    'data.a has both 1 and "1" as keys, which JSON cannot tell apart', "1 and \"1\"")
  T.has(refused({ a = { "x", name = "y" } }),
    "data.a mixes list entries (whole-number keys) with named keys, which JSON cannot hold", "mixed")
  T.has(refused({ a = { [1.5] = "x" } }),
    "data.a has a key that is neither a string nor a whole number", "float key")
  T.has(refused({ a = { [true] = "x" } }),
    "data.a has a key that is neither a string nor a whole number", "boolean key")
  T.has(refused({ a = { n = 9007199254740993 } }),
    "data.a.n is 9007199254740993, a whole number beyond 2^53 that cannot be read back exactly", "2^53 + 1")
  T.has(refused({ list = { { ok = 1 }, { [3] = 1 } } }),
    "data.list[2] is a list whose first key is 3", "path through a list")
end)

T.test("a refused save leaves the saved state as it was", function()
  local dir = T.tmpdir()
  local path = dir .. "/run.json"
  local store = runstate.store(path)
  assert(store:save(run_with({ kept = 1 })))
  local ok, err = store:save(run_with({ bad = { 1, nil, 3 } }))
  T.eq(ok, nil, "saved")
  T.has(err, "cannot encode the run state: data.bad is a list with a hole", "message")
  T.same(assert(runstate.load(path)).data, { kept = 1 }, "what loads")
  raymond.rmtree(dir)
end)
