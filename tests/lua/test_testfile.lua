-- Tests for raymond.testfile (a test file read and checked, every error
-- naming its line), raymond.expect (paths with "...", the path diff, the
-- checks of an outcome) and the parts of raymond.model a case relies on.

local T = require("testing")
local raymond = require("raymond")
local testfile = require("raymond.testfile")
local expect = require("raymond.expect")
local model = require("raymond.model")
local analyse = require("raymond.analyse")

-- A workflow folder with a markdown state, a script and a test file.
local DIR = T.tmpdir()
assert(raymond.mkdir_p(DIR .. "/wf/tests"))
T.put(DIR .. "/wf/1_START.md", "---\nallowed_transitions:\n  - { tag: goto, target: CHECK.sh }\n---\nDo {{input}}.\n")
T.put(DIR .. "/wf/CHECK.sh", "echo '<result>ok</result>'\n")

-- Load `body` as wf/tests/t.test.yaml; returns the file or nil, error.
local function load(body)
  T.put(DIR .. "/wf/tests/t.test.yaml", body)
  local tf, err = testfile.load("wf/tests/t.test.yaml", DIR)
  if tf then analyse.close(tf.workflow) end
  return tf, err
end

-- The file must be refused with exactly `want` (FILE:LINE: message).
local function refused(body, want)
  local tf, err = load(body)
  T.eq(tf, nil, "a test file with an error")
  T.eq(err, want, "the error")
end

local HEAD = "cases:\n  - name: one\n"

T.test("a good file compiles each case to what the run and the model read", function()
  local tf = assert(load(HEAD .. table.concat({
    "    input: fix it",
    "    options:",
    "      budget: 2",
    "      no_lint: true",
    "      max_parallel: 3",
    "    env: { RAYMOND_TEST_COMMAND: \"true\" }",
    "    files: { \"notes/a.txt\": \"hi\\n\" }",
    "    timeout: 5",
    "    model:",
    "      1_START:",
    "        - { reply: \"<goto>CHECK</goto>\", cost: 0.5, when: { model: haiku, index: 2 } }",
    "        - { error: overloaded, reply: [\"a\", \"b\"] }",
    "    scripts: { CHECK: { stdout: \"<result>x</result>\", exit: 3 } }",
    "    evaluate: [\"YES\", { answer: \"NO\", when: { prompt: poem } }]",
    "    expect:",
    "      path: [1_START, \"...\", CHECK]",
    "      error: budget",
    "      cost: { max: 1 }",
    "      files: { \"out.txt\": { absent: true } }",
    "      data: { n: 2 }",
  }, "\n") .. "\n"))
  local c = tf.cases[1]
  T.eq(c.name, "one", "name")
  T.eq(c.line, 2, "line")
  T.eq(c.input, "fix it", "input")
  T.same(c.args, { "--budget", "2", "--no-lint", "--max-parallel", "3" }, "args")
  T.same(c.env, { RAYMOND_TEST_COMMAND = "true" }, "env")
  T.same(c.files, { ["notes/a.txt"] = "hi\n" }, "files")
  T.eq(c.timeout, 5, "timeout")
  T.same(c.case.model["1_START.md"], {
    { reply = { "<goto>CHECK</goto>" }, cost = 0.5, when = { model = "haiku", index = 2 } },
    { errors = { "overloaded" }, reply = { "a", "b" } },
  }, "model")
  T.same(c.case.scripts, { ["CHECK.sh"] = { { stdout = "<result>x</result>", exit = 3 } } }, "scripts")
  T.same(c.case.evaluate, { { reply = { "YES" } }, { reply = { "NO" }, when = { prompt = "poem" } } }, "evaluate")
  T.same(c.expect.path, { "1_START.md", "...", "CHECK.sh" }, "path")
  -- A run's error is a long sentence: plain text is a part of it.
  T.same(c.expect.error, { contains = "budget" }, "error")
  T.same(c.expect.cost, { max = 1 }, "cost")
  T.same(c.expect.data, { n = "2" }, "data")
end)

T.test("an unknown key names its line and the nearest key", function()
  refused(HEAD .. "    inptu: x\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: a case has no key 'inptu' (did you mean input?); it takes answers, env, evaluate, "
      .. "expect, files, input, model, name, options, scripts, start, timeout")
  refused(HEAD .. "    expect: { exit: 0, reslt: ok }\n",
    "wf/tests/t.test.yaml:3: expect has no key 'reslt' (did you mean result?); it takes cost, data, error, "
      .. "exit, files, path, paths, prints, result, status, tools")
  refused("workflow: ..\ncase:\n  - name: one\n",
    "wf/tests/t.test.yaml:2: a test file has no key 'case' (did you mean cases?); it takes cases, workflow")
end)

