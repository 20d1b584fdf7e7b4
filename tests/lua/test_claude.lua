-- raymond.claude: the stream-json reader and the outcome of a turn.
local T = require("testing")
local raymond = require("raymond")
local claude = require("raymond.claude")

local function read(lines)
  local st = claude.reader(nil)
  for _, l in ipairs(lines) do st.line(l) end
  return st
end

T.test("the result, session and cost come from the stream; tags only from the result", function()
  local st = read({
    '{"type":"system","subtype":"init","session_id":"s1"}',
    '{"type":"assistant","message":{"content":[{"type":"text","text":"<goto>NOT_THIS</goto>"}]}}',
    'not json at all',
    '{"type":"result","subtype":"success","is_error":false,"result":"<result>ok</result>","total_cost_usd":0.25}',
  })
  local out = claude.outcome({ exit = 0 }, st)
  T.eq(out.kind, "ok")
  T.eq(out.text, "<result>ok</result>")
  T.eq(out.session, "s1")
  T.eq(out.cost, 0.25)
  T.eq(st.bad_lines, 1, "bad lines counted")
end)

T.test("a usage limit: a reset time within a month is kept, others are not", function()
  local soon = math.floor(raymond.now()) + 120
  local st = read({ '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":' .. soon .. '}}',
    '{"type":"result","is_error":true,"result":"You\'ve hit your session limit"}' })
  local out = claude.outcome({ exit = 1 }, st)
  T.eq(out.kind, "limit")
  T.eq(out.reset, soon)
  st = read({ '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":1e300}}' })
  T.eq(claude.outcome({ exit = 1 }, st).reset, nil, "absurd reset")
end)

T.test("only the CLI's structured error is a usage limit, never words in a reply", function()
  local ok = '{"type":"result","subtype":"success","is_error":false,"result":"You\'ve hit your session limit '
    .. '· resets 4am (UTC) <result>x</result>"}'
  T.eq(claude.outcome({ exit = 0 }, read({ ok })).kind, "ok", "a reply saying it")
  local soon = math.floor(raymond.now()) + 120
  local event = '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":' .. soon .. '}}'
  T.eq(claude.outcome({ exit = 0 }, read({ event, ok })).kind, "ok", "a turn that succeeded after the event")
  T.eq(claude.outcome({ exit = 1 }, read({ event })).kind, "limit", "the event alone")
  T.eq(claude.outcome({ exit = 1 }, read({ '{"type":"result","subtype":"success","is_error":true,'
    .. '"api_error_status":429,"result":"You\'ve hit your weekly limit · resets Dec 1, 5pm (UTC)"}' })).kind,
    "limit", "an error result saying it")
end)

T.test("a session error comes from the CLI's errors and stderr, never from a reply", function()
  local said = "Port 8080 is already in use. No conversation found with session ID: x"
  local ok = '{"type":"result","subtype":"success","is_error":false,"result":"' .. said .. ' <result>x</result>"}'
  T.eq(claude.outcome({ exit = 0 }, read({ ok })).kind, "ok", "a reply saying both")
  T.eq(claude.outcome({ exit = 0, stderr_tail = said }, read({ ok })).kind, "ok", "a turn that succeeded")
  local text = '{"type":"assistant","message":{"content":[{"type":"text","text":"' .. said .. '"}]}}'
  T.eq(claude.outcome({ exit = 1 }, read({ text })).kind, "transient", "the model's text of a failed turn")
  T.eq(claude.outcome({ exit = 1 }, read({ '{"type":"result","subtype":"error_during_execution","is_error":true,'
    .. '"errors":["No conversation found with session ID: x"]}' })).reason, "missing", "in errors")
  T.eq(claude.outcome({ exit = 1, stderr_tail = "No conversation found with session ID: x\n" }, read({})).reason,
    "missing", "on stderr")
end)

T.test("API errors: transient ones are retried, authentication is fatal", function()
  local function kind(status, text)
    return claude.outcome({ exit = 1 }, read({ string.format(
      '{"type":"result","subtype":"success","is_error":true,"api_error_status":%s,"result":"%s"}', status, text) })).kind
  end
  T.eq(kind(529, "API Error: 529 Overloaded"), "transient", "529")
  T.eq(kind(500, "API Error: 500"), "transient", "500")
  T.eq(kind(429, "API Error: Request rejected (429)"), "transient", "429")
  T.eq(kind(401, "Invalid API key"), "fatal", "401")
  T.eq(kind("null", "API Error: Unable to connect to API (ConnectionRefused)"), "transient", "connection")
  T.eq(claude.outcome({ exit = 1, stderr_tail = "Error: Session ID x is already in use." }, read({})).reason,
    "in_use", "session in use")
end)

