-- raymond.claude: one invocation of the Claude Code CLI.
--
-- invoke(spec) runs
--
--   claude -p --output-format stream-json --verbose
--          (--permission-mode P | --dangerously-skip-permissions | --permission-mode acceptEdits)
--          [--model M] [--effort E]
--          (--session-id NEW | --resume ID | --resume FROM --fork-session --session-id NEW)
--          [--max-budget-usd R] [--settings JSON] [--tools "" --strict-mcp-config]
--          [--allowedTools RULE...] [--mcp-config JSON] [--append-system-prompt=TEXT] [--max-turns N]
--          --disallowed-tools EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit [RULE...]
--          --
--
-- with the prompt on stdin (Linux limits one argv string to 128 KiB, and
-- the CLI reads the prompt from stdin when no prompt argument follows
-- `--`), without CLAUDECODE in the environment, in a
-- process group of its own in the agent's directory, and reads its
-- stream-json output line by line as it arrives.  The outcome says what
-- happened in terms the engine acts on:
--
--   ok         result text, session id, cost
--   budget     the turn reached its --max-budget-usd (the CLI's
--              error_max_budget_usd); its cost is known
--   max_turns  the turn reached its --max-turns (error_max_turns)
--   transient  worth another attempt (API 429/5xx, connection, timeout, crash)
--   limit      a usage limit, with the time it resets
--   session    the planned session flags did not fit (crash recovery):
--              reason "in_use" (a fresh id exists) or "missing" (no such id)
--   fatal      anything else (authentication, the CLI missing, ...)
--   stopped    the run is stopping and the CLI was ended

local raymond = require("raymond")
local cjson = raymond.cjson

local M = {}

M.DISALLOWED = "EnterPlanMode,ExitPlanMode,AskUserQuestion,NotebookEdit"

-- The longest stream-json line read (bytes).  A reply or a tool result is
-- one line, so this also caps the reply text; a longer line ends the turn
-- with an error instead of growing raymond's memory without bound.
M.LINE_MAX = 8 * 1024 * 1024

-- What the CLI prints on stderr, before any stream-json, when it refuses
-- its command line: running it again cannot help.
local refusals = {
  { "cannot be used with root/sudo privileges",
    "run raymond as a user other than root, or without --dangerously-skip-permissions and a state's "
      .. "permission_mode: bypassPermissions (inside a container or sandbox, set IS_SANDBOX=1)" },
  { "error: unknown option", "the Claude Code CLI is older or newer than raymond expects; "
      .. "install a current one (npm install -g @anthropic-ai/claude-code)" },
  { "error: option '", "an option raymond gave the Claude Code CLI has a value it does not accept; check the "
      .. "model and effort (command line and frontmatter) and the CLI's version" },
  { "error: too many arguments", nil },
}

local transient_status = { [429] = true, [500] = true, [502] = true, [503] = true, [504] = true, [529] = true }

