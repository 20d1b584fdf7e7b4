-- raymond.events: the hook contract, one entry per event.
--
-- What a hook may be told and what it may answer is written here once:
-- per event, when it fires, the fields of its event table, and the
-- decision fields it takes.  Each decision field has a type and an
-- effect.  check() validates a handler's decision against this table
-- (an unknown field, or one the event does not take, warns; a wrong type
-- is an error) and verdict() is the one place a decision is interpreted.
-- docs/hooks.md shows the same table, and a test keeps the two equal.
--
-- Adding an event is one entry in M.list plus the place that emits it;
-- adding a decision field is one entry in M.fields plus its effect.

local policy = require("raymond.policy")

local M = {}

-- A check of an agent setting's value beyond its type (raymond.policy):
-- nil when it is good, else why not.
local function setting(key)
  return function(v) return select(2, policy.setting(key, v)) end
end

-- Every decision field: its Lua type, its effect, and for "set" fields
-- the key they set on the emitter's target (PreState: the invocation;
-- PreTransition: the agent) and, for some, a check of the value.
--   stop        with continue = false: the run stops before anything
--               else happens, status "stopped", resumable
--   block       with decision = "block": the reply (or the transition)
--               is refused; a markdown state is re-prompted
--   transition  the decided transition is replaced by this one
--   note        text that goes with another field (why a block or a
--               transition, the options a resume needs after a stop)
--   set         copied onto the target
--   tool        (tool events) part of the answer Claude Code gets
--               through the hook bridge (raymond.bridge)
-- A field with `rank` is merged across files by rank, not first-wins:
-- the higher value wins, and the fields in its `with` list come from the
-- same handler (a deny wins over an allow, with its reason).
M.fields = {
  continue = { type = "boolean", effect = "stop" },
  stopReason = { type = "string", effect = "note" },
  resumeArgs = { type = "string", effect = "note" },
  decision = { type = "string", effect = "block", values = { block = true } },
  reason = { type = "string", effect = "note" },
  transition = { type = "table", effect = "transition" },
  additionalContext = { type = "string", effect = "set", key = "context" },
  model = { type = "string", effect = "set", key = "model" },
  effort = { type = "string", effect = "set", key = "effort" },
  prompt = { type = "string", effect = "set", key = "prompt" },
  maxBudgetUsd = { type = "number", effect = "set", key = "max_budget_usd" },
  waitForTurns = { type = "boolean", effect = "set", key = "wait_for_turns" },
  permissionDecision = { type = "string", effect = "tool", values = { allow = true, deny = true },
                         rank = { allow = 1, deny = 2 }, with = { "permissionDecisionReason" } },
  permissionDecisionReason = { type = "string", effect = "note" },
  updatedInput = { type = "table", effect = "tool" },
  allowedTools = { type = "table", effect = "set", key = "allowed_tools", check = setting("allowed_tools") },
  disallowedTools = { type = "table", effect = "set", key = "disallowed_tools", check = setting("disallowed_tools") },
  permissionMode = { type = "string", effect = "set", key = "permission_mode", check = setting("permission_mode") },
  mcpConfig = { type = "string", effect = "set", key = "mcp_config", check = setting("mcp_config") },
  appendSystemPrompt = { type = "string", effect = "set", key = "append_system_prompt",
    check = setting("append_system_prompt") },
  maxTurns = { type = "number", effect = "set", key = "max_turns", check = setting("max_turns") },
}

-- Fields every event has; `agent` events also have the agent's.
M.common = { "hook_event_name", "run_id", "workflow", "run" }
M.agent_fields = { "agent_id", "state", "agent" }

