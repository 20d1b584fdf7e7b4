-- raymond.policy: what a markdown state's frontmatter allows and asks for.
--
--   ---
--   allowed_transitions:
--     - { tag: goto, target: REVIEW.md }
--     - { tag: call, target: CHILD, return: AFTER.md }
--     - { tag: result, payload: YES }
--   model: haiku
--   effort: high
--   timeout: 300
--   force_implicit: false
--   allowed_tools: [Read, Grep, "Bash(git log:*)"]
--   disallowed_tools: WebFetch, WebSearch
--   permission_mode: plan
--   mcp_config: servers.json
--   append_system_prompt: Answer in French.
--   max_turns: 20
--   launcher: {name: slurm, cpus: 2}
--   ---
--
-- parse(meta, file) checks the fields and returns a policy table (the
-- agent's settings, the last six, in pol.settings);
-- check(pol, tags, dir) says whether emitted tags are allowed;
-- rendered(pol, render) fills in the placeholders of fixed payloads;
-- implicit(pol, dir, render) gives the transition used when no tag is
-- emitted;
-- reminder(pol, why) is the text appended to a re-prompt;
-- setting(key, v) checks one agent setting, from the frontmatter or from
-- a PreState hook; mcp_text(scope, path) reads an MCP configuration.

local raymond = require("raymond")
local resolve = require("raymond.resolve")
local tags = require("raymond.tags")
local text = require("raymond.text")
local transition = require("raymond.transition")

local M = {}

local TAGS = tags.by_name

M.fields = {
  allowed_transitions = "list", model = "string", effort = "string",
  timeout = "number", force_implicit = "boolean",
  allowed_tools = "tools", disallowed_tools = "tools", permission_mode = "string",
  mcp_config = "string", append_system_prompt = "string", max_turns = "number",
  launcher = "launcher",
}

-- The type of every field a state's frontmatter may hold, this module's
-- and those the hooks read (`extra`), for raymond.frontmatter: only a
-- "number" or "boolean" field's value is typed, every other value is the
-- string the author wrote, so `target: 007` or `payload: yes` stay text.
function M.types(extra)
  local t = {}
  for k, v in pairs(extra or {}) do t[k] = v end
  for k, v in pairs(M.fields) do t[k] = v end
  return t
end

M.efforts = { low = true, medium = true, high = true, xhigh = true, max = true }

-- The agent's settings: each frontmatter key with the PreState decision
-- field that changes it, in the order the CLI is given them.
M.SETTINGS = {
  { key = "allowed_tools", field = "allowedTools" },
  { key = "disallowed_tools", field = "disallowedTools" },
  { key = "permission_mode", field = "permissionMode" },
  { key = "mcp_config", field = "mcpConfig" },
  { key = "append_system_prompt", field = "appendSystemPrompt" },
  { key = "max_turns", field = "maxTurns" },
}
M.setting_of = {}
for _, s in ipairs(M.SETTINGS) do M.setting_of[s.key] = s end

-- Claude Code's tools: those of 2.1.197, and those other versions have.
M.TOOLS = {
  "Agent", "AskUserQuestion", "Bash", "BashOutput", "CronCreate", "CronDelete", "CronList", "Edit",
  "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "Glob", "Grep", "KillShell", "LS",
  "MultiEdit", "NotebookEdit", "NotebookRead", "Read", "ReportFindings", "ScheduleWakeup", "SendMessage",
  "Skill", "Task", "TaskCreate", "TaskGet", "TaskList", "TaskOutput", "TaskStop", "TaskUpdate", "TodoWrite",
  "WebFetch", "WebSearch", "Workflow", "Write",
}
local TOOL = {}
for _, t in ipairs(M.TOOLS) do TOOL[t] = true end

M.PERMISSION_MODES = { "acceptEdits", "auto", "bypassPermissions", "default", "dontAsk", "plan" }
local PERMISSION_MODE = {}
for _, m in ipairs(M.PERMISSION_MODES) do PERMISSION_MODE[m] = true end

M.MAX_TURNS = 1000000

-- The longest text passed as one command-line argument (bytes): Linux
-- refuses a longer one (131072 with its NUL), option name included.
M.ARG_MAX = 131000

local trim = text.trim

-- How a bad value is named in a message: a long text by how it begins,
-- cut before a character the cut would split.
local function shown(v)
  if type(v) == "table" then return (next(v) == nil or v[1] ~= nil) and "a list" or "a mapping" end
  if type(v) == "string" and #v > 60 then return "'" .. v:sub(1, 60):gsub("[\192-\255][\128-\191]*$", "") .. "...'" end
  if type(v) == "string" then return "'" .. v .. "'" end
  if type(v) == "number" then return tostring(math.tointeger(v) or v) end
  return "a " .. type(v)
end

-- A comma-separated string of tool rules as a list; a comma inside a
-- rule's parentheses is the rule's.
local function split_rules(s)
  local out, depth, start = {}, 0, 1
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "(" then
      depth = depth + 1
    elseif c == ")" and depth > 0 then
      depth = depth - 1
    elseif c == "," and depth == 0 then
      out[#out + 1] = s:sub(start, i - 1)
      start = i + 1
    end
  end
  out[#out + 1] = s:sub(start)
  return out
end

-- The number of single-letter edits from `a` to `b`, letter case aside.
local function distance(a, b)
  a, b = a:lower(), b:lower()
  local row = {}
  for j = 0, #b do row[j] = j end
  for i = 1, #a do
    local diag, prev = row[0], i
    row[0] = i
    for j = 1, #b do
      local cur = math.min(row[j] + 1, prev + 1, diag + (a:byte(i) == b:byte(j) and 0 or 1))
      diag, row[j], prev = row[j], cur, cur
    end
  end
  return row[#b]
end

-- The tool a misspelt `name` most likely meant, if one is close: two
-- edits at most, and fewer than half its letters.
local function nearest(name)
  local best, best_d = nil, math.min(3, #name // 2 + 1)
  for _, t in ipairs(M.TOOLS) do
    local d = distance(name, t)
    if d < best_d then best, best_d = t, d end
  end
  return best
end

-- Nil when `rule` is a tool rule as Claude Code writes one (a tool, an
-- MCP server's tool or all of them, optionally a rule in parentheses),
-- else why not.
local function rule_error(rule)
  local name, paren = rule:match("^([^(]*)(.*)$")
  if paren ~= "" and not paren:find("^%(.*%)$") then
    return string.format("has %s, which is not a tool rule: the rule goes in parentheses after the "
      .. "tool, as in Bash(git log:*)", shown(rule))
  end
  if TOOL[name] or name:find("^mcp__[%w_%-]+$") or name:find("^mcp__[%w_%-]+__%*$") then return nil end
  local near = nearest(name)
  if near then return string.format("names an unknown tool %s; did you mean %s?", shown(name), near) end
  return string.format("names an unknown tool %s; the tools are %s, and mcp__SERVER__TOOL or mcp__SERVER__* "
    .. "for an MCP server's", shown(name), table.concat(M.TOOLS, ", "))
end

local CHECK = {}

function CHECK.allowed_tools(v)
  local list = v
  if type(v) == "string" then
    list = {}
    for _, r in ipairs(split_rules(v)) do
      if trim(r) ~= "" then list[#list + 1] = r end
    end
  elseif type(v) ~= "table" or (next(v) ~= nil and v[1] == nil) then
    return nil, "must be a list of tools, or one string of them separated by commas, got " .. shown(v)
  end
  local out = {}
  for i, r in ipairs(list) do
    if type(r) ~= "string" or trim(r) == "" then
      return nil, string.format("entry %d must be a tool name, got %s", i, type(r) == "string" and "an empty one" or shown(r))
    end
    local why = rule_error(trim(r))
    if why then return nil, why end
    out[i] = trim(r)
  end
  return out
end
CHECK.disallowed_tools = CHECK.allowed_tools

function CHECK.permission_mode(v)
  if type(v) == "string" and PERMISSION_MODE[trim(v)] then return trim(v) end
  return nil, string.format("must be one of %s, got %s", table.concat(M.PERMISSION_MODES, ", "), shown(v))
end

function CHECK.mcp_config(v)
  local p = type(v) == "string" and trim(v)
  while p and p:sub(1, 2) == "./" do p = p:sub(3) end
  if not p or p == "" or p:sub(1, 1) == "/" or ("/" .. p .. "/"):find("/%.%./") then
    return nil, string.format("must be the path of a JSON file of the workflow, relative to the state's "
      .. "folder (e.g. servers.json), got %s", shown(v))
  end
  return p
end

function CHECK.append_system_prompt(v)
  if type(v) ~= "string" then return nil, "must be text, got " .. shown(v) end
  if #v > M.ARG_MAX then
    return nil, string.format("is %d bytes, more than the %d one command-line argument may hold; "
      .. "put the text in the prompt", #v, M.ARG_MAX)
  end
  return v
end

function CHECK.max_turns(v)
  local n = type(v) == "number" and math.tointeger(v)
  if n and n >= 1 and n <= M.MAX_TURNS then return n end
  return nil, string.format("must be a whole number of turns from 1 to %d, got %s", M.MAX_TURNS, shown(v))
end

-- Agent setting `key`'s value as the CLI takes it (a tool list as a list
-- of rules), or nil and why not, in words that follow the key's name.
function M.setting(key, v) return CHECK[key](v) end

-- The text of the MCP configuration at `path` in `scope` (a workflow's
-- folder or archive), checked to be JSON with an mcpServers object; or
-- nil and why not, in words that follow "mcp_config".
function M.mcp_text(scope, path)
  if not scope:has(path) then
    return nil, string.format("names no file '%s' of the workflow (the path is relative to the state's "
      .. "folder)", path)
  end
  local source, err = scope:read(path)
  if not source then return nil, string.format("names '%s', which cannot be read: %s", path, err) end
  if #source > M.ARG_MAX then
    return nil, string.format("names '%s', which is %d bytes, more than the %d one command-line argument may hold",
      path, #source, M.ARG_MAX)
  end
  local ok, obj = pcall(raymond.cjson.decode, source)
  if not ok then return nil, string.format("names '%s', which is not JSON: %s", path, tostring(obj)) end
  if type(obj) ~= "table" or type(obj.mcpServers) ~= "table" or obj.mcpServers[1] ~= nil then
    return nil, string.format("names '%s', which has no \"mcpServers\" object; write "
      .. "{\"mcpServers\": {\"NAME\": {\"command\": \"...\", \"args\": [...]}}}", path)
  end
  return trim(source)
end

-- Attributes of any tag whose values are state names (return, next),
-- sorted: an entry names them as keys of its own, like target.
local TARGET_ATTRS = {}
do
  local seen = {}
  for _, e in ipairs(tags.list) do
    for _, k in ipairs(tags.target_attrs(e.name)) do
      if not seen[k] then seen[k] = true; TARGET_ATTRS[#TARGET_ATTRS + 1] = k end
    end
  end
  table.sort(TARGET_ATTRS)
end

local entry_keys = { tag = true, target = true, payload = true }
for _, k in ipairs(TARGET_ATTRS) do entry_keys[k] = true end

-- Returns the policy, a list of warnings, or nil and an error message.
-- `extra` names the fields hooks read (field = type); they are not
-- reported as unknown, and their types are checked like this module's.
function M.parse(meta, file, extra)
  local pol = { allowed = {}, settings = {} }
  local warnings = {}
  for k, v in pairs(meta) do
    local want = M.fields[k] or (extra and extra[k])
    if M.setting_of[k] then
      local val, why = M.setting(k, v)
      if val == nil then return nil, string.format("%s: %s %s", file, k, why) end
      pol.settings[k] = val
    elseif not want then
      warnings[#warnings + 1] = string.format("%s: unknown frontmatter field '%s' (ignored)", file, tostring(k))
    elseif want == "list" then
      -- A mapping is a table too; only a list (or nothing) will do.
      if type(v) ~= "table" or (next(v) ~= nil and v[1] == nil) then
        if k == "allowed_transitions" then
          return nil, string.format("%s: allowed_transitions must be a list of {tag: ..., target: ...}", file)
        end
        return nil, string.format("%s: frontmatter field '%s' must be a list, got %s", file, k,
          type(v) == "table" and "a mapping" or type(v))
      end
    elseif want == "launcher" then
      -- Where the state runs (raymond.launchers); whether the name is
      -- built in or configured is checked when the state runs, and by lint.
      local why = require("raymond.launchers").spec_error(v)
      if why then return nil, string.format("%s: %s", file, why) end
      pol.launcher = v
    elseif type(v) ~= want then
      return nil, string.format("%s: frontmatter field '%s' must be a %s, got %s", file, k, want, type(v))
    end
  end
  for i, e in ipairs(meta.allowed_transitions or {}) do
    if type(e) ~= "table" or type(e.tag) ~= "string" then
      return nil, string.format("%s: allowed_transitions[%d] needs a tag, e.g. {tag: goto, target: NEXT.md}", file, i)
    end
    local entry = { attrs = {} }
    for k, v in pairs(e) do
      -- A flow list or mapping ([1], {a: 1}) would become "table: 0x...".
      if type(v) == "table" then
        return nil, string.format("%s: allowed_transitions[%d] %s must be a string, got %s", file, i,
          tostring(k), (next(v) == nil or v[1] ~= nil) and "a list" or "a mapping")
      end
      if entry_keys[k] then entry[k] = trim(v) else entry.attrs[k] = tostring(v) end
    end
    if not tags.by_name[entry.tag] then
      local names = tags.names()
      return nil, string.format("%s: allowed_transitions[%d] has unknown tag '%s'; use %s or %s", file, i,
        entry.tag, table.concat(names, ", ", 1, #names - 1), names[#names])
    end
    for _, key in ipairs({ "target", table.unpack(TARGET_ATTRS) }) do
      -- A -workflow tag's target is a path to another workflow.
      local path = key == "target" and tags.by_name[entry.tag].body == "workflow"
      if entry[key] and not path and entry[key]:find("[/\\]") then
        return nil, string.format("%s: allowed_transitions[%d] %s '%s' contains a path separator; "
          .. "name a state file of the workflow", file, i, key, entry[key])
      end
    end
    pol.allowed[#pol.allowed + 1] = entry
  end
  if meta.model then pol.model = trim(meta.model):lower() end
  if meta.effort then
    pol.effort = trim(meta.effort):lower()
    if not M.efforts[pol.effort] then
      return nil, string.format("%s: effort '%s' is not one of low, medium, high, xhigh, max", file, meta.effort)
    end
  end
  if meta.timeout then
    if meta.timeout < 0 then return nil, string.format("%s: timeout must be 0 or more seconds", file) end
    pol.timeout = meta.timeout
  end
  pol.force_implicit = meta.force_implicit == true
  if pol.force_implicit and not M.implicit_entry(pol) then
    return nil, string.format("%s: %s", file, M.FORCE_IMPLICIT_NEEDS)
  end
  return pol, warnings
end

function M.has_policy(pol) return #pol.allowed > 0 end

M.FORCE_IMPLICIT_NEEDS = "force_implicit needs exactly one allowed transition, and a <result> "
  .. "with a fixed payload, e.g. {tag: result, payload: done}"

-- The one entry an implicit transition uses, if the policy has one: a
-- <result> only with a fixed payload (an empty one too), since without
-- one the reply would have to say what to return.
function M.implicit_entry(pol)
  local e = #pol.allowed == 1 and pol.allowed[1]
  -- An <ask> is never implicit: its question is the reply's to write.
  if e and e.tag ~= "ask" and (e.tag ~= "result" or e.payload ~= nil) then return e end
  return nil
end

-- A policy name matches a resolved name exactly, or by stem when the
-- policy leaves the extension out.
local function names_match(policy_name, resolved)
  if policy_name == nil then return true end
  if policy_name == resolved then return true end
  return not policy_name:find("%.%w+$") and resolved:gsub("%.%w+$", "") == policy_name
end

local function entry_allows(e, t, dir)
  if e.tag ~= t.name then return false end
  if t.name == "result" then
    return e.payload == nil or e.payload == trim(t.body)
  end
  -- A workflow path is compared as written: it names no state here.  An
  -- <ask>'s body is its question, which names nothing.
  local body = TAGS[t.name].body
  if body ~= "payload" then
    local target = body == "workflow" and trim(t.body) or resolve.target(dir, trim(t.body))
    if not target or not names_match(e.target, target) then return false end
  end
  for _, key in ipairs(TARGET_ATTRS) do
    if e[key] then
      local v = t.attrs[key] and resolve.target(dir, trim(t.attrs[key]))
      if not v or not names_match(e[key], v) then return false end
    end
  end
  return true
end

-- nil when every tag is allowed, else a message saying which is not.
function M.check(pol, tags, dir)
  for _, t in ipairs(tags) do
    local ok = false
    for _, e in ipairs(pol.allowed) do
      if entry_allows(e, t, dir) then ok = true break end
    end
    if not ok then
      return string.format("<%s>%s</%s> is not one of the allowed transitions", t.name,
        TAGS[t.name].body == "payload" and "..." or trim(t.body), t.name)
    end
  end
  return nil
end

-- The policy with each fixed payload's placeholders filled in by
-- `render`, so that the implicit result, the check of a written one and
-- the reminder all name the payload the state returns.
function M.rendered(pol, render)
  local copy = setmetatable({ allowed = {} }, { __index = pol })
  for i, e in ipairs(pol.allowed) do
    copy.allowed[i] = e
    if e.payload then
      copy.allowed[i] = setmetatable({ payload = trim(render(e.payload)) }, { __index = e })
    end
  end
  return copy
end

-- The implicit transition: the single entry as if it had been emitted,
-- with its input rendered by `render` (a payload is rendered beforehand,
-- by M.rendered).
function M.implicit(pol, dir, render)
  local e = M.implicit_entry(pol)
  local attrs = {}
  for k, v in pairs(e.attrs) do attrs[k] = render(v) end
  for _, k in ipairs(TARGET_ATTRS) do attrs[k] = e[k] end
  local body = e.tag == "result" and e.payload or e.target or ""
  return transition.decide({ { name = e.tag, body = body, attrs = attrs } }, dir)
end

local function show_entry(e)
  local attrs = {}
  for _, k in ipairs(TARGET_ATTRS) do
    if e[k] then attrs[#attrs + 1] = string.format('%s="%s"', k, e[k]) end
  end
  local keys = {}
  for k in pairs(e.attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = e.attrs[k]
    attrs[#attrs + 1] = v:find('"', 1, true) and string.format("%s='%s'", k, v) or string.format('%s="%s"', k, v)
  end
  local open = e.tag .. (#attrs > 0 and (" " .. table.concat(attrs, " ")) or "")
  local body = e.tag == "result" and (e.payload or "...") or (e.target or "TARGET")
  if e.tag == "ask" then body = "[the question for a person]" end
  return string.format("<%s>%s</%s>", open, body, e.tag)
end

function M.reminder(pol, why)
  local lines = { "", "---", "REMINDER: " .. why,
    "End your reply with exactly one of these tags (the names are literal, not placeholders):", "" }
  for i, e in ipairs(pol.allowed) do
    lines[#lines + 1] = string.format("%d. %s", i, show_entry(e))
  end
  lines[#lines + 1] = "---"
  return table.concat(lines, "\n")
end

return M