-- spec: claude, model, effort, skip_permissions, session = {mode=,
-- id=, from=}, max_budget_usd; and a state's agent settings
-- (raymond.policy): allowed_tools and disallowed_tools (lists of rules),
-- permission_mode (which replaces skip_permissions' choice), mcp_config
-- (the JSON text), append_system_prompt, max_turns; no_tools: the turn
-- gets no built-in tool and no MCP server (raymond.evaluate's).
function M.argv(spec)
  local a = { spec.claude, "-p", "--output-format", "stream-json", "--verbose" }
  local function add(...) for _, x in ipairs({ ... }) do a[#a + 1] = x end end
  if spec.permission_mode then add("--permission-mode", spec.permission_mode)
  elseif spec.skip_permissions then add("--dangerously-skip-permissions")
  else add("--permission-mode", "acceptEdits") end
  if spec.model then add("--model", spec.model) end
  if spec.effort then add("--effort", spec.effort) end
  local s = spec.session
  if s.mode == "fresh" then add("--session-id", s.id)
  elseif s.mode == "resume" then add("--resume", s.id)
  elseif s.mode == "branch" then add("--resume", s.from, "--fork-session", "--session-id", s.id) end
  if spec.max_budget_usd then add("--max-budget-usd", string.format("%.4f", spec.max_budget_usd)) end
  if spec.settings then add("--settings", spec.settings) end
  if spec.no_tools then add("--tools", "", "--strict-mcp-config") end
  -- Each rule is an argument of its own (a rule may hold a comma or a
  -- space), and a text that begins with "-" stays the option's value.
  if spec.allowed_tools and #spec.allowed_tools > 0 then add("--allowedTools", table.unpack(spec.allowed_tools)) end
  if spec.mcp_config then add("--mcp-config", spec.mcp_config) end
  if spec.append_system_prompt then add("--append-system-prompt=" .. spec.append_system_prompt) end
  if spec.max_turns then add("--max-turns", tostring(spec.max_turns)) end
  add("--disallowed-tools", M.DISALLOWED, table.unpack(spec.disallowed_tools or {}))
  add("--")
  return a
end

-- The most one turn may report as its cost, in dollars.  A turn runs
-- under --max-budget-usd, which the CLI checks after each API call, so a
-- real turn costs its cap plus one call; anything above this bound (or not
-- a finite, non-negative number) is a fault of the child, not a price.
M.MAX_TURN_USD = 1000

-- List prices in dollars per million tokens (input, output, cache read,
-- cache write) by the family named in the model id, the dearest first:
-- an id that names none is priced as the dearest, so an estimate rather
-- counts too much than too little.
local PRICES = {
  { "fable", 10, 50, 1, 12.5 }, { "opus", 5, 25, 0.5, 6.25 },
  { "sonnet", 3, 15, 0.3, 3.75 }, { "haiku", 1, 5, 0.1, 1.25 },
}

local function tokens(u, k)
  local v = u[k]
  if type(v) ~= "number" or v ~= v or v < 0 or v > 1e9 then return 0 end
  return v
end

-- What one API response with usage `u` cost, by the list price of `model`.
function M.price(model, u)
  local p = PRICES[1]
  for _, row in ipairs(PRICES) do
    if type(model) == "string" and model:find(row[1], 1, true) then p = row break end
  end
  return (tokens(u, "input_tokens") * p[2] + tokens(u, "output_tokens") * p[3]
    + tokens(u, "cache_read_input_tokens") * p[4] + tokens(u, "cache_creation_input_tokens") * p[5]) / 1e6
end

-- A reported cost, or nil and how to name the bad value in a message.
function M.check_cost(v)
  if type(v) == "number" and v == v and v >= 0 and v <= M.MAX_TURN_USD then return v end
  if type(v) == "number" then
    local s = string.format("%.6g", v)
    return nil, tonumber(s) == v and s or string.format("%.17g", v)
  end
  if type(v) == "string" then return nil, string.format("%q", #v > 40 and v:sub(1, 40) .. "..." or v) end
  return nil, v == cjson.null and "null" or ("a " .. type(v))
end

-- The argument that says what a tool call does, by tool: the file it
-- reads or edits, the command it runs, the pattern it looks for.
M.TOOL_ARG_MAX = 200
local TOOL_ARG = {
  Read = "file_path", Write = "file_path", Edit = "file_path", MultiEdit = "file_path",
  NotebookEdit = "notebook_path", Bash = "command", Grep = "pattern", Glob = "pattern",
  WebFetch = "url", WebSearch = "query", Task = "description", Agent = "description",
}

-- A tool_use content block as a short line, "Read src/x.c" or "Bash make
-- test": the tool's name and the first line of its main argument, a path
-- under `cwd` made relative to it.  Nil when the block names no tool.
-- The text is the model's: the caller makes it safe to show.
function M.tool_line(block, cwd)
  if type(block.name) ~= "string" or block.name == "" then return nil end
  local input = type(block.input) == "table" and block.input or {}
  local arg = input[TOOL_ARG[block.name] or ""]
  if type(arg) ~= "string" then return block.name end
  arg = arg:match("^%s*([^\n]*)")
  if cwd and arg:sub(1, #cwd + 1) == cwd .. "/" then arg = arg:sub(#cwd + 2) end
  if #arg > M.TOOL_ARG_MAX then
    -- Cut before the character the cut would split: back over the
    -- continuation bytes (10xxxxxx) that would start what is cut off.
    local n = M.TOOL_ARG_MAX
    while n > 0 and (arg:byte(n + 1) & 0xC0) == 0x80 do n = n - 1 end
    arg = arg:sub(1, n) .. "..."
  end
  return block.name .. " " .. arg
end

-- A reader of stream-json lines.  `on_text(text)`, if given, receives
-- assistant text as it arrives, `on_tool(block)` each tool call (a
-- tool_use content block) and `on_tool_result(block)` each tool_result
-- block Claude Code sends back; `on_usage(usd)` the turn's estimated
-- spend each time an API response's usage is seen.  Tags are searched in
-- the final result only, never in tool output, and each invocation's cost
-- is counted once.  Only the last assistant text is kept (the result's
-- stand-in when the CLI died before its result line), so memory stays
-- bounded however long the turn.
--
-- The estimate (st.seen) is what a turn without a trustworthy result
-- cost is charged: the usage of every API response in the stream, priced
-- at list prices.  Each response is counted once, by its message id.
function M.reader(on_text, on_usage, on_tool, on_tool_result)
  local st = { cost = 0, bad_lines = 0, seen = 0, seen_done = 0 }
  local function usage(msg)
    if type(msg.usage) ~= "table" then return end
    if msg.id ~= st.msg_id then
      st.seen_done = st.seen_done + (st.msg_usd or 0)
      st.msg_id = msg.id
    end
    st.msg_usd = M.price(msg.model, msg.usage)
    local seen = math.min(st.seen_done + st.msg_usd, M.MAX_TURN_USD)
    if seen ~= st.seen then
      st.seen = seen
      if on_usage then on_usage(seen) end
    end
  end
  st.line = function(line, unterminated)
    if line == "" then return end
    local ok, obj = pcall(cjson.decode, line)
    if not ok or type(obj) ~= "table" then
      st.bad_lines = st.bad_lines + 1
      -- The CLI exited in the middle of writing a line (seen with the
      -- real CLI and replies of a few MB on a pipe).
      if unterminated then st.cut_short = #line end
      return
    end
    if type(obj.session_id) == "string" and obj.session_id ~= "" then st.session = obj.session_id end
    local kind = obj.type
    if kind == "assistant" and type(obj.message) == "table" then
      if type(obj.error) == "string" then st.assistant_error = obj.error end
      usage(obj.message)
      for _, c in ipairs(type(obj.message.content) == "table" and obj.message.content or {}) do
        if type(c) == "table" and c.type == "text" and type(c.text) == "string" then
          st.last_text = c.text
          if on_text then on_text(c.text) end
        elseif type(c) == "table" and c.type == "tool_use" and on_tool then
          on_tool(c)
        end
      end
    elseif kind == "user" and on_tool_result and type(obj.message) == "table" then
      for _, c in ipairs(type(obj.message.content) == "table" and obj.message.content or {}) do
        if type(c) == "table" and c.type == "tool_result" then on_tool_result(c) end
      end
    elseif kind == "result" then
      st.got_result = true
      if type(obj.result) == "string" then st.result = obj.result end
      st.subtype = obj.subtype
      st.is_error = obj.is_error == true
      if type(obj.api_error_status) == "number" then st.api_status = math.tointeger(obj.api_error_status) end
      if obj.total_cost_usd ~= nil then
        local cost, bad = M.check_cost(obj.total_cost_usd)
        st.cost, st.bad_cost = cost or st.seen, bad
      else
        st.cost = st.seen
      end
      if type(obj.errors) == "table" then
        local e = {}
        for _, x in ipairs(obj.errors) do e[#e + 1] = tostring(x) end
        st.errors = table.concat(e, "; ")
      end
    elseif kind == "rate_limit_event" and type(obj.rate_limit_info) == "table" then
      local info = obj.rate_limit_info
      if info.status == "rejected" then st.limit_reset = M.sane_reset(info.resetsAt) or st.limit_reset or true end
    end
  end
  return st
end

-- A reset time from the stream, if it is a time within the next 31 days
-- (anything else would have the run wait forever or not at all).
function M.sane_reset(t)
  t = tonumber(t)
  if not t or t ~= t then return nil end
  local now = raymond.now()
  if t < now - 86400 or t > now + 31 * 86400 then return nil end
  return math.floor(t)
end

-- "resets 4:42am (UTC)" or "resets 5pm (UTC)" -> epoch of the next such
-- time; other time zones cannot be converted here and give nil.
function M.parse_reset(text, now)
  local h, m, ampm, tz = text:match("resets%s+(%d%d?):?(%d*)%s*([ap]m)%s*%(([^)]+)%)")
  if not h or tz ~= "UTC" then return nil end
  h = tonumber(h) % 12 + (ampm == "pm" and 12 or 0)
  m = tonumber(m) or 0
  local day = now - now % 86400
  local t = day + h * 3600 + m * 60
  if t <= now then t = t + 86400 end
  return t
end

-- The wording of a usage limit in an error result.  A successful reply
-- that says the same words is the model talking, not a limit.
local function is_limit_text(s)
  s = (s or ""):lower()
  return s:find("hit your", 1, true) and s:find("limit", 1, true) or s:find("out of extra usage", 1, true)
end

local function refusal(stderr)
  local first = stderr:match("[^\n]+") or ""
  for _, r in ipairs(refusals) do
    if first:find(r[1], 1, true) then return first, r[2] end
  end
end

-- Classify a finished invocation.
function M.outcome(res, st)
  local text = st.result or st.last_text or ""
  -- Without a result line the CLI said nothing of its cost: the turn is
  -- charged the usage its stream showed.
  local out = { session = st.session, cost = st.got_result and st.cost or st.seen, text = text,
                stderr = res.stderr_tail or "", duration = res.duration, exit = res.exit,
                estimated = not st.got_result or st.bad_cost ~= nil }
  if res.line_too_long then
    out.kind = "fatal"
    out.msg = string.format("the Claude Code CLI printed a stream-json line longer than %d MiB, "
      .. "raymond's cap on one line; the turn was stopped", M.LINE_MAX // (1024 * 1024))
    out.hint = "ask for a shorter reply (have the model write large output to a file)"
    return out
  end
  if res.killed and not res.timed_out then out.kind = "stopped" return out end
  if st.bad_cost then
    out.kind = "fatal"
    out.msg = string.format("the Claude Code CLI reported an impossible cost: total_cost_usd = %s "
      .. "(a turn costs from 0 to %d dollars); the turn is counted at the usage it showed, $%.4f",
      st.bad_cost, M.MAX_TURN_USD, st.seen)
    return out
  end
  if res.spawn_error then
    out.kind, out.msg = "fatal", "cannot run the Claude Code CLI: " .. res.spawn_error
    if res.spawn_error:find("no such file", 1, true) or res.spawn_error:find("permission denied", 1, true) then
      out.hint = "install it (npm install -g @anthropic-ai/claude-code), or give its path with --claude PATH or RAYMOND_CLAUDE"
    end
    return out
  end
  if not st.got_result and st.bad_lines == 0 and not st.session then
    local first, hint = refusal(out.stderr)
    if first then
      out.kind, out.msg, out.hint = "fatal", "the Claude Code CLI refused to start: " .. first, hint
      return out
    end
  end
  local all = text .. "\n" .. (st.errors or "") .. "\n" .. out.stderr
  local succeeded = res.exit == 0 and st.got_result and not st.is_error
  if (st.limit_reset and not succeeded) or (st.is_error and is_limit_text(st.result)) then
    out.kind = "limit"
    out.reset = type(st.limit_reset) == "number" and st.limit_reset or M.parse_reset(all, raymond.now())
    out.msg = st.result or "usage limit reached"
    return out
  end
  if res.timed_out then
    out.kind, out.msg = "transient", "the Claude Code CLI produced no output for the inactivity limit"
    return out
  end
  -- The CLI reports these on stderr or in `errors`; `reason` tells which.
  -- The model's text is not searched, nor a turn that succeeded: a reply
  -- may well say "port 8080 is already in use".
  local cli_said = succeeded and "" or (st.errors or "") .. "\n" .. out.stderr
  if cli_said:find("is already in use", 1, true) then
    out.kind, out.reason, out.msg = "session", "in_use", "the session id is already in use"
    return out
  end
  if cli_said:find("No conversation found", 1, true) then
    out.kind, out.reason, out.msg = "session", "missing", "no conversation found for the session id"
    return out
  end
  if st.subtype == "error_max_budget_usd" then
    out.kind, out.msg = "budget", "the invocation reached its --max-budget-usd"
    return out
  end
  if st.subtype == "error_max_turns" then
    out.kind, out.msg = "max_turns", "the invocation reached its --max-turns"
    return out
  end
  if res.exit == 0 and st.got_result and not st.is_error then
    out.kind = "ok"
    return out
  end
  local why = st.result or st.errors or out.stderr:match("[^\n]+")
  if not why and st.cut_short then
    why = string.format("the Claude Code CLI's output ended in the middle of a stream-json line "
      .. "(after %d bytes of it), without a result", st.cut_short)
  end
  if not why then
    why = res.exit == 0 and "the Claude Code CLI ended without a result"
      or ("the Claude Code CLI ended with " .. (res.signal and ("signal " .. res.signal) or ("exit status " .. tostring(res.exit))))
  end
  out.msg = why
  if st.api_status == 401 or (st.result or ""):find("Invalid API key", 1, true)
      or (st.result or ""):find("Not logged in", 1, true) then
    out.kind, out.hint = "fatal", "log in with `claude`, or set ANTHROPIC_API_KEY"
  elseif st.api_status and not transient_status[st.api_status] then
    out.kind = "fatal"
  else
    -- Overloaded or rate limited APIs, lost connections, errors during
    -- execution and a CLI that crashed without a result are all worth
    -- another attempt.
    out.kind = "transient"
  end
  return out
end

return M
