-- raymond.lint: static checks of a workflow, one entry per check.
--
--   local diags = lint.run(wf)            -- wf from raymond.analyse.load
--   lint.sort(diags); lint.line(d, cwd); lint.summary(diags)
--
-- A diagnostic is { file =, line = (nil for the workflow as a whole),
-- severity = "error" | "warning" | "info", message =, check = }, `file`
-- absolute (a state inside an archive is ARCHIVE/NAME).
--
-- An entry of M.checks:
--   id        the check's name, shown as [id]; the original's names where
--             it had the check
--   severity  "error" (a run would fail, or do what the author cannot
--             have meant), "warning" (likely a mistake) or "info"
--   what, fix one sentence each, for docs/lint.md and `raymond help lint`
--   check(wf, add, g)  reports through add(file, line, message); `g` is
--             the workflow's graph (see graph() below)
--
-- A check reads only the model: nothing runs but the hook files' own
-- code, which a run loads the same way (raymond.analyse).  Where a fact
-- is only known when a state runs (a script's computed target, a hook's
-- computed decision) a check says nothing rather than guess.

local raymond = require("raymond")
local ask = require("raymond.ask")
local events = require("raymond.events")
local hooks = require("raymond.hooks")
local isolation = require("raymond.isolation")
local join = require("raymond.join")
local policy = require("raymond.policy")
local resolve = require("raymond.resolve")
local tags = require("raymond.tags")
local text = require("raymond.text")
local transition = require("raymond.transition")

local M = {}

M.SEVERITIES = { "error", "warning", "info" }

-- How much of a script its launcher header may take (raymond.states.script).
M.HEADER_MAX = 8192
M.RANK = { error = 1, warning = 2, info = 3 }

local trim = text.trim

-- ----------------------------------------------------------------- helpers

local function file_of(wf, st) return wf.path .. "/" .. st.name end

local function each_markdown(wf, fn)
  for _, st in ipairs(wf.states) do
    if st.kind == "markdown" then fn(st) end
  end
end

local function show_tag(name, body) return string.format("<%s>%s</%s>", name, body or "", name) end

-- Where an edge is written, for a message.
local function edge_where(e)
  if e.from == "on_max_visits" then return "on_max_visits" end
  if e.from == "evaluate" then
    return e.label == "default" and "evaluate: default" or ("evaluate route " .. e.label)
  end
  local prefix = e.from == "allowed_transitions" and "allowed_transitions: " or ""
  return prefix .. show_tag(e.tag, e.raw)
end

-- resolve's message without the workflow's folder, which the file names.
local function short(wf, msg)
  return (msg:gsub(" in " .. wf.path:gsub("%p", "%%%0"), "", 1))
end

local function ambiguous(msg) return msg and msg:find("ambiguous", 1, true) ~= nil end

-- The frontmatter without the fields a check of its own looks at.
local function without(meta, keys)
  local copy = {}
  for k, v in pairs(meta) do copy[k] = v end
  for k, ty in pairs(keys) do
    if type(copy[k]) == ty then copy[k] = nil end
  end
  return copy
end

local function hook_fields(wf) return wf.hooks.frontmatter or {} end

-- Words of `s` that name a state (file name or stem), in a set.
local function mentions(wf, s, into)
  for w in s:gmatch("[%w_%.%-]+") do
    if wf.by_name[w] then into[w] = true end
    for _, ext in ipairs({ ".md", ".sh" }) do
      if wf.by_name[w .. ext] then into[w .. ext] = true end
    end
  end
  return into
end

-- ------------------------------------------------------------------- graph

-- The states each state may lead to: every edge's target, return and
-- next; and, for a state whose targets are computed, every state its text
-- names.  `own` holds the edges an agent itself follows to its
-- <result> (a callee's or worker's start excluded): goto, reset, a call's
-- return, a fork's next, the hooks' routes.
local function graph(wf)
  local g = { succ = {}, own = {}, result = {}, unknown = {} }
  for _, st in ipairs(wf.states) do
    local succ, own = {}, {}
    for _, e in ipairs(st.edges) do
      if e.tag == "result" then g.result[st.name] = true end
      if e.target then succ[e.target] = true end
      if e.ret then succ[e.ret] = true; own[e.ret] = true end
      if e.next then succ[e.next] = true; own[e.next] = true end
      if e.timeout_next then succ[e.timeout_next] = true; own[e.timeout_next] = true end
      if e.join then succ[e.join] = true end
      if e.target and (e.tag == "goto" or e.tag == "reset") then own[e.target] = true end
    end
    -- Where the text cannot say (a computed target, a script that prints
    -- no tag of its own, a prompt with none), the state may lead anywhere
    -- it names and may well end.
    if st.dynamic or #st.edges == 0 then
      g.unknown[st.name] = true
      if st.source then mentions(wf, st.source, succ) end
    end
    g.succ[st.name], g.own[st.name] = succ, own
  end
  return g
end

