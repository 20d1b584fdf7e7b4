-- Tests for raymond.lint: docs/lint.md shows every check, and the checks
-- take time linear in the size of the workflow.

local T = require("testing")
local raymond = require("raymond")
local analyse = require("raymond.analyse")
local lint = require("raymond.lint")

local TOP = os.getenv("TESTS_TOP") or "."

T.test("docs/lint.md has a row for every check, with its severity, what and fix, and no other", function()
  local text = assert(raymond.read_file(TOP .. "/docs/lint.md"))
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    local id, severity, what, fix = line:match("^| `([%l%-]+)` | (%l+) | ([^|]*) | (.*) |$")
    if id then rows[id] = { severity, (what:gsub("`", "")), (fix:gsub("`", "")) } end
  end
  for _, c in ipairs(lint.checks) do
    local row = rows[c.id] or {}
    T.eq(row[1], c.severity, "docs/lint.md row of " .. c.id)
    T.eq(row[2], c.what, "docs/lint.md says what " .. c.id .. " finds as lint.lua does")
    T.eq(row[3], c.fix, "docs/lint.md says how to fix " .. c.id .. " as lint.lua does")
    rows[c.id] = nil
  end
  T.eq(next(rows), nil, "a row for a check lint.lua does not have")
end)

T.test("every check has an id, a severity, what it finds and how to fix it", function()
  local seen = {}
  for _, c in ipairs(lint.checks) do
    T.eq(seen[c.id], nil, "duplicate id " .. c.id)
    seen[c.id] = true
    T.eq(lint.RANK[c.severity] ~= nil, true, c.id .. " severity")
    T.eq(type(c.what) == "string" and type(c.fix) == "string", true, c.id .. " what and fix")
  end
end)

-- A workflow of `n` states in a chain: markdown states with frontmatter
-- and a prompt, every tenth a script, the last ending with a result.
local function chain(n)
  local dir = T.tmpdir()
  for i = 1, n do
    local next_name = i < n and string.format("S%04d", i + 1) or nil
    local name = i == 1 and "START" or string.format("S%04d", i)
    if i % 10 == 0 then
      T.put(string.format("%s/%s.sh", dir, name), next_name
        and string.format('echo "<goto>%s</goto>"\n', next_name) or 'echo "<result>done</result>"\n')
    else
      T.put(string.format("%s/%s.md", dir, name), string.format(
        "---\nmodel: haiku\nmax_visits: 3\nallowed_transitions:\n  - { tag: goto, target: %s }\n"
        .. "  - { tag: result, payload: DONE }\n---\nWork on {{input}}, then go to %s: <goto>%s</goto>\n"
        .. "or end with <result>DONE</result>\n", next_name or "START", next_name or "START", next_name or "START"))
    end
  end
  return dir
end

-- Processor seconds for analyse + lint of `dir`, once, after a full
-- collection (so garbage of an earlier run is not charged to this one).
local function cpu(dir)
  collectgarbage("collect")
  local t0 = os.clock()
  local wf = assert(analyse.load(dir, "/"))
  lint.run(wf)
  return os.clock() - t0
end

-- The least of five runs of each of `a` and `b`, taken in turns, so a
-- burst of load elsewhere falls on both alike rather than on one.
local function cpu_pair(a, b)
  local ta, tb
  for _ = 1, 5 do
    local x, y = cpu(a), cpu(b)
    ta, tb = ta and math.min(ta, x) or x, tb and math.min(tb, y) or y
  end
  return ta, tb
end

T.test("lint time grows linearly with the workflow (processor time)", function()
  local small, big = chain(250), chain(1000)
  local ok, err = pcall(function()
    local wf = assert(analyse.load(big, "/"))
    local diags = lint.run(wf)
    T.eq(lint.errors(diags), 0, "errors in the generated workflow")
    local t_small, t_big = cpu_pair(small, big)
    -- Four times the states; quadratic work would take sixteen times as
    -- long.  Linear work measures 4 to 6 times here (collections grow
    -- with the heap), up to 8 on a busy machine: ten tells them apart.
    if t_big > 10 * t_small then
      error(string.format("1000 states took %.3fs, 250 took %.3fs: %.1f times", t_big, t_small, t_big / t_small))
    end
  end)
  os.execute("rm -rf '" .. small .. "' '" .. big .. "'")
  if not ok then error(err, 0) end
end)