-- Claude Code's own fields of the tool events (raymond.bridge passes them
-- on as they came), and what raymond adds: the state's frontmatter.
local TOOL_COMMON = { "session_id", "cwd", "permission_mode", "frontmatter" }
local function tool_fields(...)
  local t = { ... }
  for _, f in ipairs(TOOL_COMMON) do t[#t + 1] = f end
  return t
end

-- `tool = true`: an event of a Claude turn, asked through the hook bridge
-- (raymond.bridge); `matcher = true`: one about a tool call, which a
-- hook file's `tools` patterns select.
M.list = {
  { name = "RunStart", when = "a new run, before anything runs",
    fields = {}, decisions = { "continue", "stopReason" } },
  { name = "Resume", when = "a run continues after --resume",
    fields = {}, decisions = { "continue", "stopReason" } },
  { name = "PreState", when = "before a state runs", agent = true,
    fields = { "kind", "invocation", "frontmatter" },
    decisions = { "transition", "reason", "continue", "stopReason", "model", "effort", "prompt", "maxBudgetUsd",
      "allowedTools", "disallowedTools", "permissionMode", "mcpConfig", "appendSystemPrompt", "maxTurns" } },
  { name = "PostState", when = "after a state ran successfully (for markdown, after each turn)", agent = true,
    fields = { "kind", "output", "cost_usd", "duration", "exit_code", "frontmatter" },
    decisions = { "transition", "decision", "reason", "continue", "stopReason" } },
  { name = "PreTurn", when = "before each Claude turn is launched (raymond.evaluate's too)", agent = true,
    fields = { "turn" }, decisions = { "maxBudgetUsd", "waitForTurns", "continue", "stopReason", "resumeArgs" } },
  { name = "Cost", when = "after each Claude turn, also one that failed (not once the run is stopping)",
    agent = true,
    fields = { "turn", "cost_usd", "total_cost_usd", "estimated", "capped" },
    decisions = { "continue", "stopReason", "resumeArgs" } },
  { name = "PreTransition", when = "the transition is decided, before it applies", agent = true,
    fields = { "transition" },
    decisions = { "transition", "decision", "reason", "continue", "stopReason", "additionalContext" } },
  { name = "PostTransition", when = "after it applied", agent = true,
    fields = { "transition", "from" }, decisions = {} },
  { name = "AgentFork", when = "a worker was created", agent = true,
    fields = { "parent_id" }, decisions = {} },
  { name = "AgentExit", when = "an agent ended with <result>", agent = true,
    fields = { "result" }, decisions = {} },
  { name = "UserPromptSubmit", when = "a Claude turn's prompt is submitted", agent = true, tool = true,
    fields = tool_fields("prompt"),
    decisions = { "decision", "reason", "additionalContext", "continue", "stopReason" } },
  { name = "PreToolUse", when = "before a tool call of a Claude turn runs", agent = true, tool = true,
    matcher = true, fields = tool_fields("tool_name", "tool_input", "tool_use_id"),
    decisions = { "permissionDecision", "permissionDecisionReason", "updatedInput", "additionalContext",
                  "continue", "stopReason" } },
  { name = "PostToolUse", when = "after a tool call succeeded", agent = true, tool = true, matcher = true,
    fields = tool_fields("tool_name", "tool_input", "tool_use_id", "tool_response"),
    decisions = { "decision", "reason", "additionalContext", "continue", "stopReason" } },
  { name = "PostToolUseFailure", when = "after a tool call failed", agent = true, tool = true, matcher = true,
    fields = tool_fields("tool_name", "tool_input", "tool_use_id", "error", "is_interrupt"),
    decisions = { "decision", "reason", "additionalContext", "continue", "stopReason" } },
  { name = "Stop", when = "a Claude turn is about to end", agent = true, tool = true,
    fields = tool_fields("stop_hook_active", "last_assistant_message"),
    decisions = { "decision", "reason", "continue", "stopReason" } },
  { name = "Error", when = "the run failed", fields = { "error" }, decisions = {} },
  { name = "RunEnd", when = "the run ended: completed, stopped or failed",
    fields = { "status", "result", "error" }, decisions = {} },
}

-- The fields that come only with a ranked field (its `with` list): a
-- handler's reason goes with its decision, never with another's.
M.companion = {}
for name, f in pairs(M.fields) do
  for _, w in ipairs(f.with or {}) do M.companion[w] = name end
end

M.by_name = {}
for _, e in ipairs(M.list) do
  e.takes = {}
  for _, f in ipairs(e.decisions) do e.takes[f] = true end
  M.by_name[e.name] = e
end

-- Check decision `d` of event `name`, returned by the handler at `where`
-- ("file:line").  Returns d, and a list of warnings; or nil and an error.
function M.check(name, d, where)
  if type(d) ~= "table" then
    return nil, string.format("%s: %s handler returned a %s; return nil or a decision table",
      where, name, type(d))
  end
  local takes = M.by_name[name].takes
  local warnings = {}
  for k, v in pairs(d) do
    local f = M.fields[k]
    if not f then
      warnings[#warnings + 1] = string.format("%s: %s decision has unknown field '%s' (ignored)",
        where, name, tostring(k))
    elseif type(v) ~= f.type then
      return nil, string.format("%s: %s decision field '%s' should be a %s, got %s",
        where, name, k, f.type, type(v))
    elseif f.values and not f.values[v] then
      local allowed = {}
      for a in pairs(f.values) do allowed[#allowed + 1] = '"' .. a .. '"' end
      table.sort(allowed)
      return nil, string.format("%s: %s decision field '%s' must be %s, got \"%s\"",
        where, name, k, table.concat(allowed, " or "), v)
    elseif not takes[k] then
      warnings[#warnings + 1] = string.format("%s: %s does not take decision field '%s' (ignored)",
        where, name, k)
      d[k] = nil
    else
      local why = f.check and f.check(v)
      if why then return nil, string.format("%s: %s decision field '%s' %s", where, name, k, why) end
    end
  end
  if d.transition and type(d.transition.tag) ~= "string" then
    return nil, string.format("%s: %s decision 'transition' needs a string 'tag'", where, name)
  end
  return d, warnings
end

-- What a merged decision means, in order of precedence: "stop" (with
-- d.stopReason), "block" (d.reason), "transition" (d.transition) or "go".
-- Unless it stops or blocks, fields with effect "set" are copied onto
-- `target`.
function M.verdict(d, target)
  if d.continue == false then return "stop" end
  if d.decision == "block" then return "block" end
  if target then
    for k, v in pairs(d) do
      local f = M.fields[k]
      if f and f.effect == "set" then target[f.key] = v end
    end
  end
  if d.transition then return "transition" end
  return "go"
end

return M
