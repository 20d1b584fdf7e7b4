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
  local tr = assert(policy.implicit(pol({ { tag = "result", payload = "checked {{input}}" } }), nil, render))
  same(tr.tag, "result")
  same(tr.payload, "checked INPUT")
  tr = assert(policy.implicit(pol({ { tag = "result", payload = "" } }), nil, render))
  same(tr.payload, "")
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