T.test("the argv: permissions, model, effort, session flags, budget, -- and no prompt (it goes on stdin)", function()
  local a = claude.argv({ claude = "claude", model = "haiku", effort = "low",
    session = { mode = "branch", from = "A", id = "B" }, max_budget_usd = 1.5 })
  T.eq(table.concat(a, " "), "claude -p --output-format stream-json --verbose --permission-mode acceptEdits "
    .. "--model haiku --effort low --resume A --fork-session --session-id B --max-budget-usd 1.5000 "
    .. "--disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit --")
end)

T.test("a turn that reached --max-turns is its own outcome, not a transient error to retry", function()
  for _, exit in ipairs({ 0, 1 }) do
    local st = read({
      '{"type":"system","subtype":"init","session_id":"s1"}',
      '{"type":"assistant","message":{"content":[{"type":"text","text":"still working"}]}}',
      '{"type":"result","subtype":"error_max_turns","is_error":true,"num_turns":3,"total_cost_usd":0.5}',
    })
    local out = claude.outcome({ exit = exit }, st)
    T.eq(out.kind, "max_turns", "exit " .. exit)
    T.eq(out.cost, 0.5, "its cost is counted")
  end
end)

T.test("the argv: a state's agent settings, each rule an argument, all before --", function()
  local a = claude.argv({ claude = "claude", skip_permissions = true, session = { mode = "fresh", id = "S" },
    allowed_tools = { "Read", "Bash(git log:*)" }, disallowed_tools = { "Bash(rm -rf:*)", "WebFetch" },
    permission_mode = "plan", mcp_config = '{"mcpServers":{}}', append_system_prompt = "- be brief",
    max_turns = 7 })
  T.same(a, { "claude", "-p", "--output-format", "stream-json", "--verbose", "--permission-mode", "plan",
    "--session-id", "S", "--allowedTools", "Read", "Bash(git log:*)", "--mcp-config", '{"mcpServers":{}}',
    "--append-system-prompt=- be brief", "--max-turns", "7",
    "--disallowed-tools", "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit", "Bash(rm -rf:*)", "WebFetch",
    "--" })
end)

T.test("tool calls reach on_tool, text does not", function()
  local tools = {}
  local st = claude.reader(nil, nil, function(b) tools[#tools + 1] = b.name end)
  st.line('{"type":"assistant","message":{"content":[{"type":"text","text":"hi"},'
    .. '{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/p/x.c"}}]}}')
  st.line('{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t2","name":"Bash","input":{}}]}}')
  T.eq(table.concat(tools, ","), "Read,Bash")
end)

T.test("a tool call as a short line: the tool and its main argument", function()
  T.eq(claude.tool_line({ name = "Read", input = { file_path = "/p/src/x.c" } }, "/p"), "Read src/x.c")
  T.eq(claude.tool_line({ name = "Edit", input = { file_path = "/elsewhere/x.lua" } }, "/p"), "Edit /elsewhere/x.lua")
  T.eq(claude.tool_line({ name = "Bash", input = { command = "  make test\nmake install" } }, "/p"), "Bash make test")
  T.eq(claude.tool_line({ name = "Grep", input = { pattern = "TODO" } }), "Grep TODO")
  T.eq(claude.tool_line({ name = "Mystery", input = { x = 1 } }), "Mystery")
  T.eq(claude.tool_line({ name = "Bash", input = "not a table" }), "Bash")
  T.eq(claude.tool_line({ name = 42 }), nil)
  local long = claude.tool_line({ name = "Bash", input = { command = ("é"):rep(150) } })
  T.eq(#long, #"Bash " + claude.TOOL_ARG_MAX + #"...", "cut at a character boundary")
  T.eq(utf8.len(long) ~= nil, true, "still UTF-8")
end)

T.test("a long tool argument is cut before a character it would split", function()
  local line = claude.tool_line({ name = "Bash", input = { command = "x" .. ("é"):rep(150) } })
  T.eq(#line, #"Bash " + claude.TOOL_ARG_MAX - 1 + #"...")
  T.eq(utf8.len(line) ~= nil, true, "still UTF-8")
end)
