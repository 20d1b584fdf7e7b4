-- raymond.bridge: the run's side of the hook bridge, which puts the Lua
-- hooks in charge of every tool call of a Claude turn.
--
--   local gate, err = bridge.open(run, agent, frontmatter)
--   -- nil, nil: no hook file wants tool events in this state: the turn
--   --           gets no settings and pays nothing
--   -- nil, err: the bridge cannot be set up: the turn must not run
--   gate.settings   the --settings document for the CLI (JSON text)
--   gate.env        RAYMOND_BRIDGE and RAYMOND_BRIDGE_TOKEN for its environment
--   gate.hold       for raymond.spawn: held while an event of the turn is
--                   being decided, so the CLI's wait is not inactivity
--   gate:saw_use(block), gate:saw_result(block)
--                   the stream's tool_use and tool_result blocks, to catch a
--                   tool call that ran without the policy being asked
--   gate.bypass     set when one did (the run has failed, naming it)
--   gate.prompt_blocked
--                   set when a UserPromptSubmit hook refused the prompt: the
--                   turn's result is no reply, and the state fails with this
--   gate.turn       the key of the turn it gates, once opened: the turn is
--                   paused while its hooks decide (Run:pause)
--   gate:close()    after the turn: its secret is revoked
--   bridge.close(run)  at the end of the run: the socket goes
--
-- How an event travels:
--
--   Claude Code ── sh -c 'RAYMOND hook-bridge --timeout S || exit 2'
--        │                 │ event JSON on stdin, secret in the environment
--        │                 ▼
--        │          .raymond/state/<id>.bridge (Unix socket, mode 0600)
--        │                 │
--        │          handle(): secret -> gate (agent, state, what it wants)
--        │                 │ hooks of the event, for the files whose tools
--        │                 │ patterns select the tool (raymond.hooks)
--        │                 │ the run saved (agent.data and run.data)
--        │                 ▼
--        └─────── answer: (0, Claude Code's hook JSON) or (2, a reason)
--
-- Fail closed.  Claude Code runs the tool when a hook command exits with
-- any status but 2, prints something that is not JSON, or outlives its
-- timeout.  So the command ends in `|| exit 2` (a missing or crashed
-- bridge denies), the bridge gives up S seconds in, 30 s before the CLI
-- would, and says why on stderr with exit 2; and the stream is watched: a
-- tool call the PreToolUse hooks wanted that ran without raymond being
-- asked fails the run (gate.bypass), so a policy is never disarmed
-- without anyone noticing.  A file with on_error = "warn" turns each of
-- these into a warning, for the calls only files like it want.

local raymond = require("raymond")
local claude = require("raymond.claude")
local console = require("raymond.console")
local events = require("raymond.events")
local hooks = require("raymond.hooks")
local text = require("raymond.text")
local workspace = require("raymond.workspace")

local cjson = raymond.cjson

local M = {}

-- How long the bridge waits for an answer: a hook call's own limit, and
-- room to spare; Claude Code's timeout for the hook command is 30 s more.
M.SECONDS = math.floor(hooks.seconds) + 15
M.CLI_SECONDS = M.SECONDS + 30

local DENIED = "; the tool call is denied"

-- The hook command: `warn` when every file that wants the event says
-- on_error = "warn".
local function command(warn)
  return string.format("%s hook-bridge%s --timeout %d || exit 2", text.sh_quote(raymond.exe_path()),
    warn and " --warn" or "", M.SECONDS)
end

-- Claude Code's matcher for the union of the files' alternatives: "*",
-- names separated by "|" (matched exactly), or an anchored regular
-- expression when a name ends in "*".
local function matcher(entries)
  local seen, names, prefix = {}, {}, false
  for _, e in ipairs(entries) do
    for _, a in ipairs(e.tools) do
      if a == "*" then return "*" end
      if not seen[a] then
        seen[a] = true
        names[#names + 1] = a
        prefix = prefix or a:sub(-1) == "*"
      end
    end
  end
  table.sort(names)
  -- Claude Code matches letters, digits, _ and | as exact names, and
  -- searches anything else as a regular expression: anchored, so a name
  -- with a "-" matches itself only.
  local plain = table.concat(names, "|")
  if not prefix and plain:match("^[%w_|]+$") then return plain end
  for i, a in ipairs(names) do names[i] = a:gsub("%*$", ".*") end
  return "^(" .. table.concat(names, "|") .. ")$"
end

-- The --settings document for `plan` (raymond.hooks.tool_plan).
function M.settings(plan)
  local doc = {}
  for name, entries in pairs(plan) do
    local warn = true
    for _, e in ipairs(entries) do warn = warn and e.file.on_error == "warn" end
    local entry = { hooks = { { type = "command", command = command(warn), timeout = M.CLI_SECONDS } } }
    if events.by_name[name].matcher then entry.matcher = matcher(entries) end
    doc[name] = { entry }
  end
  -- A settings file of the user or the project may say disableAllHooks
  -- (seen with the CLI 2.1.197); settings given on the command line come
  -- before both, so this keeps the policy's hooks running.
  return raymond.json_encode({ disableAllHooks = false, hooks = doc })
end

-- A fresh secret: 64 hex digits from two random UUIDs.
local function secret()
  return (raymond.uuid() .. raymond.uuid()):gsub("-", "")
end

-- Whether any hook file of the set handles a tool event, so a run
-- without tool hooks asks nothing more per turn.
local wanting = setmetatable({}, { __mode = "k" })
local function any_tool_hooks(set)
  if not set then return false end
  if wanting[set] == nil then
    local any = false
    for _, e in ipairs(events.list) do any = any or (e.tool and hooks.handles(set, e.name)) end
    wanting[set] = any
  end
  return wanting[set]
end

local Gate = {}
Gate.__index = Gate

-- A tool call as a decision line shows it: Bash "git push".
local function call_text(gate, tool, input)
  local line = claude.tool_line({ name = tool, input = input }, gate.agent.cwd)
  if not line or line == tool then return tostring(tool) end
  return string.format("%s %q", tool, line:sub(#tool + 2))
end

-- A line about the gate's agent and state: "[main] START.md: text".
local function agent_line(gate, text)
  return string.format("[%s] %s: %s", gate.agent.id, gate.agent.state, text)
end

-- Show and record a decision line: `shown` ones on stderr too.
local function decision_line(gate, text, shown)
  local line = agent_line(gate, text)
  if shown then console.progress("%s", line) end
  if gate.run.record then gate.run.record:decision(line) end
end

local function where(run, at)
  return console.rel(at or "?", run.cwd)
end

-- The arguments a known tool needs, by type: an updatedInput without them
-- would only fail inside Claude Code, far from the hook that made it.
local NEEDS = {
  Bash = { command = "string" }, Write = { file_path = "string", content = "string" },
  Edit = { file_path = "string", old_string = "string", new_string = "string" },
  Read = { file_path = "string" }, MultiEdit = { file_path = "string", edits = "table" },
  NotebookEdit = { notebook_path = "string" }, Glob = { pattern = "string" }, Grep = { pattern = "string" },
  WebFetch = { url = "string" }, WebSearch = { query = "string" },
}

-- Nil when `input` fits tool `tool`, else what is wrong with it.
function M.check_input(tool, input)
  local n = 0
  for k in pairs(input) do
    if type(k) ~= "string" then
      return "must be a table of named arguments (like the tool's own tool_input), not a list"
    end
    n = n + 1
  end
  for k, ty in pairs(NEEDS[tool] or {}) do
    if type(input[k]) ~= ty then
      return string.format("for %s needs '%s' as a %s, got %s", tool, k, ty, type(input[k]))
    end
  end
  if n == 0 then return "is empty: give the tool's arguments, or leave updatedInput out" end
  return nil
end

-- Claude Code's answer for event `name` and merged decision `d`:
-- the code (0) and the JSON text, and the decision line, if any, with
-- whether it is shown.
local function answer(gate, name, ev, d)
  local run = gate.run
  local out, hso = {}, { hookEventName = name }
  local line, shown
  local call = ev.tool_name and call_text(gate, ev.tool_name, ev.tool_input) or gate.agent.state
  if d.continue == false then
    local why = d.stopReason or "a hook stopped the run"
    out.continue, out.stopReason = false, why
    if name == "PreToolUse" then
      hso.permissionDecision, hso.permissionDecisionReason = "deny", why
    end
  elseif name == "PreToolUse" then
    if d.permissionDecision == "deny" then
      local why = d.permissionDecisionReason or ("denied by raymond's policy (" .. where(run, d.by.permissionDecision) .. ")")
      hso.permissionDecision, hso.permissionDecisionReason = "deny", why
      line, shown = string.format("%s denied by %s: %s", call, where(run, d.by.permissionDecision), why), true
    elseif d.updatedInput then
      -- Claude Code applies new arguments only to a call it is told to
      -- allow.
      hso.permissionDecision, hso.updatedInput = "allow", d.updatedInput
      hso.permissionDecisionReason = d.permissionDecisionReason
      line, shown = string.format("%s rewritten by %s to %s", call, where(run, d.by.updatedInput),
        call_text(gate, ev.tool_name, d.updatedInput)), true
    elseif d.permissionDecision == "allow" then
      hso.permissionDecision, hso.permissionDecisionReason = "allow", d.permissionDecisionReason
      line = string.format("%s allowed by %s", call, where(run, d.by.permissionDecision))
    end
  elseif d.decision == "block" then
    out.decision, out.reason = "block", d.reason or ("blocked by " .. where(run, d.by.decision))
    line, shown = string.format("%s %s blocked by %s: %s", name, call, where(run, d.by.decision), out.reason), true
  end
  if d.additionalContext and d.continue ~= false then
    hso.additionalContext = d.additionalContext
    line = line or string.format("%s %s: context added by %s", name, call, where(run, d.by.additionalContext))
  end
  if hso.permissionDecision or hso.additionalContext then out.hookSpecificOutput = hso end
  return raymond.json_encode(out), line, shown
end

-- Decide one event `body` (JSON) of `gate`'s turn: the reply's code and text.
local function decide(gate, body)
  local run, agent = gate.run, gate.agent
  local ok, ev = pcall(cjson.decode, body)
  if not ok or type(ev) ~= "table" or type(ev.hook_event_name) ~= "string" then
    return 2, "raymond could not read the event the hook bridge relayed (not a JSON object with "
      .. "hook_event_name)" .. DENIED
  end
  local name = ev.hook_event_name
  local entries = gate.plan[name]
  if not entries then return 0, "{}" end
  local e = events.by_name[name]
  local tool = type(ev.tool_name) == "string" and ev.tool_name or nil
  local odd = gate:unexpected(name, ev)
  if odd then
    gate:report("ignored a " .. name .. " event " .. odd)
    return name == "PreToolUse" and 2 or 0, name == "PreToolUse" and ("raymond refused this event: " .. odd .. DENIED)
      or "{}"
  end
  if run.failed or run.stopped or raymond.stopping() then
    return 2, "raymond is stopping the run" .. DENIED
  end
  local chosen = {}
  for _, x in ipairs(entries) do
    if not e.matcher or (tool and hooks.tool_matches(x.tools, tool)) then chosen[x.file] = true end
  end
  if next(chosen) == nil then return 0, "{}" end
  local fields = { frontmatter = gate.meta }
  for _, f in ipairs(e.fields) do
    if f ~= "frontmatter" and ev[f] ~= nil then fields[f] = ev[f] end
  end
  -- The turn waits for this answer: what its hooks open meanwhile (a
  -- raymond.evaluate) must not wait for it (raymond.run, Run:pause).
  if gate.turn then run:pause(gate.turn, 1) end
  local d, err = run:emit(name, agent, fields, function(file) return chosen[file] end)
  if gate.turn then run:pause(gate.turn, -1) end
  if not d then return 2, (err or "the run is stopping") .. DENIED end
  if d.updatedInput and d.permissionDecision ~= "deny" and d.continue ~= false then
    local why = M.check_input(tool, d.updatedInput)
    if why then
      local msg = string.format("%s: PreToolUse decision field 'updatedInput' %s", where(run, d.by.updatedInput), why)
      run:fail(agent, msg, nil, "fix the hook, then continue with: raymond --resume " .. run.rec.id)
      return 2, msg .. DENIED
    end
  end
  local ok2, text, line, shown = pcall(answer, gate, name, ev, d)
  if not ok2 then
    local msg = string.format("%s: %s decision cannot be sent to Claude Code: %s", where(run, next(d.by) and
      d.by[next(d.by)]), name, tostring(text))
    run:fail(agent, msg)
    return 2, msg .. DENIED
  end
  if line then decision_line(gate, line, shown) end
  if name == "UserPromptSubmit" and d.decision == "block" and d.continue ~= false then
    -- Claude Code then ends the turn with a result that quotes the
    -- prompt: its tags are the workflow's own, never a reply.
    gate.prompt_blocked = string.format("the prompt was refused by %s: %s", where(run, d.by.decision),
      d.reason or "no reason given")
  end
  if d.continue == false then
    run:stop(agent, string.format("stopped by %s: %s", where(run, d.by.continue), d.stopReason or "a hook stopped the run"))
  end
  -- What the handlers changed in run.data and agent.data is on disk
  -- before the tool runs.
  if not run:save() then return 2, "raymond cannot save the run's state" .. DENIED end
  return 0, text
end

-- A connection whose secret names no turn in flight: a forged call, or a
-- hook of a turn that already ended.
local function refuse(run, b)
  b.refused = (b.refused or 0) + 1
  local msg = "refused a hook-bridge connection whose secret is not one of a Claude turn in flight"
  console.warn("%s (%d so far in this run)", msg, b.refused)
  if run.record then run.record:decision("[run] bridge: " .. msg) end
end

-- Show and record something odd about this turn's events.
function Gate:report(msg)
  local line = agent_line(self, msg)
  console.warn("%s", line)
  if self.run.record then self.run.record:decision(line) end
end

-- Why event `name` cannot be one Claude Code sent for this turn, or nil.
-- A tool command the policy let run inherits the turn's secret and can
-- send events of its own: these are the ones raymond can tell apart (a
-- second event for one call, an outcome of a call PreToolUse never saw,
-- a second prompt).  A forged PreToolUse is not: it only asks for a
-- decision, which authorises nothing.
function Gate:unexpected(name, ev)
  local id = type(ev.tool_use_id) == "string" and ev.tool_use_id or nil
  local seen = self.seen
  if name == "PreToolUse" or name == "PostToolUse" or name == "PostToolUseFailure" then
    if not id then return "without a tool_use_id" end
    local key = (name == "PreToolUse" and "pre " or "post ") .. id
    if seen[key] then return "for a call it was already asked about (" .. id .. ")" end
    if name ~= "PreToolUse" and not self.asked[id] and self:wants_pre(ev.tool_name) then
      return "for a call its PreToolUse hooks were never asked about (" .. id .. ")"
    end
    seen[key] = true
    if name == "PreToolUse" then self.asked[id] = true end
  elseif name == "UserPromptSubmit" then
    if seen.prompt then return "after the turn's prompt was already submitted" end
    seen.prompt = true
  end
  return nil
end

-- Decide event `body` of `gate`'s turn: the hook command's exit code and
-- output, as Claude Code reads them.
local function relay(gate, body)
  -- The CLI waits in silence while its hooks decide: that is no
  -- inactivity of its own.
  gate.hold:hold()
  local ok, code, text = xpcall(decide, debug.traceback, gate, body)
  gate.hold:release()
  if not ok then
    console.error("internal error while deciding a tool event: " .. tostring(code))
    code, text = 2, "raymond failed while deciding this event (an internal error)" .. DENIED
  end
  return code, text
end

-- The same for an event raised inside raymond rather than over the
-- socket (a test's scripted model, raymond.model): `ev` is the table
-- Claude Code would send.
function M.ask(gate, ev)
  return relay(gate, raymond.json_encode(ev))
end

local function handle(run, b, conn, token, body)
  local gate = b.gates[token]
  if not gate then
    refuse(run, b)
    conn:reply(2, "raymond refused this hook-bridge connection: its secret is not one raymond gave a "
      .. "running Claude turn" .. DENIED)
    return
  end
  conn:reply(relay(gate, body))
end

-- The run's bridge, listening from the first turn that needs it.
local function server(run)
  if run.bridge then return run.bridge end
  local b = { path = workspace.bridge_path(run.ws, run.rec.id), gates = {} }
  local srv, err = raymond.bridge_listen(b.path, function(conn, token, body)
    handle(run, b, conn, token, body)
  end)
  if not srv then return nil, err end
  b.srv = srv
  run.bridge = b
  return b
end

function M.open(run, agent, meta)
  local set = run:hooks_of(agent)
  if not any_tool_hooks(set) then return nil end
  local plan, err = hooks.tool_plan(set, run:event(agent, { frontmatter = meta }))
  if not plan then return nil, err end
  local b
  b, err = server(run)
  if not b then
    return nil, "cannot start the hook bridge, so the tool policy could not be enforced: " .. tostring(err)
  end
  local gate = setmetatable({ run = run, agent = agent, meta = meta, plan = plan, token = secret(),
                              asked = {}, uses = {}, seen = {}, bridge = b }, Gate)
  gate.settings = M.settings(plan)
  gate.hold = raymond.hold()
  gate.env = { RAYMOND_BRIDGE = b.path, RAYMOND_BRIDGE_TOKEN = gate.token }
  b.gates[gate.token] = gate
  return gate
end

function Gate:close()
  self.bridge.gates[self.token] = nil
end

function Gate:saw_use(block)
  if type(block.id) == "string" and type(block.name) == "string" then self.uses[block.id] = block end
end

-- Whether the PreToolUse hooks of this turn want tool `name`, and
-- whether every file that wants it says on_error = "warn".
function Gate:wants_pre(name)
  local wanted, warn_only = false, true
  for _, x in ipairs(self.plan.PreToolUse or {}) do
    if type(name) == "string" and hooks.tool_matches(x.tools, name) then
      wanted = true
      warn_only = warn_only and x.file.on_error == "warn"
    end
  end
  return wanted, warn_only
end

-- The text a tool_result block begins with.
local function result_text(block)
  local c = block.content
  if type(c) == "table" then c = type(c[1]) == "table" and c[1].text end
  return type(c) == "string" and c or ""
end

-- A tool_result in the stream: the call was made.  If the PreToolUse
-- hooks wanted it and were never asked, Claude Code ran it past the
-- policy, whether the tool then succeeded or failed.  Two errors are no
-- sign of that: a call Claude Code refused before any hook (no such
-- tool, bad arguments: "<tool_use_error>"), and one the hook command
-- refused without reaching raymond ("PreToolUse:Bash hook error: ...",
-- the bridge's exit status 2).
function Gate:saw_result(block)
  local id = block.tool_use_id
  local use = type(id) == "string" and self.uses[id]
  if not use or self.asked[id] or self.bypass then return end
  if block.is_error == true then
    local t = result_text(block)
    if t:find("^%s*<tool_use_error>") or t:find("^PreToolUse:[^\n]* hook error") then return end
  end
  local wanted, warn_only = self:wants_pre(use.name)
  if not wanted then return end
  local msg = string.format("the tool call %s (%s) ran without raymond's PreToolUse hooks being asked: "
    .. "Claude Code did not run the hook bridge raymond gave it", call_text(self, use.name, use.input), id)
  if warn_only then
    console.warn("%s (going on: every hook file that wants it says on_error = \"warn\")", msg)
    return
  end
  self.bypass = msg
  self.run:fail(self.agent, msg, nil, "check that nothing overrides raymond's --settings hooks "
    .. "(disableAllHooks in a settings file), then continue with: raymond --resume " .. self.run.rec.id)
end

function M.close(run)
  if run.bridge then
    run.bridge.srv:close()
    run.bridge = nil
  end
end

return M
