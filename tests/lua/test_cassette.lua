-- raymond.cassette: the recording of a run's model exchanges (--record)
-- and their replay under a test case.

local T = require("testing")
local raymond = require("raymond")
local cassette = require("raymond.cassette")
local trace = require("raymond.trace")
local cjson = raymond.cjson

-- A workflow folder with states START.md and B.md, and a run record as
-- the engine would hand it to attach().
local function setup(extra_env)
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/wf"))
  T.put(dir .. "/wf/START.md", "start {{input}}\n")
  T.put(dir .. "/wf/B.md", "bee\n")
  T.put(dir .. "/wf/notes.txt", "not a state\n")
  local run = { rec = { launch = { record = "rec.cassette", budget = 2, claude = "/opt/claude", hooks = { "/x.lua" } },
                        workflow = dir .. "/wf", entry = "START.md" } }
  local opts = { cwd = dir, workflow = "wf", input = "go" }
  local scope = require("raymond.scope").dir(dir .. "/wf")
  return dir, run, opts, scope
end

local function lines_of(path)
  local out = {}
  for l in T.get(path):gmatch("[^\n]+") do out[#out + 1] = cjson.decode(l) end
  return out
end

local function turn_job(agent, state, prompt, purpose, session, env)
  return { argv = { "claude", "-p", "--model", "haiku", "--session-id", session.id, "--" }, env = env,
           turn = { agent = { id = agent, cwd = "/" }, state = state, purpose = purpose or "state", prompt = prompt,
                    session = session } }
end

-- What the writer taped of a turn that printed the CLI's lines.
local function stream(session, text, cost)
  return { lines = {
    cjson.encode({ type = "system", subtype = "init", session_id = session }),
    cjson.encode({ type = "assistant", session_id = session,
                   message = { content = { { type = "text", text = text } } } }),
    cjson.encode({ type = "result", subtype = "success", is_error = false, result = text, session_id = session,
                   total_cost_usd = cost }),
  } }
end

T.test("secret names: the words, ANTHROPIC_ and the bridge token, any case", function()
  for _, n in ipairs({ "MY_API_KEY", "github_token", "Db_Password", "PASSWD", "AWS_SECRET_ACCESS_KEY",
                       "GOOGLE_CREDENTIALS", "BASIC_AUTH", "ANTHROPIC_BASE_URL", "RAYMOND_BRIDGE_TOKEN" }) do
    T.eq(cassette.secret_name(n), true, n)
  end
  for _, n in ipairs({ "HOME", "PATH", "RAYMOND_INPUT", "LANG", "MONKEY_" .. "X" }) do
    T.eq(cassette.secret_name(n), n == "MONKEY_X", n)
  end
end)

T.test("redaction: values of 8 characters and more, as written and JSON-escaped, longest first", function()
  local s = cassette.secrets({ A_TOKEN = "short", B_KEY = "abcdefgh", C_SECRET = "abcdefgh-longer",
                               D_AUTH = 'qu"ote/slash\\x', HOME = "/home/somebody" })
  T.eq(#s, 3)
  T.eq(s[1].name, "C_SECRET")
  T.eq(cassette.redact("x abcdefgh-longer y abcdefgh z short", s),
       "x [redacted C_SECRET] y [redacted B_KEY] z short")
  local line = cjson.encode({ text = 'it is qu"ote/slash\\x' })
  T.eq(line:find("qu", 1, true) ~= nil, true)
  T.eq(cassette.redact(line, s):find("qu", 1, true), nil, "the escaped form is replaced too")
  T.has(cassette.redact(line, s), "[redacted D_AUTH]")
end)

T.test("the writer: header, one line per exchange with visit and attempt, steps after commit, the end", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  T.eq(run.rec.launch.record, dir .. "/rec.cassette", "the path is kept absolute for a resume")
  local s1 = { mode = "fresh", id = "11111111-1111-1111-1111-111111111111" }
  w:exchange(turn_job("main", "START.md", "start go\n", "state", s1), { exit = 1, stderr_tail = "overloaded\n" },
    stream(s1.id, "busy", 0.01))
  w:exchange(turn_job("main", "START.md", "start go\n", "state", s1), { exit = 0 }, stream(s1.id, "<goto>B</goto>", 0.5))
  w:exchange(turn_job("main", "START.md", "judge", "evaluate", { mode = "fresh", id = "e" }), { exit = 0 },
    stream("e", "yes", 0.001))
  w:exchange(turn_job("main", "START.md", "x", "state", s1), { killed = true }, { lines = {} })
  w:transition({ id = "main" }, "START.md", { tag = "goto" }, "B.md")
  local before = lines_of(dir .. "/rec.cassette")
  T.eq(#before, 4, "a step waits for the save")
  w:commit()
  w:exchange(turn_job("main", "B.md", "bee\n", "state", { mode = "resume", id = s1.id }), { exit = 0 },
    stream(s1.id, "<result>ok</result>", 0.25))
  w:transition({ id = "main" }, "B.md", { tag = "result" }, nil)
  w:commit()
  run.rec.status, run.rec.result, run.rec.cost = "completed", "ok", 0.761
  w:finish(run, 0)
  local l = lines_of(dir .. "/rec.cassette")
  T.eq(#l, 8)
  T.eq(l[1].cassette, 1)
  T.eq(l[1].raymond, raymond.version)
  T.eq(l[1].workflow, "wf")
  T.eq(l[1].name, "wf")
  T.eq(l[1].start, "START.md")
  T.eq(l[1].input, "go")
  T.same(l[1].options, { budget = 2 }, "options without this machine's paths")
  T.eq(l[1].states["START.md"], raymond.sha256("start {{input}}\n"))
  T.eq(l[1].states["notes.txt"], nil)
  T.eq(l[2].ev, "turn")
  T.same({ l[2].agent, l[2].state, l[2].visit, l[2].attempt, l[2].purpose, l[2].exit, l[2].stderr },
         { "main", "START.md", 1, 1, "state", 1, "overloaded\n" })
  T.same({ l[3].visit, l[3].attempt, l[3].cost, l[3].model }, { 1, 2, 0.5, "haiku" })
  T.same(l[3].session, { mode = "fresh", id = s1.id })
  T.eq(#l[3].lines, 3)
  T.eq(l[3].argv, nil, "argv is not recorded")
  T.same({ l[4].purpose, l[4].attempt, l[4].prompt }, { "evaluate", 1, "judge" })
  T.same({ l[5].ev, l[5].state, l[5].to, l[5].visit }, { "step", "START.md", "B.md", 1 })
  T.same({ l[6].state, l[6].visit, l[6].attempt }, { "B.md", 1, 1 })
  T.same({ l[8].ev, l[8].status, l[8].result, l[8].exit }, { "end", "completed", "ok", 0 })
  T.same(l[8].paths, { main = { "START.md", "B.md" } })
end)

T.test("a resume appends and counts visits and attempts from the file", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  local s = { mode = "fresh", id = "s" }
  w:exchange(turn_job("main", "START.md", "p", "state", s), { exit = 0 }, stream("s", "<goto>B</goto>", 0))
  w:transition({ id = "main" }, "START.md", { tag = "goto" }, "B.md")
  w:commit()
  w:exchange(turn_job("main", "B.md", "p", "state", s), { exit = 0 }, stream("s", "<goto>START</goto>", 0))
  -- Killed here: the transition from B.md was never saved.
  local w2 = assert(cassette.attach(run, { cwd = dir, resume = "id" }, scope))
  w2:exchange(turn_job("main", "B.md", "p", "state", s), { exit = 0 }, stream("s", "<goto>START</goto>", 0))
  w2:transition({ id = "main" }, "B.md", { tag = "goto" }, "START.md")
  w2:commit()
  w2:exchange(turn_job("main", "START.md", "p", "state", s), { exit = 0 }, stream("s", "<result>x</result>", 0))
  local c = assert(cassette.read(dir .. "/rec.cassette"))
  T.eq(c.header.input, "go", "one header")
  T.eq(#c.exchanges, 4)
  T.same({ c.exchanges[3].state, c.exchanges[3].visit, c.exchanges[3].attempt }, { "B.md", 1, 2 })
  T.same({ c.exchanges[4].state, c.exchanges[4].visit, c.exchanges[4].attempt }, { "START.md", 2, 1 })
end)

T.test("secrets in the environment never reach the file", function()
  local dir, run, opts, scope = setup()
  local secret, token = "sk-very-secret-0123456789", "bridge-token-abcdef"
  local saved = raymond.environ
  raymond.environ = function() return { MY_API_KEY = secret, HOME = "/root" } end
  local ok, err = pcall(function()
    opts.input = "use " .. secret
    local w = assert(cassette.attach(run, opts, scope))
    local s = { mode = "fresh", id = "s" }
    w:exchange(turn_job("main", "START.md", "the key is " .. secret, "state", s, { RAYMOND_BRIDGE_TOKEN = token }),
      { exit = 1, stderr_tail = "bad key " .. secret .. " " .. token }, stream("s", "I saw " .. secret .. token, 0))
    run.rec.result = secret
    w:finish(run, 1)
  end)
  raymond.environ = saved
  assert(ok, err)
  local text = T.get(dir .. "/rec.cassette")
  T.eq(text:find(secret, 1, true), nil)
  T.eq(text:find(token, 1, true), nil)
  T.has(text, "the key is [redacted MY_API_KEY]")
  T.has(text, "[redacted RAYMOND_BRIDGE_TOKEN]")
  T.has(text, "use [redacted MY_API_KEY]")
end)

T.test("reading: a torn last line is skipped; bad files are errors naming FILE:LINE", function()
  local dir = T.tmpdir()
  local p = dir .. "/c.cassette"
  local head = '{"cassette":1,"raymond":"0","workflow":"wf"}\n'
  local turn = '{"ev":"turn","agent":"main","state":"START.md","visit":1,"attempt":1,"purpose":"state","lines":[]}\n'
  T.put(p, head .. turn .. '{"ev":"turn","agent":"ma')
  local c = assert(cassette.read(p))
  T.eq(#c.exchanges, 1)
  T.eq(c.exchanges[1].line, 2)
  T.put(p, "hello\n")
  local _, err = cassette.read(p)
  T.eq(err, p .. ":1: not a raymond cassette: the first line is not a cassette header")
  T.put(p, '{"some":"json"}\n')
  _, err = cassette.read(p)
  T.has(err, p .. ":1: not a raymond cassette")
  T.put(p, "")
  _, err = cassette.read(p)
  T.has(err, p .. ":1: empty")
  T.put(p, '{"cassette":2,"raymond":"9.9"}\n')
  _, err = cassette.read(p)
  T.has(err, p .. ":1: cassette format 2 is newer than this raymond reads (1)")
  T.put(p, head .. "garbage\n" .. turn)
  _, err = cassette.read(p)
  T.has(err, p .. ":2: not a JSON object")
  T.put(p, head .. turn .. turn:gsub('"visit":1', '"visit":0'))
  _, err = cassette.read(p)
  T.eq(err, p .. ":3: turn field 'visit' is not a whole number from 1")
  T.put(p, head .. turn:gsub('"ev":"turn"', '"ev":"oops"'))
  _, err = cassette.read(p)
  T.has(err, p .. ":2: unknown line kind \"oops\"")
  T.put(p, head .. turn:gsub('"purpose":"state"', '"purpose":"chat"'))
  _, err = cassette.read(p)
  T.has(err, p .. ":2: turn field 'purpose'")
end)

T.test("case: the compiled case, the recorded outcome, a state the workflow lacks", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  local s = { mode = "fresh", id = "s" }
  w:exchange(turn_job("main", "START.md", "p", "state", s), { exit = 0 }, stream("s", "<goto>B</goto>", 0))
  w:transition({ id = "main" }, "START.md", { tag = "goto" }, "B.md")
  w:commit()
  local case, outcome = assert(cassette.case(dir .. "/rec.cassette", dir .. "/wf"))
  T.same(case, { name = "rec", workflow = dir .. "/wf", start = "START.md", input = "go", options = { budget = 2 },
                 replay = dir .. "/rec.cassette" })
  T.eq(outcome.ended, false, "killed before its end line")
  T.same(outcome.paths, { main = { "START.md", "B.md" } })
  T.same(outcome.changed, {})
  T.put(dir .. "/wf/START.md", "changed\n")
  _, outcome = cassette.case(dir .. "/rec.cassette", dir .. "/wf")
  T.same(outcome.changed, { "START.md" })
  w:exchange(turn_job("main", "B.md", "p", "state", s), { exit = 0 }, stream("s", "<result>ok</result>", 0))
  os.remove(dir .. "/wf/B.md")
  local _, err = cassette.case(dir .. "/rec.cassette", dir .. "/wf")
  T.eq(err, dir .. "/rec.cassette:4: the recording has a turn of state B.md, which the workflow " .. dir
    .. "/wf does not have")
end)

T.test("paths and compare: the first differing state per agent, then the result", function()
  local p = cassette.paths({
    { ev = "start", agent = "main", state = "A" },
    { ev = "step", agent = "main", state = "A", to = "B" },
    { ev = "step", agent = "main_w1", state = "W", to = "" },
    { ev = "step", agent = "main", state = "B", to = "C" },
  })
  T.same(p, { main = { "A", "B", "C" }, main_w1 = { "W" } })
  local rec = { paths = { main = { "REVIEW.md", "COMMIT.md" }, main_w1 = { "W" } }, result = "ok" }
  T.same(cassette.compare(rec, { main = { "REVIEW.md", "COMMIT.md" }, main_w1 = { "W" } }, "ok"), {})
  T.same(cassette.compare(rec, { main = { "REVIEW.md", "IMPLEMENT.md" } }, "no"), {
    "main: recorded REVIEW.md -> COMMIT.md, now REVIEW.md -> IMPLEMENT.md",
    "main_w1: recorded W, now it never ran",
    'result: recorded "ok", now "no"',
  })
  T.same(cassette.compare(rec, { main = { "REVIEW.md" }, main_w1 = { "W" }, main_w2 = { "X" } }, "ok"), {
    "main: recorded REVIEW.md -> COMMIT.md, now REVIEW.md -> (end)",
    "main_w2: not in the recording, now X",
  })
  T.same(cassette.compare({ paths = { main = { "A" } } }, { main = { "B" } }, cjson.null),
    { "main: recorded starting at A, now at B" })
end)

-- A stand-in for raymond.model as the replayer uses it.
local function model_at(dir)
  return { trace = trace.open(dir .. "/trace.jsonl"), attempts = {} }
end

T.test("replay: lines verbatim but the session id, matched by visit and attempt; divergence is traced", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  local old = { mode = "fresh", id = "aaaaaaaa-0000-0000-0000-000000000001" }
  w:exchange(turn_job("main", "START.md", "line one\nline two\n", "state", old), { exit = 1, stderr_tail = "crash\n" },
    { lines = { cjson.encode({ type = "system", subtype = "init", session_id = old.id }) } })
  w:exchange(turn_job("main", "START.md", "line one\nline two\n", "state", old), { exit = 0 },
    stream(old.id, "<goto>B</goto>", 0.5))
  local r = assert(cassette.replayer(dir .. "/rec.cassette"))
  local m = model_at(dir)
  local got = {}
  local job = turn_job("main", "START.md", "line one\nline two\n", "state", { mode = "fresh", id = "new-id" })
  job.lines = function(l) got[#got + 1] = l end
  local res = r:turn(m, nil, job)
  T.same({ res.exit, res.stderr_tail, #got }, { 1, "crash\n", 1 }, "attempt 1 as recorded")
  T.has(got[1], '"session_id":"new-id"')
  got = {}
  job.turn.prompt = "line one\nline 2\n"
  res = r:turn(m, nil, job)
  T.eq(res.exit, 0)
  T.eq(#got, 3)
  T.eq(got[2]:find(old.id, 1, true), nil)
  T.has(got[3], '"total_cost_usd":0.5')
  local tr = trace.read(dir .. "/trace.jsonl")
  T.eq(#tr, 1)
  T.same({ tr[1].ev, tr[1].agent, tr[1].state, tr[1].visit, tr[1].what },
         { "diverge", "main", "START.md", 1, "prompt changed" })
  T.same(tr[1].diff, { line = 2, recorded = "line two", now = "line 2" })
  got = {}
  local other = turn_job("main", "B.md", "bee\n", "state", { mode = "resume", id = "new-id" })
  other.lines = function(l) got[#got + 1] = l end
  res = r:turn(m, nil, other)
  T.eq(res.exit, 1)
  local msg = "the recording has no turn for [main] B.md (visit 1): the workflow now goes where the recording did not"
  T.has(res.stderr_tail, msg)
  local outcome = require("raymond.claude").outcome(res, (function()
    local rd = require("raymond.claude").reader(nil, function() end)
    for _, l in ipairs(got) do rd.line(l) end
    return rd
  end)())
  T.eq(outcome.kind, "fatal", "not retried: every attempt would miss the same way")
  T.eq(outcome.msg, msg)
  tr = trace.read(dir .. "/trace.jsonl")
  T.same({ tr[2].what, tr[2].state, tr[2].message }, { "no recorded turn", "B.md", msg })
end)

T.test("replay of a bad cassette is an error naming FILE:LINE", function()
  local dir = T.tmpdir()
  T.put(dir .. "/c", '{"cassette":1}\n{"ev":"turn"}\n')
  local r, err = cassette.replayer(dir .. "/c")
  T.eq(r, nil)
  T.eq(err, dir .. "/c:2: a turn without agent and state")
end)

T.test("a turn's tape keeps at most MAX_TURN_BYTES, marks the exchange cut, and still feeds the reader", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  local saved = cassette.MAX_TURN_BYTES
  cassette.MAX_TURN_BYTES = 10
  local fed = {}
  local feed, tape = w:tape(function(l) fed[#fed + 1] = l end)
  feed("12345")
  feed("67890")
  feed("x")
  feed("y")
  cassette.MAX_TURN_BYTES = saved
  T.same(fed, { "12345", "67890", "x", "y" })
  T.same(tape.lines, { "12345", "67890" })
  w:exchange(turn_job("main", "START.md", "p", "state", { mode = "fresh", id = "s" }), { exit = 0 }, tape)
  local c = assert(cassette.read(dir .. "/rec.cassette"))
  T.eq(c.exchanges[1].cut, true)
  local r = assert(cassette.replayer(dir .. "/rec.cassette"))
  local m = model_at(dir)
  local job = turn_job("main", "START.md", "p", "state", { mode = "fresh", id = "s" })
  r:turn(m, nil, job)
  T.eq(trace.read(dir .. "/trace.jsonl")[1].what, "recording cut")
end)

T.test("answers given on resume are recorded, and the case gives them back in order", function()
  local dir, run, opts, scope = setup()
  assert(cassette.attach(run, opts, scope))
  assert(cassette.attach(run, { cwd = dir, resume = "id", input = "yes" }, scope))
  assert(cassette.attach(run, { cwd = dir, resume = "id" }, scope))
  assert(cassette.attach(run, { cwd = dir, resume = "id", input = "ship it" }, scope))
  local case = assert(cassette.case(dir .. "/rec.cassette", dir .. "/wf"))
  T.same(case.answers, { "yes", "ship it" })
end)

T.test("a cassette that cannot be written is given up with a warning; the run goes on", function()
  local dir, run, opts, scope = setup()
  local w = assert(cassette.attach(run, opts, scope))
  os.remove(dir .. "/rec.cassette")
  assert(raymond.mkdir_p(dir .. "/rec.cassette"))
  local s = { mode = "fresh", id = "s" }
  w:exchange(turn_job("main", "START.md", "p", "state", s), { exit = 0 }, stream("s", "<goto>B</goto>", 0))
  T.has(w.broken, "rec.cassette")
  w:transition({ id = "main" }, "START.md", { tag = "goto" }, "B.md")
  w:commit()
  w:finish({ rec = { status = "completed" } }, 0)
  T.eq(raymond.stat(dir .. "/rec.cassette"), "dir")
end)