T.test("a state the workflow does not have is an error at its line", function()
  local _, err = load(HEAD .. "    model:\n      REVIEW: \"<result>x</result>\"\n    expect: { exit: 0 }\n")
  T.has(err, "wf/tests/t.test.yaml:4: the workflow has no state REVIEW", "model")
  _, err = load(HEAD .. "    expect: { path: [1_START, COMMIT] }\n")
  T.has(err, "wf/tests/t.test.yaml:3: the workflow has no state COMMIT", "path")
  refused(HEAD .. "    scripts: { 1_START: \"<result>x</result>\" }\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: 1_START.md is a markdown state, not a script state")
end)

T.test("a value of the wrong type names its line and what it got", function()
  refused(HEAD .. "    timeout: soon\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: timeout must be a number from 0 up, not \"soon\"")
  refused(HEAD .. "    answers: yes\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: answers must be a list, not \"yes\"")
  refused(HEAD .. "    options: { budget: [1] }\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: budget must be a number from 0 up, not a list")
  refused(HEAD .. "    model: { 1_START: { error: busy } }\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: error 'busy' is not one raymond test can script; it knows overloaded, usage_limit, "
      .. "crash, auth")
  refused(HEAD .. "    expect: { status: done }\n",
    "wf/tests/t.test.yaml:3: status must be completed, failed, stopped or asking, not done")
end)

T.test("an expectation that can never be checked is refused", function()
  refused(HEAD .. "    input: x\n", "wf/tests/t.test.yaml:2: case 'one' has no expect: block, so it could never fail")
  refused(HEAD .. "    expect:\n      status: completed\n      exit: 1\n",
    "wf/tests/t.test.yaml:5: a completed run exits with 0, so exit 1 can never be seen")
  refused(HEAD .. "    expect:\n      status: failed\n      result: ok\n",
    "wf/tests/t.test.yaml:5: only a completed run has a result, and status is failed")
  refused(HEAD .. "    expect: { cost: { min: 2, max: 1 } }\n",
    "wf/tests/t.test.yaml:3: cost can never be both at least 2 and at most 1")
  refused(HEAD .. "    expect: { files: { \"../x\": ok } }\n",
    "wf/tests/t.test.yaml:3: '../x' must be a path inside the case's folder (relative, without ..)")
  refused(HEAD .. "    expect: { exit: 0 }\n  - name: one\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:4: a case named 'one' is already on line 2")
end)

