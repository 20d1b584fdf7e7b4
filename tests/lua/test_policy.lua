-- Tests for raymond.policy: which single allowed transition is implicit,
-- and the transition it gives.

local T = require("testing")
local same = T.same
local policy = require("raymond.policy")

local function pol(entries, force)
  local p, err = policy.parse({ allowed_transitions = entries, force_implicit = force }, "wf/START.md")
  assert(p, err)
  return p
end

local function render(s) return (s:gsub("{{input}}", "INPUT")) end

T.test("implicit_entry: one goto is implicit, two entries are not", function()
  same(policy.implicit_entry(pol({ { tag = "goto", target = "NEXT" } })).tag, "goto")
  same(policy.implicit_entry(pol({ { tag = "goto", target = "A" }, { tag = "goto", target = "B" } })), nil)
end)

T.test("implicit_entry: a result with a fixed payload is implicit, one without is not", function()
  same(policy.implicit_entry(pol({ { tag = "result", payload = "done" } })).payload, "done")
  same(policy.implicit_entry(pol({ { tag = "result", payload = "" } })).payload, "")
  same(policy.implicit_entry(pol({ { tag = "result" } })), nil)
  same(policy.implicit_entry(pol({ { tag = "result", payload = "a" }, { tag = "result", payload = "b" } })), nil)
end)

T.test("implicit: a fixed result gives its payload, placeholders rendered", function()
  local p = policy.rendered(pol({ { tag = "result", payload = "checked {{input}}" } }), render)
  local tr = assert(policy.implicit(p, nil, render))
  same(tr.tag, "result")
  same(tr.payload, "checked INPUT")
  tr = assert(policy.implicit(policy.rendered(pol({ { tag = "result", payload = "" } }), render), nil, render))
  same(tr.payload, "")
end)

T.test("rendered: a written result and the reminder meet the rendered payload", function()
  local p = policy.rendered(pol({ { tag = "result", payload = "checked {{input}}" },
    { tag = "goto", target = "NEXT" } }), render)
  same(policy.check(p, { { name = "result", body = " checked INPUT\n", attrs = {} } }, nil), nil)
  same(policy.check(p, { { name = "result", body = "checked {{input}}", attrs = {} } }, nil),
    "<result>...</result> is not one of the allowed transitions")
  same(policy.reminder(p, "why"):find("1. <result>checked INPUT</result>", 1, true) ~= nil, true, "reminder")
end)

T.test("parse: force_implicit takes a fixed result, refuses one without a payload", function()
  same(pol({ { tag = "result", payload = "done" } }, true).force_implicit, true)
  local p, err = policy.parse({ allowed_transitions = { { tag = "result" } }, force_implicit = true }, "wf/START.md")
  same(p, nil)
  same(err, "wf/START.md: force_implicit needs exactly one allowed transition, and a <result> "
    .. "with a fixed payload, e.g. {tag: result, payload: done}")
end)

T.test("parse: a payload that is a list or a mapping is refused", function()
  local p, err = policy.parse({ allowed_transitions = { { tag = "result", payload = { "a" } } } }, "wf/START.md")
  same(p, nil)
  same(err, "wf/START.md: allowed_transitions[1] payload must be a string, got a list")
  p, err = policy.parse({ allowed_transitions = { { tag = "result", payload = { a = 1 } } } }, "wf/START.md")
  same(err, "wf/START.md: allowed_transitions[1] payload must be a string, got a mapping")
end)
