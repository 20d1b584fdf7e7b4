-- The Lua side of the tool policy: which files want which tool events in a
-- state (raymond.hooks.tool_plan), the settings a Claude turn gets for
-- them (raymond.bridge.settings), how decisions of several files merge
-- (a deny wins), and the shape an updatedInput must have.

local T = require("testing")
local raymond = require("raymond")
local bridge = require("raymond.bridge")
local hooks = require("raymond.hooks")
local cjson = raymond.cjson

local function load(files)
  local list = {}
  for i, src in ipairs(files) do list[i] = { name = "h" .. i .. ".lua", source = src } end
  return hooks.load(list)
end

T.test("tools patterns: names, alternatives and prefixes pass; anything else names the file and entry", function()
  T.same(hooks.tool_pattern("Bash"), { "Bash" }, "a name")
  T.same(hooks.tool_pattern("Edit|Write"), { "Edit", "Write" }, "alternatives")
  T.same(hooks.tool_pattern("mcp__github__*"), { "mcp__github__*" }, "a prefix")
  T.same(hooks.tool_pattern("*"), { "*" }, "every tool")
  T.same(hooks.tool_pattern("mcp__my-server__*"), { "mcp__my-server__*" }, "an MCP server with a hyphen")
  for _, bad in ipairs({ "Ba(sh", "", "Edit||Write", "Bash(git *)", "*Bash", "a b" }) do
    local alts, err = hooks.tool_pattern(bad)
    T.eq(alts, nil, bad)
    T.has(err, "is not a valid tool pattern", bad)
  end
  local set, err = load({ 'return { tools = { "Bash", "Ed(it" }, PreToolUse = function() end }' })
  T.eq(set, nil, "a bad pattern refuses the file")
  T.has(err, "hook file h1.lua:1: tools[2] \"Ed(it\" is not a valid tool pattern", "message")
  set, err = load({ 'return { tools = "Bash", PreToolUse = function() end }' })
  T.eq(set, nil, "a string is not a list")
  T.has(err, "tools must be a list of tool patterns or a function, got string", "message")
end)