T.test("a file outside a tests/ folder must name its workflow", function()
  T.put(DIR .. "/loose.test.yaml", HEAD .. "    expect: { exit: 0 }\n")
  local tf, err = testfile.load("loose.test.yaml", DIR)
  T.eq(tf, nil, "loose file")
  T.eq(err, "loose.test.yaml:1: say which workflow this file tests with workflow: PATH (or put it in the workflow's "
    .. "tests/ folder)", "error")
  T.put(DIR .. "/loose.test.yaml", "workflow: wf\n" .. HEAD .. "    expect: { exit: 0 }\n")
  tf = assert(testfile.load("loose.test.yaml", DIR))
  analyse.close(tf.workflow)
  T.eq(#tf.cases, 1, "cases")
end)

T.test("a path matches with ... standing for any run of states, none included", function()
  local m = expect.path_matches
  T.eq(m({ "A", "B" }, { "A.md", "B.sh" }), true, "exact, extensions left out")
  T.eq(m({ "A", "..." }, { "A.md" }), true, "... matches nothing")
  T.eq(m({ "A", "...", "C" }, { "A", "B", "B", "C" }), true, "... matches a run")
  T.eq(m({ "...", "C" }, { "A", "C", "B" }), false, "the path must end where it ends")
  T.eq(m({ "A", "...", "B", "...", "D" }, { "A", "X", "B", "Y", "D" }), true, "two runs")
  T.eq(m({ "A", "B" }, { "A" }), false, "too short")
  T.eq(m({ "A" }, { "A", "B" }), false, "too long")
  T.eq(m({ "..." }, {}), true, "nothing at all")
end)

T.test("a path diff shows both paths and the step where they part", function()
  T.eq(expect.path_diff("main", { "1_START.md", "REVIEW.md", "COMMIT.md" }, { "1_START.md", "REVIEW.md", "IMPLEMENT.md" }),
    "path of main:\n"
      .. "  expected: 1_START REVIEW COMMIT\n"
      .. "  actual:   1_START REVIEW IMPLEMENT\n"
      .. "                           ^ step 3", "diff")
  T.eq(expect.path_diff("main_worker2", { "WORKER" }, {}),
    "path of main_worker2:\n  expected: WORKER\n  actual:   (no state ran)\n            ^ step 1", "nothing ran")
end)

T.test("check reports each expectation an outcome misses", function()
  local got = { exit = 3, status = "stopped", error = "stopped by hooks/budget.lua:86: budget exceeded", cost = 0.25,
                result = nil, stdout = "one\ntwo\n", data = { reviews = 2, ok = true, extra = "x" },
                paths = { main = { "A.md", "B.sh" }, main_worker1 = { "W.sh" } }, order = { "main", "main_worker1" } }
  T.same(expect.check({ exit = 3, status = "stopped", error = { contains = "budget" }, cost = { max = 0.3 },
    path = { "A", "..." }, paths = { { agent = "main_worker*", path = { "W" } } }, prints = { "one", "two" },
    data = { reviews = "2", ok = "true" } }, got, DIR), {}, "all met")
  T.same(expect.check({ exit = 0, status = "completed", cost = { equals = 0.2 }, prints = { "two", "one" },
    data = { reviews = "3" }, paths = { { agent = "other_*", path = { "W" } } } }, got, DIR), {
    "exit status: expected 0, got 3",
    "status: expected completed, got stopped (stopped by hooks/budget.lua:86: budget exceeded)",
    "paths: no agent other_* ran (agents: main, main_worker1)",
    "cost: expected $0.200000, got $0.250000",
    "prints: \"one\" was not printed after the prints before it",
    "data: expected {\"reviews\":\"3\"}, got {\"reviews\":2}",
  }, "all missed")
end)

T.test("the model a turn asked for is read from the CLI's argv", function()
  T.eq(model.model_of({ "claude", "-p", "--model", "haiku", "--effort", "low" }), "haiku", "given")
  T.eq(model.model_of({ "claude", "-p" }), nil, "the CLI's default")
  T.eq(model.glob("main_worker*", "main_worker12"), true, "glob")
  T.eq(model.glob("main_*", "main"), false, "glob needs the underscore")
end)

T.test("a failure quotes text on one line", function()
  local dir = T.tmpdir()
  T.put(dir .. "/runs", "run\n")
  local got = { exit = 0, status = "completed", result = "a\nb", stdout = "", paths = {}, order = {} }
  T.same(expect.check({ result = { equals = "a\nc" }, files = { { path = "runs", want = { equals = "run\nrun\n" } } },
    prints = { "x\ty" } }, got, dir), {
    "result: expected \"a\\nc\", got \"a\\nb\"",
    "file runs: expected \"run\\nrun\\n\", got \"run\\n\"",
    "prints: \"x\\ty\" was not printed",
  }, "failures")
end)

T.test("answers: [] runs with --on-ask pause and answers nothing", function()
  local tf = assert(load(HEAD .. "    answers: []\n    expect: { status: asking }\n"))
  T.same(tf.cases[1].answers, {}, "answers")
  T.same(tf.cases[1].args, { "--on-ask", "pause" }, "args")
  tf = assert(load(HEAD .. "    expect: { exit: 0 }\n"))
  T.same(tf.cases[1].args, {}, "no answers: the run's own --on-ask")
end)

T.test("an outcome's path ends where an agent failed, not again where it asks", function()
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/.raymond/state"))
  assert(raymond.mkdir_p(dir .. "/.raymond/test"))
  T.put(dir .. "/.raymond/test/trace.jsonl", table.concat({
    '{"ev":"start","agent":"main","state":"A.sh","visit":1}',
    '{"ev":"step","agent":"main","state":"A.sh","visit":1,"to":"A.sh","tag":"ask"}',
    '{"ev":"step","agent":"main_worker1","state":"W.sh","visit":1,"to":"X.sh","tag":"goto"}',
  }, "\n") .. "\n")
  T.put(dir .. "/.raymond/state/test.json", raymond.json_encode({ status = "asking", agents = {
    { id = "main", state = "A.sh", ask = { id = "ask_1", next = "B.sh" } },
    { id = "main_worker1", state = "X.sh" } } }))
  local got = expect.outcome(dir, 2, "")
  T.same(got.paths, { main = { "A.sh" }, main_worker1 = { "W.sh", "X.sh" } }, "paths")
  T.same(got.order, { "main", "main_worker1" }, "order")
  T.eq(got.status, "asking", "status")
end)

T.test("a script's stubs are a list picked by when and visit, as turns are", function()
  local tf = assert(load(HEAD .. table.concat({
    "    scripts:",
    "      CHECK:",
    "        - \"<goto>CHECK</goto>\"",
    "        - { stdout: \"<result>{{word}}</result>\", when: { vars: { word: b } } }",
    "    expect: { exit: 0 }",
  }, "\n") .. "\n"))
  T.same(tf.cases[1].case.scripts["CHECK.sh"], { { stdout = "<goto>CHECK</goto>" },
    { stdout = "<result>{{word}}</result>", when = { vars = { word = "b" } } } }, "stubs")
  refused(HEAD .. "    scripts: { CHECK: [{ stdout: x, when: { worker: 2 } }] }\n    expect: { exit: 0 }\n",
    "wf/tests/t.test.yaml:3: when has no key 'worker'; it takes agent, index, model, prompt, vars")
end)
