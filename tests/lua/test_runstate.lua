-- Tests for raymond.runstate: the run record, its JSON form and its file.

local T = require("testing")
local same, show, tmpdir = T.same, T.show, T.tmpdir
local raymond = require("raymond")
local runstate = require("raymond.runstate")
local cjson = raymond.cjson

-- ------------------------------------------------------------ helpers

local function copy(v)
  if type(v) ~= "table" then return v end
  local t = {}
  for k, x in pairs(v) do t[k] = copy(x) end
  return t
end

local function write(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function read(path)
  local f = assert(io.open(path, "rb"))
  local s = f:read("a")
  f:close()
  return s
end

-- A run as the engine would hold it a few steps in.
local function sample_run()
  local run = runstate.new("workflow_2025-01-02_03-04-05-000001", "/home/u/proj/flows/review",
    "1_START.sh", { timeout = 600, max_parallel = 4, debug = true, cwd = "/home/u/proj" })
  run.steps = 17
  run.agents[1] = {
    id = "main", state = "MERGE.sh", cwd = "/home/u/proj",
    session = "3f0c9b7e-1111-2222-3333-444455556666",
    input = 'He said "hi",\nthen left.\tTab, back\\slash, é, 世界, 🚀, </result> & <goto>X</goto>',
    stack = {
      { state = "RETURN.sh", session = "sess-a", cwd = "/home/u/proj/sub" },
      { state = "AFTER.md" },
    },
    vars = { item = "src/a.c", note = "line1\nline2" },
    data = { tries = 2, plan = { steps = { "lint", "test", "ship" }, meta = { ok = true, ratio = 0.5 } } },
  }
  run.agents[2] = {
    id = "main_worker1", state = "WORKER.sh", cwd = "/home/u/proj/sub",
    stack = {}, vars = {}, data = {},
  }
  run.agents[3] = {
    id = "main_worker1_analyz1", state = "ANALYZE.md", cwd = "/", input = "",
    stack = { { state = "DONE.sh", cwd = "/tmp" } }, vars = { lang = "c" }, data = { seen = {} },
  }
  run.fork_counters = { main = 3, main_worker1 = 1 }
  run.data = { review = { files = { "a.c", "b.c" }, by_file = { ["a.c"] = "ok" } }, empty = {} }
  return run
end

local function decode_ok(text, path)
  local run, err = runstate.decode(text, path or "mem.json")
  if not run then error("decode failed: " .. tostring(err), 2) end
  return run
end

-- decode must fail; returns the message.
local function decode_err(text, path)
  local run, err = runstate.decode(text, path)
  if run ~= nil then error("decode should have failed for " .. show(text:sub(1, 80)), 2) end
  T.eq(type(err), "string", "message type")
  return err
end

-- The sample's JSON, changed by fn(raw) before encoding again.
local function mutated(fn)
  local raw = cjson.decode(runstate.encode(sample_run()))
  fn(raw)
  return cjson.encode(raw)
end

-- ------------------------------------------------------------ new / encode

T.test("new: a fresh record", function()
  local launch = { timeout = 60 }
  local run = runstate.new("id1", "/wf", "START.sh", launch)
  T.eq(run.format, runstate.FORMAT, "format")
  T.eq(run.format, 1, "format number")
  T.eq(run.id, "id1", "id")
  T.eq(run.workflow, "/wf", "workflow")
  T.eq(run.entry, "START.sh", "entry")
  T.eq(run.status, "running", "status")
  T.eq(run.launch, launch, "launch")
  T.eq(run.steps, 0, "steps")
  T.eq(math.type(run.steps), "integer", "steps type")
  same(run.agents, {}, "agents")
  same(run.fork_counters, {}, "fork_counters")
  same(run.data, {}, "data")
  T.eq(run.created_at, run.updated_at, "created_at = updated_at")
  T.eq(type(run.created_at:match("^%d%d%d%d%-%d%d%-%d%dT%d%d:%d%d:%d%d%.%d%d%d%d%d%dZ$")), "string",
    "created_at " .. run.created_at .. " is ISO 8601 UTC with microseconds")
end)

T.test("iso: UTC with microseconds", function()
  T.eq(runstate.iso(0), "1970-01-01T00:00:00.000000Z", "epoch")
  T.eq(runstate.iso(86400 * 365 + 3661.25), "1971-01-01T01:01:01.250000Z", "a year and a bit")
end)

T.test("encode: sets updated_at and writes JSON", function()
  local run = runstate.new("id1", "/wf", "START.sh", {})
  run.updated_at = "stale"
  local text = runstate.encode(run)
  T.eq(type(text), "string", "text")
  T.eq(run.updated_at ~= "stale", true, "updated_at refreshed")
  T.has(text, '"updated_at":"' .. run.updated_at .. '"', "updated_at in the text")
  same(cjson.decode(text).id, "id1", "parses as JSON")
end)

-- ------------------------------------------------------------ round trip

T.test("round trip: decode(encode(run)) equals run", function()
  local run = sample_run()
  local text = runstate.encode(run)
  local back = decode_ok(text)
  same(back, run, "run")
  -- and once more, from the decoded copy
  local c = copy(back)
  local again = decode_ok(runstate.encode(c))
  same(again, c, "second round")
end)

T.test("round trip: counters come back as integers", function()
  local back = decode_ok(runstate.encode(sample_run()))
  T.eq(back.steps, 17, "steps")
  T.eq(math.type(back.steps), "integer", "steps type")
  T.eq(back.fork_counters.main, 3, "fork_counters.main")
  T.eq(math.type(back.fork_counters.main), "integer", "fork_counters.main type")
  T.eq(math.type(back.fork_counters.main_worker1), "integer", "fork_counters.main_worker1 type")
  T.eq(back.launch.max_parallel, 4, "max_parallel")
  T.eq(math.type(back.launch.max_parallel), "integer", "max_parallel type")
  T.eq(back.launch.timeout, 600, "timeout")
  -- the formatted counters read as integers: no "3.0"
  T.eq(string.format("%s", back.fork_counters.main), "3", "counter as text")
end)

T.test("round trip: strings keep every byte", function()
  local run = sample_run()
  local weird = "quote \" apostrophe ' backslash \\ slash / nl \n cr \r tab \t ctrl \1\27 nul \0 end é世界🚀"
  run.agents[1].input = weird
  run.agents[1].vars.weird = weird
  local back = decode_ok(runstate.encode(run))
  T.eq(back.agents[1].input, weird, "input")
  T.eq(back.agents[1].vars.weird, weird, "var")
  T.eq(back.agents[3].input, "", "empty input")
end)

T.test("round trip: an empty stack is written as {} and read as a list", function()
  local run = runstate.new("id", "/wf", "A.sh", { max_parallel = 2 })
  run.agents[1] = { id = "main", state = "A.sh", cwd = "/", stack = {}, vars = {}, data = {} }
  local text = runstate.encode(run)
  T.has(text, '"stack":{}', "encoded form")
  local back = decode_ok(text)
  local stack = back.agents[1].stack
  T.eq(type(stack), "table", "stack type")
  T.eq(#stack, 0, "stack length")
  T.eq(next(stack), nil, "stack is empty")
  -- and it works as a list afterwards
  table.insert(stack, { state = "R.sh" })
  same(stack, { { state = "R.sh" } }, "pushed")
end)

T.test("decode: [] and {} and a missing field all give empty lists", function()
  local base = '{"format":1,"id":"x","workflow":"/wf","status":"running","launch":{},"steps":0,'
  local function agents(stack)
    return '"agents":[{"id":"main","state":"A.sh","cwd":"/"' .. stack .. '}]}'
  end
  for _, s in ipairs({ ',"stack":[]', ',"stack":{}', "" }) do
    local run = decode_ok(base .. agents(s))
    local a = run.agents[1]
    T.eq(type(a.stack), "table", "stack type for " .. s)
    T.eq(next(a.stack), nil, "stack for " .. s)
    same(a.vars, {}, "vars default")
    same(a.data, {}, "data default")
    same(run.fork_counters, {}, "fork_counters default")
    same(run.data, {}, "data default")
  end
  local run = decode_ok(base .. '"agents":{}}')
  T.eq(next(run.agents), nil, "no agents")
  run = decode_ok(base .. '"agents":[],"fork_counters":{},"data":[]}')
  same(run.fork_counters, {}, "empty fork_counters")
end)

-- Call fn(dir) with a fresh directory, removed afterwards even if fn fails.
local function in_tmpdir(fn)
  local dir = tmpdir()
  local ok, err = pcall(fn, dir)
  os.execute("rm -rf '" .. dir .. "'")
  if not ok then error(err, 0) end
end

-- The run's files: "run.json" (snapshot) and "run.journal".
local function files(dir)
  local names = raymond.listdir(dir)
  table.sort(names)
  return names
end

T.test("save and load", function()
  in_tmpdir(function(dir)
    local path = dir .. "/run.json"
    local store = runstate.store(path)
    local run = sample_run()
    T.eq(store:save(run), true, "save")
    same(files(dir), { "run.journal", "run.json" }, "the first save writes the state file")
    local back, lerr = runstate.load(path)
    T.eq(lerr, nil, "load message")
    same(back, run, "loaded")
    T.eq(math.type(back.steps), "integer", "steps type")
    T.eq(back.revision, 1, "revision")
    -- a save within the interval goes to the journal, and a load reads it
    back.steps = back.steps + 1
    back.agents[2].stack[1] = { state = "R.sh", session = "s" }
    T.eq(store:save(back), true, "save again")
    same(cjson.decode(read(path)).steps, 17, "the state file is one save behind")
    local third = assert(runstate.load(path))
    same(third, back, "reloaded from the journal")
    T.eq(third.steps, 18, "steps")
    T.eq(third.revision, 2, "revision counts saves")
    -- the final save leaves the whole state in the state file alone
    third.status = "completed"
    T.eq(store:save(third, true), true, "final save")
    same(files(dir), { "run.json" }, "only the state file is left")
    same(cjson.decode(read(path)), third, "file content")
    same(assert(runstate.load(path)), third, "loaded after the end")
  end)
end)

T.test("load takes the newer of the state file and the journal", function()
  in_tmpdir(function(dir)
    local path = dir .. "/run.json"
    local store = runstate.store(path)
    local run = sample_run()
    assert(store:save(run))
    run.steps = 30
    assert(store:save(run))
    T.eq(assert(runstate.load(path)).steps, 30, "the journal is newer")
    -- a snapshot written but the journal not yet restarted (a crash between)
    run.steps = 31
    write(path, assert(runstate.encode(run)))
    T.eq(assert(runstate.load(path)).steps, 31, "the state file is newer")
    -- a journal record that is not a state is an error naming the journal
    local j = assert(raymond.journal_open(dir .. "/run.journal"))
    assert(j:append('{"format":1}'))
    j:close()
    local none, lerr = runstate.load(path)
    T.eq(none, nil, "no run")
    T.has(lerr, dir .. "/run.journal", "names the journal")
  end)
end)

T.test("a state too big for the journal goes to the state file", function()
  in_tmpdir(function(dir)
    local path = dir .. "/run.json"
    local store = runstate.store(path)
    local run = sample_run()
    assert(store:save(run))
    run.data.big = string.rep("x", 2 * 1024 * 1024)
    T.eq(store:save(run), true, "saved")
    T.eq(#cjson.decode(read(path)).data.big, 2 * 1024 * 1024, "in the state file")
    run.data.big = nil
    run.steps = 40
    T.eq(store:save(run), true, "the next save")
    T.eq(assert(runstate.load(path)).steps, 40, "read back")
  end)
end)

T.test("load: a missing file", function()
  local dir = tmpdir()
  local run, err = runstate.load(dir .. "/nope.json")
  os.execute("rm -rf '" .. dir .. "'")
  T.eq(run, nil, "result")
  T.has(err, dir .. "/nope.json", "names the path")
end)

-- Hooks keep their own numbers in run.data and agent.data; a resume must
-- see the same values, e.g. a raymond.now() timestamp or a large id.
T.test("round trip: numbers in data keep full precision", function()
  local run = runstate.new("id", "/wf", "A.sh", {})
  run.data = { started = 1700000000.123456, big = 9007199254740991, third = 1 / 3 }
  local back = decode_ok(runstate.encode(run))
  local function exact(got, want, what)
    if got ~= want then
      error(string.format("%s: got %.17g, expected %.17g", what, got, want), 2)
    end
  end
  exact(back.data.started, 1700000000.123456, "timestamp with microseconds")
  exact(back.data.big, 9007199254740991, "2^53 - 1")
  exact(back.data.third, 1 / 3, "1/3")
end)

-- ------------------------------------------------------------ invalid input

T.test("decode: truncated JSON", function()
  local text = runstate.encode(sample_run())
  for _, n in ipairs({ 0, 1, #text // 3, #text // 2, #text - 1 }) do
    local err = decode_err(text:sub(1, n), "/x/.raymond/state/run1.json")
    T.has(err, "corrupt or truncated", "cut at " .. n)
    T.has(err, "/x/.raymond/state/run1.json", "path, cut at " .. n)
  end
  T.has(decode_err("{not json", "p.json"), "corrupt or truncated", "garbage")
end)

T.test("load: a truncated file", function()
  local dir = tmpdir()
  local path = dir .. "/run.json"
  local text = runstate.encode(sample_run())
  write(path, text:sub(1, #text // 2))
  local run, err = runstate.load(path)
  os.execute("rm -rf '" .. dir .. "'")
  T.eq(run, nil, "result")
  T.has(err, "corrupt or truncated", "message")
  T.has(err, path, "names the path")
end)

T.test("decode: valid JSON of the wrong shape", function()
  local P = "/s/run.json"
  local cases = {
    { "missing agents", function(r) r.agents = nil end, "agents should be a table" },
    { "agents a string", function(r) r.agents = "main" end, "agents should be a table, found string" },
    { "agent without state", function(r) r.agents[1].state = nil end, "agents[1].state should be a string" },
    { "agent without id", function(r) r.agents[2].id = nil end, "agents[2].id" },
    { "agent without cwd", function(r) r.agents[3].cwd = nil end, "agents[3].cwd" },
    { "agent input a number", function(r) r.agents[1].input = 5 end, "agents[1].input should be a string" },
    { "agent not a table", function(r) r.agents[2] = "main" end, "agents[2] should be a table" },
    { "frame without state", function(r) r.agents[1].stack[2].state = nil end, "agents[1].stack[2].state" },
    { "frame session a number", function(r) r.agents[1].stack[1].session = 1 end, "agents[1].stack[1].session" },
    { "stack a string", function(r) r.agents[1].stack = "x" end, "agents[1].stack should be a table" },
    { "format 2", function(r) r.format = 2 end, "format is 2" },
    { "format missing", function(r) r.format = nil end, "format is nil" },
    { "format a string", function(r) r.format = "1" end, "format is 1" },
    { "id missing", function(r) r.id = nil end, "id should be a string" },
    { "workflow missing", function(r) r.workflow = nil end, "workflow should be a string" },
    { "status a number", function(r) r.status = 1 end, "status should be a string" },
    { "launch missing", function(r) r.launch = nil end, "launch should be a table" },
    { "steps 1.5", function(r) r.steps = 1.5 end, "steps should be a whole number" },
    { "steps missing", function(r) r.steps = nil end, "steps should be a number, found nil" },
    { "steps a string", function(r) r.steps = "3" end, "steps should be a number, found string" },
    { "fork counter 1.5", function(r) r.fork_counters.main = 1.5 end, "fork_counters.main should be a whole number" },
    { "fork counter a string", function(r) r.fork_counters.main = "x" end, "fork_counters.main should be a number" },
    { "max_parallel 2.5", function(r) r.launch.max_parallel = 2.5 end, "launch.max_parallel should be a whole number" },
    { "data a string", function(r) r.data = "x" end, "data should be a table" },
    { "cost a string", function(r) r.cost = "abc" end, "cost should be a number, found string" },
    { "agent cost a string", function(r) r.agents[2].cost = "1" end, "agents[2].cost should be a number, found string" },
    { "budget a string", function(r) r.launch.budget = "x" end, "launch.budget should be a number, found string" },
    { "timeout a string", function(r) r.launch.timeout = "600" end, "launch.timeout should be a number, found string" },
    { "max_agents a string", function(r) r.launch.max_agents = "9" end, "launch.max_agents should be a number" },
    { "max_repeats a list", function(r) r.launch.max_repeats = { 3 } end, "launch.max_repeats should be a number" },
    { "model a table", function(r) r.launch.model = { a = 1 } end, "launch.model should be a string, found table" },
    { "claude a number", function(r) r.launch.claude = 7 end, "launch.claude should be a string, found number" },
    { "hooks a number", function(r) r.launch.hooks = 5 end, "launch.hooks should be a table, found number" },
    { "a hook a number", function(r) r.launch.hooks = { "/h.lua", 5 } end, "launch.hooks[2] should be a string" },
    { "error a table", function(r) r.error = { 1 } end, "error should be a string, found table" },
    { "result a number", function(r) r.result = 5 end, "result should be a string, found number" },
  }
  for _, c in ipairs(cases) do
    local err = decode_err(mutated(c[2]), P)
    T.has(err, "not a valid raymond state", c[1])
    T.has(err, P, c[1] .. ": path")
    T.has(err, c[3], c[1])
  end
end)

T.test("decode: top level not an object", function()
  T.has(decode_err('"a string"', "p"), "the top level should be a table, found string", "string")
  T.has(decode_err("42", "p"), "the top level should be a table, found number", "number")
  T.has(decode_err("[]", "p"), "not a valid raymond state", "array")
end)

T.test("decode: a whole number past 2^53 loads as a float, and saves again as itself", function()
  local text = '{"format":1,"id":"r","workflow":"/w","status":"failed","launch":{"timeout":9007199254740993600},'
    .. '"steps":1,"agents":[],"data":{"n":1e300}}'
  local run, err = runstate.decode(text, "big.json")
  T.eq(err, nil, "decoded")
  T.eq(math.type(run.launch.timeout), "float", "timeout stays a float")
  local again = assert(runstate.encode(run))
  local run2 = assert(runstate.decode(again, "again.json"))
  T.eq(run2.launch.timeout, run.launch.timeout, "timeout")
  T.eq(run2.data.n, 1e300, "data.n")
  T.has(decode_err(mutated(function(r) r.steps = 2 ^ 60 end), "p"), "steps is beyond 2^53, more than a state holds",
    "a count past 2^53")
end)

T.test("decode: a number JSON allows but a state cannot hold is refused", function()
  local text = '{"format":1,"id":"r","workflow":"/w","status":"failed","launch":{},"steps":1,'
    .. '"agents":[],"data":{"n":1e400}}'
  local run, err = runstate.decode(text, "big.json")
  T.eq(run, nil, "decoded")
  T.has(err, "not a valid raymond state", "kind")
  T.has(err, "data.n is not a finite number", "where")
end)