T.test("a state gets the tool events its files want, by their tools lists or functions", function()
  local set = assert(load({
    'return { PreToolUse = function() end }',
    'return { tools = { "Bash" }, PreToolUse = function() end, PostToolUse = function() end }',
    [[return { tools = function(ev) if ev.frontmatter.guard then return { "Edit|Write" } end end,
               PreToolUse = function() end }]],
    'return { PreTransition = function() end }',
  }))
  local plan = assert(hooks.tool_plan(set, { frontmatter = {} }))
  T.eq(#plan.PreToolUse, 2, "the third file wants nothing in this state")
  T.same(plan.PreToolUse[1].tools, { "*" }, "no tools key: every tool")
  T.same(plan.PreToolUse[2].tools, { "Bash" }, "a list")
  T.eq(#plan.PostToolUse, 1, "PostToolUse")
  plan = assert(hooks.tool_plan(set, { frontmatter = { guard = true } }))
  T.same(plan.PreToolUse[3].tools, { "Edit", "Write" }, "the function's answer")
  T.eq(hooks.tool_plan(assert(load({ 'return { PreTransition = function() end }' })), {}), nil,
    "no tool hooks: no plan at all")
  T.eq(hooks.tool_plan(assert(load({ 'return { tools = {}, PreToolUse = function() end }' })), {}), nil,
    "an empty tools list wants nothing")
end)

T.test("a tools function that raises fails the plan, or with on_error = warn asks about every tool", function()
  local set = assert(load({ 'return { tools = function() error("boom") end, PreToolUse = function() end }' }))
  local plan, err = hooks.tool_plan(set, { frontmatter = {} })
  T.eq(plan, nil, "no plan")
  T.has(err, "hook h1.lua failed in its tools function", "message")
  T.has(err, "boom", "the error")
  set = assert(load({ [[return { on_error = "warn", tools = function() return { "Ba d" } end,
                                 PreToolUse = function() end }]] }))
  plan = assert(hooks.tool_plan(set, { frontmatter = {} }))
  T.same(plan.PreToolUse[1].tools, { "*" }, "every tool")
end)

T.test("the settings document: one command hook per event, the union of the tools as a matcher", function()
  local set = assert(load({
    'return { tools = { "Bash", "Write" }, PreToolUse = function() end, Stop = function() end }',
    'return { on_error = "warn", tools = { "Edit|Bash" }, PreToolUse = function() end }',
    'return { on_error = "warn", tools = { "mcp__gh__*" }, PostToolUse = function() end }',
  }))
  local doc = cjson.decode(bridge.settings(assert(hooks.tool_plan(set, {}))))
  T.eq(doc.disableAllHooks, false, "a user's disableAllHooks does not turn the policy off")
  local pre = doc.hooks.PreToolUse[1]
  T.eq(pre.matcher, "Bash|Edit|Write", "names, exactly")
  local h = pre.hooks[1]
  T.eq(h.type, "command", "a command hook")
  T.has(h.command, " hook-bridge --timeout ", "runs the bridge")
  T.has(h.command, " || exit 2", "a bridge that cannot run denies")
  T.eq(h.command:find("--warn", 1, true), nil, "one file of two says warn: no --warn")
  T.eq(h.timeout, bridge.CLI_SECONDS, "the CLI's timeout")
  assert(h.timeout > bridge.SECONDS, "the bridge gives up before the CLI would")
  local exe = raymond.exe_path()
  T.eq(h.command:sub(1, #exe + 2), "'" .. exe .. "'", "raymond's own binary, quoted")
  T.eq(doc.hooks.Stop[1].matcher, nil, "Stop takes no matcher")
  local post = doc.hooks.PostToolUse[1]
  T.eq(post.matcher, "^(mcp__gh__.*)$", "a prefix becomes an anchored expression")
  T.has(post.hooks[1].command, " --warn ", "every file wanting it says warn")
end)

T.test("a deny wins over an allow whatever the order, with its own reason", function()
  for _, order in ipairs({ { 1, 2 }, { 2, 1 } }) do
    local src = {
      'return { PreToolUse = function() return { permissionDecision = "allow", permissionDecisionReason = "fine" } end }',
      'return { PreToolUse = function() return { permissionDecision = "deny", permissionDecisionReason = "no" } end }',
    }
    local set = assert(load({ src[order[1]], src[order[2]] }))
    local d
    raymond.go(function() d = hooks.emit(set, "PreToolUse", {}) end)
    T.eq(d.permissionDecision, "deny", "order " .. order[1])
    T.eq(d.permissionDecisionReason, "no", "its reason")
    T.has(d.by.permissionDecision, "h" .. (order[1] == 2 and 1 or 2) .. ".lua", "who denied")
  end
end)

T.test("a deny that wins carries its own reason, never the losing allow's", function()
  local set = assert(load({
    'return { PreToolUse = function() return { permissionDecision = "deny" } end }',
    'return { PreToolUse = function() return { permissionDecision = "allow", permissionDecisionReason = "b says fine" } end }',
  }))
  local d
  raymond.go(function() d = hooks.emit(set, "PreToolUse", {}) end)
  T.eq(d.permissionDecision, "deny", "deny")
  T.eq(d.permissionDecisionReason, nil, "no reason of the allow")
end)

T.test("a matcher with a name Claude Code would search as a pattern is anchored", function()
  local set = assert(load({ 'return { tools = { "Bash", "mcp__my-server__get" }, PreToolUse = function() end }' }))
  local doc = cjson.decode(bridge.settings(assert(hooks.tool_plan(set, {}))))
  T.eq(doc.hooks.PreToolUse[1].matcher, "^(Bash|mcp__my-server__get)$", "anchored")
end)

T.test("a permission decision other than allow or deny is an error naming file and line", function()
  local set = assert(load({ 'return {\n PreToolUse = function() return { permissionDecision = "ask" } end }' }))
  local d, err
  raymond.go(function() d, err = hooks.emit(set, "PreToolUse", {}) end)
  T.eq(d, nil, "no decision")
  T.has(err, "h1.lua:2: PreToolUse decision field 'permissionDecision' must be \"allow\" or \"deny\", got \"ask\"",
    "message")
end)

T.test("updatedInput must be the tool's named arguments", function()
  T.eq(bridge.check_input("Bash", { command = "ls" }), nil, "good")
  T.eq(bridge.check_input("SomeTool", { x = 1 }), nil, "unknown tools: any named arguments")
  T.has(bridge.check_input("Bash", { "ls" }), "must be a table of named arguments", "a list")
  T.has(bridge.check_input("Bash", { cmd = "ls" }), "for Bash needs 'command' as a string, got nil", "missing")
  T.has(bridge.check_input("Write", { file_path = "a", content = 3 }), "needs 'content' as a string, got number",
    "wrong type")
  T.has(bridge.check_input("X", {}), "is empty", "empty")
end)
