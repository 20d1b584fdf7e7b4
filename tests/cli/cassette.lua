-- tests/cli/cassette.lua: what `raymond test --replay` does around a
-- child run, for the record and replay tests (t0280-t0284), run with
-- build/tests/luarun tests/lua/testing.lua tests/cli/cassette.lua.
--
--   CASSETTE=FILE [WF=PATH] SANDBOX=S  MODE=case
--       writes S/.raymond/test/case.json (raymond.cassette.case) and
--       S/.raymond/test/argv, the child's arguments, one a line, and
--       S/.raymond/test/answers, the recorded answers to asks, one a
--       line; on a bad cassette prints the error and exits 1
--   CASSETTE=FILE [WF=PATH] SANDBOX=S  MODE=compare
--       prints how the finished child run differs from the recording
--       (raymond.cassette.compare), one line each, or "same"

local raymond = require("raymond")
local cassette = require("raymond.cassette")
local trace = require("raymond.trace")
local cjson = raymond.cjson

local path, wf, sandbox, mode = os.getenv("CASSETTE"), os.getenv("WF"), os.getenv("SANDBOX"), os.getenv("MODE")
if wf == "" then wf = nil end
local case, outcome = cassette.case(path, wf)
if not case then
  io.stdout:write(outcome, "\n")
  os.exit(1)
end
local dir = sandbox .. "/.raymond/test"
if mode == "case" then
  assert(raymond.mkdir_p(dir))
  assert(raymond.write_atomic(dir .. "/case.json", cjson.encode(case)))
  local argv = { case.workflow .. "/" .. case.start, "--workflow-id", "test" }
  if case.input then argv[#argv + 1] = "--input" argv[#argv + 1] = case.input end
  table.move(cassette.args(case.options), 1, #cassette.args(case.options), #argv + 1, argv)
  assert(raymond.write_atomic(dir .. "/argv", table.concat(argv, "\n") .. "\n"))
  assert(raymond.write_atomic(dir .. "/answers", #(case.answers or {}) > 0
    and table.concat(case.answers, "\n") .. "\n" or ""))
elseif mode == "compare" then
  local state = cjson.decode(assert(raymond.read_file(sandbox .. "/.raymond/state/test.json")))
  local lines = cassette.compare(outcome, cassette.paths(trace.read(dir .. "/trace.jsonl")), state.result)
  io.stdout:write(#lines == 0 and "same\n" or table.concat(lines, "\n") .. "\n")
end
