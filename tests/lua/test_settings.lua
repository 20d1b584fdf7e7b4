-- raymond.policy's agent settings: the values a state's frontmatter or a
-- PreState hook may give, as the CLI gets them, and why a bad one is not.
local T = require("testing")
local policy = require("raymond.policy")

local function why(key, v) return select(2, policy.setting(key, v)) end

T.test("a tool list: a YAML list, or a string split at commas outside a rule's parentheses", function()
  T.same(policy.setting("allowed_tools", "Read, Grep ,, Bash(git diff:*, git log:*)"),
    { "Read", "Grep", "Bash(git diff:*, git log:*)" })
  T.same(policy.setting("disallowed_tools", { " WebFetch ", "mcp__github__*", "mcp__db__query", "Edit(src/**)" }),
    { "WebFetch", "mcp__github__*", "mcp__db__query", "Edit(src/**)" })
  T.same(policy.setting("allowed_tools", {}), {})
end)

T.test("an unknown tool: the nearest tool when one is close, else the list", function()
  T.eq(why("allowed_tools", { "Read", "Bsh" }), "names an unknown tool 'Bsh'; did you mean Bash?")
  T.eq(why("allowed_tools", "webfetch"), "names an unknown tool 'webfetch'; did you mean WebFetch?")
  local w = why("allowed_tools", "X")
  T.eq(w:sub(1, 49), "names an unknown tool 'X'; the tools are Agent, A")
  T.eq(why("allowed_tools", "mcp__"):sub(1, 27), "names an unknown tool 'mcp_")
  T.eq(why("allowed_tools", { "Bash(git" }),
    "has 'Bash(git', which is not a tool rule: the rule goes in parentheses after the tool, as in Bash(git log:*)")
  T.eq(why("allowed_tools", { "Read", 5 }), "entry 2 must be a tool name, got 5")
  T.eq(why("allowed_tools", { a = 1 }), "must be a list of tools, or one string of them separated by commas, got a mapping")
end)

T.test("a long bad value is shown by how it begins", function()
  local w = why("permission_mode", ("p"):rep(500))
  T.eq(w, "must be one of acceptEdits, auto, bypassPermissions, default, dontAsk, plan, got '"
    .. ("p"):rep(60) .. "...'")
end)

T.test("max_turns: a whole number from 1", function()
  T.eq(policy.setting("max_turns", 30), 30)
  T.eq(math.type(policy.setting("max_turns", 30.0)), "integer")
  for _, bad in ipairs({ 0, -1, 2.5, 1e7, "5", 0 / 0 }) do
    T.eq(policy.setting("max_turns", bad), nil, tostring(bad))
  end
end)

T.test("mcp_config: a path inside the workflow; ./ is the state's folder", function()
  T.eq(policy.setting("mcp_config", "./mcp/servers.json"), "mcp/servers.json")
  for _, bad in ipairs({ "", "/etc/mcp.json", "../x.json", "a/../../x.json", "..", 5 }) do
    T.eq(policy.setting("mcp_config", bad), nil, tostring(bad))
  end
end)

T.test("an MCP configuration is read through the scope and must hold an mcpServers object", function()
  local files = {
    ["ok.json"] = ' {"mcpServers": {"a": {"command": "x"}}}\n', ["list.json"] = '{"mcpServers": [1]}',
    ["bad.json"] = "{", ["top.json"] = "[1]",
  }
  local scope = {
    has = function(_, name) return files[name] ~= nil end,
    read = function(_, name) return files[name] end,
  }
  T.eq(policy.mcp_text(scope, "ok.json"), '{"mcpServers": {"a": {"command": "x"}}}')
  T.eq(select(2, policy.mcp_text(scope, "gone.json")),
    "names no file 'gone.json' of the workflow (the path is relative to the state's folder)")
  T.eq(select(2, policy.mcp_text(scope, "bad.json")):sub(1, 37), "names 'bad.json', which is not JSON: ")
  for _, name in ipairs({ "list.json", "top.json" }) do
    local w = select(2, policy.mcp_text(scope, name))
    T.eq(w:find("names '" .. name .. "', which has no \"mcpServers\" object;", 1, true), 1, w)
  end
end)