-- The states reached from `roots` along `edges` (name -> set of names).
local function reach(roots, edges)
  local seen, queue = {}, {}
  for name in pairs(roots) do
    if not seen[name] then seen[name] = true; queue[#queue + 1] = name end
  end
  local i = 1
  while queue[i] do
    for next_name in pairs(edges[queue[i]] or {}) do
      if not seen[next_name] then seen[next_name] = true; queue[#queue + 1] = next_name end
    end
    i = i + 1
  end
  return seen
end

-- The states reachable from the entry and from the names the workflow's
-- own hook files write (a hook may send an agent there); nil without an
-- entry.
local function reachable(wf, g)
  if g.reachable ~= nil then return g.reachable or nil end
  if not wf.entry then
    g.reachable = false
    return nil
  end
  local roots = { [wf.entry] = true }
  for _, f in ipairs(wf.hooks.files) do
    if f.own then mentions(wf, f.source, roots) end
  end
  g.reachable = reach(roots, g.succ)
  return g.reachable
end

-- The states from which an agent can reach a <result> of its own.
local function ends(g)
  if g.ends then return g.ends end
  local back = {}
  for from, list in pairs(g.own) do
    for to in pairs(list) do
      back[to] = back[to] or {}
      back[to][from] = true
    end
  end
  local roots = {}
  for name in pairs(g.result) do roots[name] = true end
  for name in pairs(g.unknown) do roots[name] = true end
  g.ends = reach(roots, back)
  return g.ends
end

-- --------------------------------------------------------- literal hooks

-- The decision tables a handler of the workflow's own hook files returns
-- as literals (`return { continue = false, stopReason = "..." }`), each
-- with its line: evaluated with no globals and within a hook call's
-- limits, so any that reads a variable or calls a function is left out.
-- A handler holding a function of its own is left out whole, since its
-- returns may be that function's.
local function literal_decisions(wf, fn)
  local info = debug.getinfo(fn, "S")
  local f
  for _, hf in ipairs(wf.hooks.files) do
    if "@" .. hf.name == info.source then f = hf end
  end
  if not f or not f.own then return {} end
  local lines, n = {}, 0
  for line in (f.source .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if n >= info.linedefined and n <= info.lastlinedefined then lines[#lines + 1] = line end
  end
  local src = table.concat(lines, "\n")
  local found = {}
  if select(2, src:gsub("%f[%w_]function%f[^%w_]", "")) > 1 then return found, f end
  -- The lines may hold more than the function (`return { PreState =
  -- function() ... end }` on one line): keep its own text, from its
  -- `function` keyword (on its first line) to its last `end`.
  local first = src:find("%f[%w_]function%f[^%w_]")
  local last
  for pos in src:gmatch("%f[%w_]end%f[^%w_]()") do last = pos end
  if not first or not last or last < first then return found, f end
  src = src:sub(first, last - 1)
  for pos, ctor in src:gmatch("()%f[%w_]return%s*(%b{})") do
    local chunk = load("return " .. ctor, "=decision", "t", {})
    local ok, d = false, nil
    -- Within a hook call's limits: ("x"):rep(2^40) is an expression too.
    if chunk then ok, d = raymond.limited_call(chunk, nil, hooks.instructions, hooks.seconds) end
    if ok and type(d) == "table" then
      found[#found + 1] = { decision = d, line = info.linedefined + select(2, src:sub(1, pos):gsub("\n", "")) }
    end
  end
  return found, f
end

-- fn(file, event, decision, line, lenient) for each literal decision;
-- `lenient` when the file says on_error = "warn", so that a run reports
-- a bad decision of it and goes on.
local function each_literal_decision(wf, fn)
  if not wf.hooks.set then return end
  for _, file in ipairs(wf.hooks.set.files) do
    local names = {}
    for event in pairs(file.handlers) do names[#names + 1] = event end
    table.sort(names)
    for _, event in ipairs(names) do
      local list, f = literal_decisions(wf, file.handlers[event])
      for _, item in ipairs(list) do fn(f, event, item.decision, item.line, file.on_error == "warn") end
    end
  end
end

-- ------------------------------------------------------------ tool rules

-- The fields of the default hook hooks/guard.lua, whose `tools` function
-- raises on a bad pattern: lint asks it about each pattern alone.
local GUARD_FIELDS = { "deny_commands", "allow_commands", "protect_paths" }

local function guard_tools(wf)
  for _, f in ipairs(wf.hooks.set and wf.hooks.set.files or {}) do
    if f.name == "hooks/guard.lua" and type(f.tools) == "function" then return f.tools end
  end
  return nil
end

-- ---------------------------------------------------------------- models

-- Model names: the CLI's aliases, a name holding "claude" (claude-opus-4-1,
-- us.anthropic.claude-...) or a cloud provider's ARN.
local MODEL_ALIASES = { haiku = true, sonnet = true, opus = true, opusplan = true, default = true }

local function model_ok(m)
  m = trim(m):lower():gsub("%[1m%]$", "")
  if m == "" or m:find("[%s%c]") then return false end
  return MODEL_ALIASES[m] or m:find("claude", 1, true) ~= nil or m:sub(1, 4) == "arn:"
end

-- Variables a prompt sees (raymond.template): its own, and each name a
-- <fork> of the workflow gives its workers.
local function prompt_vars(wf)
  local vars = { workflow_id = true, agent_id = true, task_folder = true, input = true, result = true,
                 results = true }
  local fork = tags.by_name.fork
  for _, st in ipairs(wf.states) do
    for _, t in ipairs(st.tags) do
      if t.name == "fork" then
        for k in pairs(t.attrs) do
          if not fork.attrs[k] then vars[k] = true end
        end
      end
    end
    local fm = st.frontmatter
    for _, e in ipairs(fm and type(fm.allowed_transitions) == "table" and fm.allowed_transitions or {}) do
      if type(e) == "table" and e.tag == "fork" then
        for k in pairs(e) do vars[k] = true end
      end
    end
  end
  return vars
end

-- Attributes written on a tag (in the text, or an allowed_transitions
-- entry) that the tag does not take: cd and task apart, then any other;
-- and task= and worktree= values the tag does not take
-- (raymond.isolation).
local function bad_attrs(name, attrs, fn)
  local e = tags.by_name[name]
  local keys = {}
  for k in pairs(attrs) do keys[#keys + 1] = k end
  table.sort(keys)
  for _, k in ipairs(keys) do
    local v = attrs[k]
    if k == "task" and e.attrs.task and type(v) == "string" then
      local bad = isolation.attr_error({ name = name, attrs = { task = v } })
      if bad then fn("task-value", bad) end
    elseif k == "worktree" and e.attrs.worktree and type(v) == "string" then
      local bad = isolation.attr_error({ name = name, attrs = { worktree = v } })
      if bad then fn("worktree", bad) end
    end
    if not e.attrs[k] then
      if k == "cd" and e.forbid and e.forbid.cd then
        fn("cd", string.format("<%s> does not take cd=: %s", name, e.forbid.cd))
      elseif k == "cd" and not e.free then
        fn("cd", string.format("<%s> does not take cd=; only <reset>, <fork> and <function-workflow>, "
          .. "<fork-workflow>, <reset-workflow> move an agent", name))
      elseif k == "task" and not e.free then
        fn("task", string.format("<%s> does not take task=; only <reset> and <reset-workflow> "
          .. "(task=\"new\"), <fork> and <fork-workflow> (task=\"inherit\") choose a task folder", name))
      elseif e.free then
        local why = tags.var_error(k, {})
        if why then fn("other", string.format("<%s>: attribute %s", name, why)) end
      else
        fn("other", transition.unknown_attr(e, k))
      end
    end
  end
end

-- Attributes of an allowed_transitions entry, as raymond.policy reads them.
local ENTRY_KEYS = { tag = true, target = true, payload = true, ["return"] = true, next = true }

local function each_tag_attrs(st, fn)
  for _, t in ipairs(st.tags) do fn(t.name, t.attrs, t.line) end
  local fm = st.frontmatter
  if not fm or type(fm.allowed_transitions) ~= "table" then return end
  local line = st.fm_line("allowed_transitions")
  for _, e in ipairs(fm.allowed_transitions) do
    if type(e) == "table" and tags.by_name[e.tag] then
      local attrs = {}
      for k, v in pairs(e) do
        if not ENTRY_KEYS[k] then attrs[k] = v end
      end
      fn(e.tag, attrs, line)
    end
  end
end

-- What bad_attrs() finds in the tags of each state, found once for the
-- two checks that report it: { {kind, line, message} ... } by state.
local attr_findings = setmetatable({}, { __mode = "k" })

-- Reports the attributes of every tag of `wf` that bad_attrs() finds,
-- of kind `which` ("cd" or "other").
local function attr_check(wf, add, which)
  for _, st in ipairs(wf.states) do
    local found = attr_findings[st]
    if not found then
      found = {}
      each_tag_attrs(st, function(name, attrs, line)
        bad_attrs(name, attrs, function(kind, msg) found[#found + 1] = { kind, line, msg } end)
      end)
      attr_findings[st] = found
    end
    for _, f in ipairs(found) do
      if f[1] == which then add(file_of(wf, st), f[2], f[3]) end
    end
  end
end

-- The policy of a frontmatter as raymond.policy reads it, but for the
-- fields checks of their own look at, parsed once: the policy, or false
-- and the error.
local parsed_of = setmetatable({}, { __mode = "k" })

local function parsed(wf, fm)
  if parsed_of[fm] == nil then
    local rest = without(fm, { effort = "string", force_implicit = "boolean" })
    for _, s in ipairs(policy.SETTINGS) do rest[s.key] = nil end
    local pol, err = policy.parse(rest, "", hook_fields(wf))
    parsed_of[fm] = pol and { pol } or { false, err }
  end
  return table.unpack(parsed_of[fm])
end

-- The single entry of a policy, when it is to be taken without a tag.
local function implicit(wf, fm)
  local pol = parsed(wf, fm)
  return pol and policy.implicit_entry(pol)
end

-- ---------------------------------------------------------------- checks

M.checks = {
  -- Errors -------------------------------------------------------------
  {
    id = "no-entry-point", severity = "error",
    what = "the workflow has no entry state (1_START or START, .md or .sh)",
    fix = "name the first state 1_START.md, 1_START.sh, START.md or START.sh",
    check = function(wf, add)
      if wf.entry_error and wf.entry_error.check == "no-entry-point" then
        add(wf.path, nil, "no entry state: expected 1_START.md, 1_START.sh, START.md or START.sh")
      end
    end,
  },
  {
    id = "ambiguous-entry-point", severity = "error",
    what = "more than one of 1_START and START, or both NAME.md and NAME.sh of one of them, exist",
    fix = "keep one entry state and rename or remove the other",
    check = function(wf, add)
      if wf.entry_error and wf.entry_error.check == "ambiguous-entry-point" then
        add(wf.path, nil, short(wf, wf.entry_error.msg))
      end
    end,
  },
  {
    id = "frontmatter-parse-error", severity = "error",
    what = "a markdown state's frontmatter is not YAML raymond can read, or the file cannot be read",
    fix = "correct the YAML between the two --- lines (the message names the line)",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        if st.read_error then add(file_of(wf, st), nil, st.read_error) end
        -- The parser counts the file's lines, the opening --- as line 1.
        local n = st.fm_error and tonumber(st.fm_error:match("^frontmatter line (%d+)"))
        if st.fm_error then add(file_of(wf, st), n or 1, st.fm_error) end
      end
    end,
  },
  {
    id = "invalid-frontmatter", severity = "error",
    what = "a frontmatter field has the wrong type, or allowed_transitions is not a list of "
      .. "{tag: ..., target: ...} entries naming known tags",
    fix = "write the field as docs/authoring.md shows it",
    check = function(wf, add)
      each_markdown(wf, function(st)
        if not st.frontmatter then return end
        local _, err = parsed(wf, st.frontmatter)
        if type(err) == "string" then
          local field = err:match("field '([^']+)'") or (err:find("allowed_transitions", 1, true)
            and "allowed_transitions") or (err:find("timeout", 1, true) and "timeout")
          add(file_of(wf, st), field and st.fm_line(field) or 1, (err:gsub("^: ", "")))
        end
      end)
    end,
  },
  {
    id = "invalid-model", severity = "error",
    what = "model is not haiku, sonnet, opus, a full model id (containing \"claude\") or an ARN",
    fix = "correct the name, e.g. model: sonnet",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local m = st.frontmatter and st.frontmatter.model
        if type(m) == "string" and not model_ok(m) then
          add(file_of(wf, st), st.fm_line("model"), string.format(
            "model '%s' is not haiku, sonnet, opus or a full model id such as claude-sonnet-4-5", m))
        end
      end)
    end,
  },
  {
    id = "invalid-effort", severity = "error",
    what = "effort is not low, medium, high, xhigh or max",
    fix = "use one of those",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local v = st.frontmatter and st.frontmatter.effort
        if type(v) == "string" and not policy.efforts[trim(v):lower()] then
          add(file_of(wf, st), st.fm_line("effort"),
            string.format("effort '%s' is not one of low, medium, high, xhigh, max", v))
        end
      end)
    end,
  },
  {
    id = "invalid-agent-setting", severity = "error",
    what = "allowed_tools or disallowed_tools names a tool Claude Code does not have, or is not a list "
      .. "of tool rules; permission_mode is not a mode of the CLI; max_turns is not a whole number from 1; "
      .. "append_system_prompt is not text; or mcp_config is not a path inside the workflow",
    fix = "write the setting as docs/authoring.md shows it (the message names the tools or modes there are)",
    check = function(wf, add)
      each_markdown(wf, function(st)
        for _, s in ipairs(policy.SETTINGS) do
          local v = st.frontmatter and st.frontmatter[s.key]
          local why = v ~= nil and select(2, policy.setting(s.key, v))
          if why then add(file_of(wf, st), st.fm_line(s.key), s.key .. " " .. why) end
        end
      end)
    end,
  },
  {
    id = "invalid-mcp-config", severity = "error",
    what = "mcp_config names no file of the workflow, or one that is not JSON with an mcpServers object",
    fix = "correct the path (relative to the state's folder) or the file",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local path = st.frontmatter and policy.setting("mcp_config", st.frontmatter.mcp_config)
        local why = path and select(2, policy.mcp_text(wf.scope, path))
        if why then add(file_of(wf, st), st.fm_line("mcp_config"), "mcp_config " .. why) end
      end)
    end,
  },
  {
    id = "force-implicit-invalid", severity = "error",
    what = "force_implicit: true without exactly one allowed transition (a <result> with a fixed payload)",
    fix = "leave one allowed transition (a <result> needs a payload), or remove force_implicit",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local fm = st.frontmatter
        if fm and fm.force_implicit == true and not implicit(wf, fm) then
          add(file_of(wf, st), st.fm_line("force_implicit"), policy.FORCE_IMPLICIT_NEEDS)
        end
      end)
    end,
  },
  {
    id = "missing-target", severity = "error",
    what = "a tag, an allowed_transitions entry or a hook route (on_max_visits, evaluate) names a "
      .. "state that is not in the workflow; or a -workflow tag's path leads to no workflow (no such "
      .. "folder, archive or state file, or one without an entry state)",
    fix = "correct the name, or add the state (the path is relative to the workflow's folder)",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        for _, e in ipairs(st.edges) do
          if e.error and not ambiguous(e.error) then
            add(file_of(wf, st), e.line, edge_where(e) .. ": " .. short(wf, e.error))
          end
          if e.next_error and not ambiguous(e.next_error) then
            add(file_of(wf, st), e.line, string.format("<%s next=\"%s\">: %s", e.tag, e.raw_next,
              short(wf, e.next_error)))
          end
          if e.timeout_next_error and not ambiguous(e.timeout_next_error) then
            add(file_of(wf, st), e.line, string.format("<%s timeout_next=\"%s\">: %s", e.tag,
              e.raw_timeout_next, short(wf, e.timeout_next_error)))
          end
          if e.join_error and not ambiguous(e.join_error) then
            add(file_of(wf, st), e.line, string.format("<%s join=\"%s\">: %s", e.tag, e.raw_join,
              short(wf, e.join_error)))
          end
        end
      end
    end,
  },
  {
    id = "missing-return", severity = "error",
    what = "a <call> or <function> has no return=, or its return= names no state of the workflow",
    fix = "add return=\"STATE\" naming where its <result> goes",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        for _, t in ipairs(st.tags) do
          if (tags.by_name[t.name].requires or {})["return"] and t.attrs["return"] == nil then
            add(file_of(wf, st), t.line, string.format("<%s>%s</%s> needs return=\"STATE\" (where its "
              .. "<result> goes)", t.name, trim(t.body), t.name))
          end
        end
        for _, e in ipairs(st.edges) do
          if e.ret_error and not ambiguous(e.ret_error) then
            add(file_of(wf, st), e.line, string.format("<%s return=\"%s\">: %s", e.tag, e.raw_ret,
              short(wf, e.ret_error)))
          end
        end
      end
    end,
  },
  {
    id = "missing-fork-next", severity = "error",
    what = "a state writes <fork> or <fork-workflow> tags, none with next=, and no <goto> beside them: "
      .. "the parent has nowhere to go",
    fix = "give the <fork> next=\"STATE\", or write a <goto> beside it",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        local first, has_next, has_goto
        for _, t in ipairs(st.tags) do
          if t.name == "fork" or t.name == "fork-workflow" then
            first = first or t
            has_next = has_next or t.attrs.next ~= nil
          end
          has_goto = has_goto or t.name == "goto"
        end
        local fm = st.frontmatter
        local only = fm and implicit(wf, fm)
        if only and only.tag == "fork" and not only.next then
          add(file_of(wf, st), st.fm_line("allowed_transitions"), "the one allowed <fork> has no next: "
            .. "taken without a tag, it leaves the parent nowhere to go")
        end
        if first and not has_next and not has_goto then
          add(file_of(wf, st), first.line, string.format("<%s> without next=\"STATE\" and no <goto> beside "
            .. "it: the parent has nowhere to go", first.name))
        end
      end
    end,
  },
  {
    id = "missing-ask-next", severity = "error",
    what = "an <ask> (a tag, or an allowed_transitions entry) has no next=, so its answer has nowhere to go",
    fix = "give the <ask> next=\"STATE\", the state that reads the answer",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        for _, e in ipairs(st.edges) do
          if e.tag == "ask" and e.raw_next == nil and not e.dynamic then
            add(file_of(wf, st), e.line, (e.from == "allowed_transitions" and "allowed_transitions: " or "")
              .. "<ask> without next=\"STATE\": the answer has nowhere to go")
          end
        end
      end
    end,
  },
  {
    id = "invalid-ask-timeout", severity = "error",
    what = "an <ask>'s timeout= is not a duration (30s, 15m, 48h, 2d), or it has timeout_next= without timeout=",
    fix = "write timeout=\"48h\" (a whole number and s, m, h or d) beside timeout_next",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        each_tag_attrs(st, function(name, attrs, line)
          if name ~= "ask" then return end
          local why
          if attrs.timeout ~= nil and not tostring(attrs.timeout):find("[$`{]") then
            why = select(2, ask.duration(attrs.timeout))
          end
          why = why or ask.check({ timeout = attrs.timeout, timeout_next = attrs.timeout_next })
          if why then add(file_of(wf, st), line, "<ask timeout=\"" .. tostring(attrs.timeout or "") .. "\">: " .. why) end
        end)
      end
    end,
  },
  {
    id = "ambiguous-state-resolution", severity = "error",
    what = "a name without extension matches both NAME.md and NAME.sh",
    fix = "write the extension (NAME.md or NAME.sh), or remove one of the files",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        for _, e in ipairs(st.edges) do
          for _, msg in ipairs({ e.error or false, e.ret_error or false, e.next_error or false,
                                 e.timeout_next_error or false, e.join_error or false }) do
            if ambiguous(msg) then add(file_of(wf, st), e.line, short(wf, msg)) end
          end
        end
      end
    end,
  },
  {
    id = "unsupported-cd-attribute", severity = "error",
    what = "cd= on a tag other than <reset>, <fork>, <function-workflow>, <fork-workflow> and "
      .. "<reset-workflow>, which alone move an agent (on <call-workflow> the message says why)",
    fix = "use <reset cd=\"DIR\">, or remove cd=",
    check = function(wf, add) attr_check(wf, add, "cd") end,
  },
  {
    id = "unsupported-task-attribute", severity = "error",
    what = "task= on a tag other than <reset>, <reset-workflow>, <fork> and <fork-workflow>, which alone "
      .. "choose a task folder",
    fix = "use <reset task=\"new\"> or <fork task=\"inherit\">, or remove task=",
    check = function(wf, add) attr_check(wf, add, "task") end,
  },
  {
    id = "invalid-task-value", severity = "error",
    what = "task= with a value its tag does not take: <reset> and <reset-workflow> take only \"new\", <fork> "
      .. "and <fork-workflow> only \"inherit\"",
    fix = "write task=\"new\" on <reset> or task=\"inherit\" on <fork>, or remove task=",
    check = function(wf, add) attr_check(wf, add, "task-value") end,
  },
  {
    id = "invalid-worktree-name", severity = "error",
    what = "worktree= on <reset> or <fork> is not a worktree name (1 to 64 letters, digits, _ or -, "
      .. "starting with a letter or digit)",
    fix = "write a short plain name, e.g. worktree=\"feature-x\"",
    check = function(wf, add) attr_check(wf, add, "worktree") end,
  },
  {
    id = "unknown-attribute", severity = "error",
    what = "a tag has an attribute it does not take (a <fork>'s own: a name that cannot be a worker "
      .. "variable)",
    fix = "remove or rename the attribute (docs/protocol.md lists each tag's)",
    check = function(wf, add) attr_check(wf, add, "other") end,
  },
  {
    id = "unknown-launcher", severity = "error",
    what = "a state's launcher (frontmatter launcher:, a YAML state's launcher:, a script's header "
      .. "block) or a <fork launcher=> names no launcher built in (local, slurm, ssh, kubernetes) or "
      .. "defined under launchers: in the config; or a script's header block is not a launcher",
    fix = "correct the name, or define the launcher in the config (docs/cluster.md)",
    check = function(wf, add)
      local launchers = require("raymond.launchers")
      local function check_name(st, v, line)
        local name = launchers.name_of(v)
        if type(name) == "string" and not launchers.known(name, wf.launchers or {}) then
          add(file_of(wf, st), line, string.format("launcher %s: %s", name, launchers.unknown_text(wf.launchers or {})))
        end
      end
      for _, st in ipairs(wf.states) do
        if st.kind == "markdown" and st.frontmatter and st.frontmatter.launcher ~= nil then
          check_name(st, st.frontmatter.launcher, st.fm_line("launcher"))
        elseif st.kind == "script" and st.source then
          local own = wf.scope.launcher_of and wf.scope:launcher_of(st.name)
          local v, err = own, nil
          if own == nil then v, err = launchers.script_header(st.source) end
          local line = own == nil and st.source:sub(1, M.HEADER_MAX):find("\n#[^\n]*launcher:") or nil
          line = line and st.line_of(line + 1) or nil
          if err then add(file_of(wf, st), line or 2, err) else check_name(st, v, line) end
        end
        each_tag_attrs(st, function(_, attrs, line)
          if attrs.launcher then check_name(st, attrs.launcher, line) end
        end)
      end
    end,
  },
  {
    id = "invalid-join", severity = "error",
    what = "a <fork> has wait= without join=, or a wait= that is not all, first or a number",
    fix = "write join=\"STATE\" beside wait=, and wait=\"all\", \"first\" or \"N\" (docs/protocol.md, \"Joins\")",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        each_tag_attrs(st, function(name, attrs, line)
          local wait = name == "fork" and attrs.wait
          if type(wait) ~= "string" or (st.kind == "script" and wait:find("[$`\\]")) then return end
          if attrs.join == nil then
            add(file_of(wf, st), line, string.format("<fork wait=\"%s\"> has no join=\"STATE\"; wait= says "
              .. "how many workers a join waits for", wait))
          else
            -- The number of workers is known when the reply is: here
            -- only the form of the policy is.
            local _, err = join.form(wait)
            if err then add(file_of(wf, st), line, err) end
          end
        end)
      end
    end,
  },
  {
    id = "invalid-hook-field", severity = "error",
    what = "evaluate: lacks a prompt or routes, or a route or its default is not a state name",
    fix = "write evaluate: with prompt:, routes: (ANSWER: STATE) and optionally default: STATE",
    check = function(wf, add)
      if wf.no_default_hooks then return end
      each_markdown(wf, function(st)
        local ev = st.frontmatter and st.frontmatter.evaluate
        if type(ev) ~= "table" then return end
        local line = st.fm_line("evaluate")
        if type(ev.prompt) ~= "string" or type(ev.routes) ~= "table" then
          add(file_of(wf, st), line, "evaluate needs a prompt and routes (ANSWER: STATE)")
          return
        end
        local keys = {}
        for k in pairs(ev.routes) do keys[#keys + 1] = tostring(k) end
        table.sort(keys)
        for _, k in ipairs(keys) do
          local v = ev.routes[k]
          if type(v) ~= "string" then
            add(file_of(wf, st), line, string.format("evaluate route %s must name a state, got %s", k, type(v)))
          end
        end
        if ev.default ~= nil and type(ev.default) ~= "string" then
          add(file_of(wf, st), line, "evaluate: default must name a state, got " .. type(ev.default))
        end
      end)
    end,
  },
  {
    id = "hook-load-error", severity = "error",
    what = "a hook file of the workflow does not load: a syntax error, an error while loading, a "
      .. "limit passed, or not a table of handlers",
    fix = "correct the file (the message names the line); see docs/hooks.md",
    check = function(wf, add)
      local e = wf.hooks.error
      -- The first line: a traceback says where in raymond, not in the file.
      -- Only the file's own name gives the line: the message may also
      -- name a line of raymond's (lua/raymond/hooks.lua:175:).
      if not e then return end
      local msg = e.msg:match("^[^\n]*")
      add(e.file, tonumber(msg:match(e.file:gsub("%p", "%%%0") .. ":(%d+):")), msg)
    end,
  },
  {
    id = "hook-decision", severity = "error",
    what = "a handler returns a literal decision with a field of the wrong type or a bad value, a transition "
      .. "without a tag or to a state the workflow lacks, or an mcpConfig file the workflow lacks",
    fix = "correct the decision (docs/hooks.md lists each event's fields)",
    check = function(wf, add)
      each_literal_decision(wf, function(f, event, d, line, lenient)
        if lenient then return end
        local where = f.name .. ":" .. line
        local ok, err = events.check(event, d, where)
        if not ok then
          add(f.name, line, (err:gsub("^" .. where:gsub("%p", "%%%0") .. ": ", "")))
          return
        end
        local tr = d.transition
        if type(tr) == "table" and type(tr.target) == "string" and not tr.target:find("[$`{]") then
          local _, rerr = resolve.target(wf.lookup, trim(tr.target))
          if rerr then add(f.name, line, event .. " decision 'transition': " .. short(wf, rerr)) end
        end
        if type(d.mcpConfig) == "string" then
          local _, mcp_err = policy.mcp_text(wf.scope, policy.setting("mcp_config", d.mcpConfig))
          if mcp_err then add(f.name, line, event .. " decision field 'mcpConfig' " .. mcp_err) end
        end
      end)
    end,
  },

  {
    id = "invalid-guard-pattern", severity = "error",
    what = "a deny_commands, allow_commands or protect_paths entry is not a string, is empty, or can never "
      .. "match",
    fix = "write one pattern per command or path, as docs/hooks.md shows (\"git push*\", \"secrets/**\")",
    check = function(wf, add)
      local tools = guard_tools(wf)
      if not tools then return end
      each_markdown(wf, function(st)
        local fm = st.frontmatter or {}
        for _, field in ipairs(GUARD_FIELDS) do
          -- A value that is no list is invalid-frontmatter's to report.
          for _, p in ipairs(type(fm[field]) == "table" and fm[field] or {}) do
            local ok, err = raymond.limited_call(tools, { state = st.name, frontmatter = { [field] = { p } } },
              hooks.instructions, hooks.seconds)
            if not ok then
              -- The first line: the rest is a traceback through the hook.
              local msg = tostring(err):match("^[^\n]*"):gsub("^" .. st.name:gsub("%p", "%%%0") .. ": ", "")
              add(file_of(wf, st), st.fm_line(field), msg)
            end
          end
        end
      end)
    end,
  },

  -- Warnings -----------------------------------------------------------
  {
    id = "fork-next-mismatch", severity = "warning",
    what = "<fork> tags of one state give different next= states",
    fix = "give every <fork> of the state the same next=",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        local first
        for _, t in ipairs(st.tags) do
          local n = t.name == "fork" and t.attrs.next and trim(t.attrs.next)
          if n and first and n ~= first.attrs.next then
            add(file_of(wf, st), t.line, string.format("<fork next=\"%s\"> differs from next=\"%s\" on line "
              .. "%d; all of a state's forks must agree", n, first.attrs.next, first.line))
            break
          end
          if n then first = first or t end
        end
      end
    end,
  },
  {
    id = "join-mismatch", severity = "warning",
    what = "<fork> tags of one state join different states, or some join and some do not",
    fix = "give every <fork> of one reply the same join= (a reply with a mix is refused when it runs)",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        local first
        for _, t in ipairs(st.tags) do
          if t.name == "fork" then
            local j = t.attrs.join and trim(t.attrs.join) or ""
            if first and j ~= first.j then
              add(file_of(wf, st), t.line, string.format("<fork%s> differs from the <fork%s> on line %d; "
                .. "the forks of one reply must all join the same state", j ~= "" and (" join=\"" .. j .. "\"") or "",
                first.j ~= "" and (" join=\"" .. first.j .. "\"") or "", first.line))
              break
            end
            first = first or { j = j, line = t.line }
          end
        end
      end
    end,
  },
  {
    id = "unused-allowed-transition", severity = "warning",
    what = "with two or more allowed transitions, one's target is not named in the prompt",
    fix = "tell the model when to take it (name the state in the prompt), or remove the entry",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local fm = st.frontmatter
        local list = fm and type(fm.allowed_transitions) == "table" and fm.allowed_transitions or {}
        if #list < 2 then return end
        for _, e in ipairs(list) do
          local target = type(e) == "table" and e.tag ~= "result" and type(e.target) == "string" and trim(e.target)
          if target and target ~= "" then
            local stem = target:gsub("%.%w+$", "")
            if not st.body:find(target, 1, true) and not st.body:find(stem, 1, true) then
              add(file_of(wf, st), st.fm_line("allowed_transitions"), string.format(
                "allowed_transitions lists %s, which the prompt never names", target))
            end
          end
        end
      end)
    end,
  },
  {
    id = "unreachable-state", severity = "warning",
    what = "no path of transitions from the entry leads to the state",
    fix = "add a transition to it, or remove the file",
    check = function(wf, add, g)
      local seen = reachable(wf, g)
      if not seen then return end
      for _, st in ipairs(wf.states) do
        if not seen[st.name] then
          add(file_of(wf, st), nil, st.name .. " is unreachable: no transition from " .. wf.entry .. " leads to it")
        end
      end
    end,
  },
  {
    id = "dead-end-state", severity = "warning",
    what = "a markdown state shows no transition at all: no tag in its prompt, no allowed_transitions, "
      .. "no evaluate or on_max_visits route",
    fix = "end the prompt with the tag to use, e.g. <goto>NEXT</goto> or <result>...</result>",
    check = function(wf, add)
      each_markdown(wf, function(st)
        if #st.edges == 0 and st.source and not st.fm_error then
          add(file_of(wf, st), nil, st.name .. " shows no transition: a reply has no tag to end with")
        end
      end)
    end,
  },
  {
    id = "call-without-result-path", severity = "warning",
    what = "a <call> or <function> names a state from which no <result> can be reached, so it never returns",
    fix = "make the callee's path end with <result>",
    check = function(wf, add, g)
      local can_end = ends(g)
      for _, st in ipairs(wf.states) do
        for _, e in ipairs(st.edges) do
          if (e.tag == "call" or e.tag == "function") and e.target and not can_end[e.target] then
            add(file_of(wf, st), e.line, string.format("<%s> runs %s, from which no <result> can be "
              .. "reached: it never returns", e.tag, e.target))
          end
        end
      end
    end,
  },
  {
    id = "no-result-path", severity = "warning",
    what = "no <result> can be reached from a reachable state: an agent there never finishes",
    fix = "give the loop a way out that ends with <result> (or on_max_visits to a state that does)",
    check = function(wf, add, g)
      local can_end, seen = ends(g), reachable(wf, g) or {}
      for _, st in ipairs(wf.states) do
        if (seen[st.name] or not wf.entry) and not can_end[st.name] then
          add(file_of(wf, st), nil, "no <result> can be reached from " .. st.name
            .. ": an agent here never finishes")
        end
      end
    end,
  },
  {
    id = "unknown-field", severity = "warning",
    what = "a frontmatter field neither raymond nor a loaded hook reads (a typo?); it is ignored",
    fix = "correct the name, or declare it in the hook that reads it (frontmatter = {...})",
    check = function(wf, add)
      local known = hook_fields(wf)
      each_markdown(wf, function(st)
        local keys = {}
        for k in pairs(st.frontmatter or {}) do
          if not policy.fields[k] and not known[k] then keys[#keys + 1] = tostring(k) end
        end
        table.sort(keys)
        for _, k in ipairs(keys) do
          add(file_of(wf, st), st.fm_line(k), string.format("unknown frontmatter field '%s' (ignored)", k))
        end
      end)
    end,
  },
  {
    id = "hook-field-ignored", severity = "warning",
    what = "on_max_visits without max_visits, which alone makes the route count",
    fix = "add max_visits: N, or remove on_max_visits",
    check = function(wf, add)
      if wf.no_default_hooks then return end
      each_markdown(wf, function(st)
        local fm = st.frontmatter
        if fm and fm.on_max_visits ~= nil and fm.max_visits == nil then
          add(file_of(wf, st), st.fm_line("on_max_visits"), "on_max_visits without max_visits is never used")
        end
      end)
    end,
  },
  {
    id = "hook-unknown-event", severity = "warning",
    what = "a hook file has a handler for an event raymond does not have (a typo?); it never runs",
    fix = "use an event of docs/hooks.md, e.g. PreTransition",
    check = function(wf, add)
      for _, w in ipairs(wf.hooks.warnings) do add(w.file, nil, (w.msg:gsub("^hook file [^:]*: ", ""))) end
    end,
  },
  {
    id = "hook-decision-field", severity = "warning",
    what = "a handler returns a literal decision with a field the event does not take, or a bad one "
      .. "in a file with on_error = \"warn\"; it is ignored",
    fix = "remove the field, or handle the event that takes it (docs/hooks.md)",
    check = function(wf, add)
      each_literal_decision(wf, function(f, event, d, line, lenient)
        local where = f.name .. ":" .. line
        local ok, warnings = events.check(event, d, where)
        if not ok then
          if not lenient then return end
          warnings = { warnings .. " (the file says on_error = \"warn\": ignored)" }
        end
        for _, w in ipairs(warnings) do
          add(f.name, line, (w:gsub("^" .. where:gsub("%p", "%%%0") .. ": ", "")))
        end
      end)
    end,
  },
  {
    id = "unset-placeholder", severity = "warning",
    what = "a prompt has a {{placeholder}} nothing sets; the model sees it as written",
    fix = "use {{input}}, {{result}}, {{workflow_id}}, {{agent_id}} or a variable a <fork> gives",
    check = function(wf, add)
      local vars = prompt_vars(wf)
      each_markdown(wf, function(st)
        if not st.body then return end
        local reported = {}
        local pos = st.body:find("{{", 1, true)
        while pos do
          local name = st.body:match("^([%w_]+)}}", pos + 2)
          if name and not vars[name] and not reported[name] then
            reported[name] = true
            add(file_of(wf, st), st.line_of(st.body_pos + pos - 1),
              string.format("{{%s}} is set by nothing: the model sees it as written", name))
          end
          pos = st.body:find("{{", pos + 2, true)
        end
      end)
    end,
  },

  -- Info ---------------------------------------------------------------
  {
    id = "implicit-transition", severity = "info",
    what = "one allowed transition (a <result> with a fixed payload): taken when the reply has no tag",
    fix = "nothing to fix; set force_implicit: true to skip reading the reply's tags",
    check = function(wf, add)
      each_markdown(wf, function(st)
        local fm = st.frontmatter
        local only = fm and fm.force_implicit ~= true and implicit(wf, fm)
        if only then
          add(file_of(wf, st), st.fm_line("allowed_transitions"), string.format("the one allowed transition "
            .. "(%s) is taken when the reply has no tag",
            show_tag(only.tag, only.tag == "result" and only.payload or only.target)))
        end
      end)
    end,
  },
  {
    id = "script-state-no-static-analysis", severity = "info",
    what = "a script's transitions are decided when it runs; lint reads only the tags written in it",
    fix = "nothing to fix",
    check = function(wf, add)
      for _, st in ipairs(wf.states) do
        if st.kind == "script" then
          add(file_of(wf, st), nil, st.name .. " is a script: lint read only the tags written literally in it")
        end
      end
    end,
  },
  {
    id = "script-not-executable", severity = "info",
    what = "a script has no run bit; raymond runs it with bash, so it runs all the same",
    fix = "chmod +x it to run it by hand too",
    check = function(wf, add)
      if wf.kind ~= "dir" then return end
      for _, st in ipairs(wf.states) do
        if st.kind == "script" then
          local _, _, _, mode = raymond.stat(file_of(wf, st))
          if mode and mode & 64 == 0 then
            add(file_of(wf, st), nil, st.name .. " has no run bit; raymond runs it with bash, so this "
              .. "matters only to run it by hand")
          end
        end
      end
    end,
  },
}

M.by_id = {}
for _, c in ipairs(M.checks) do M.by_id[c.id] = c end

-- ------------------------------------------------------------------ run

-- Every diagnostic of `wf`, unsorted; with `only` = "error", the error
-- checks alone (before a run).
function M.run(wf, only)
  local diags = {}
  local g = graph(wf)
  for _, c in ipairs(M.checks) do
    if not only or M.RANK[c.severity] <= M.RANK[only] then
      c.check(wf, function(file, line, message)
        local d = { file = file, line = line, severity = c.severity, message = message, check = c.id }
        diags[#diags + 1] = d
        -- A YAML workflow's state is a part of the file: the finding names
        -- the file and its line, and keeps the state for reachable_only.
        local name = file:sub(#wf.path + 2)
        if wf.kind == "yaml" and file:sub(1, #wf.path + 1) == wf.path .. "/" and wf.by_name[name] then
          d.file, d.line, d.state = wf.path, wf.scope:line_of(name, line), name
        end
      end, g)
    end
  end
  return diags
end

-- Those a run of `wf` can meet: none in a state no transition from the
-- entry reaches (a README.md, a state kept for later), which a run never
-- loads.
function M.reachable_only(wf, diags)
  local seen = reachable(wf, graph(wf))
  if not seen then return diags end
  local out = {}
  for _, d in ipairs(diags) do
    local name = d.state or d.file:sub(#wf.path + 2)
    if not d.state and d.file:sub(1, #wf.path + 1) ~= wf.path .. "/" or not wf.by_name[name] or seen[name] then
      out[#out + 1] = d
    end
  end
  return out
end

-- By file, then line (the workflow's own lines first), then severity and check.
function M.sort(diags)
  table.sort(diags, function(a, b)
    if a.file ~= b.file then return a.file < b.file end
    if (a.line or 0) ~= (b.line or 0) then return (a.line or 0) < (b.line or 0) end
    if a.severity ~= b.severity then return M.RANK[a.severity] < M.RANK[b.severity] end
    if a.check ~= b.check then return a.check < b.check end
    return a.message < b.message
  end)
  return diags
end

-- Those at `level` or above.
function M.filter(diags, level)
  local out = {}
  for _, d in ipairs(diags) do
    if M.RANK[d.severity] <= M.RANK[level] then out[#out + 1] = d end
  end
  return out
end

-- `file:line: severity: message [check]`, the file relative to `cwd`.
function M.line(d, rel)
  local where = rel(d.file) .. (d.line and (":" .. d.line) or "")
  return string.format("%s: %s: %s [%s]", where, d.severity, d.message, d.check)
end

-- "2 errors, 1 warning, 3 info", or "No issues found."
function M.summary(diags)
  local n = { error = 0, warning = 0, info = 0 }
  for _, d in ipairs(diags) do n[d.severity] = n[d.severity] + 1 end
  local parts = {}
  if n.error > 0 then parts[#parts + 1] = n.error .. (n.error == 1 and " error" or " errors") end
  if n.warning > 0 then parts[#parts + 1] = n.warning .. (n.warning == 1 and " warning" or " warnings") end
  if n.info > 0 then parts[#parts + 1] = n.info .. " info" end
  if #parts == 0 then return "No issues found." end
  return table.concat(parts, ", ")
end

function M.errors(diags)
  local n = 0
  for _, d in ipairs(diags) do
    if d.severity == "error" then n = n + 1 end
  end
  return n
end

return M
