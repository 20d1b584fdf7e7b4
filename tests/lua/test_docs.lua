-- The docs say what the code does: docs/hooks.md shows the hook contract
-- of raymond.events, docs/protocol.md every tag of raymond.tags, and
-- docs/architecture.md names only modules that exist.

local T = require("testing")
local raymond = require("raymond")
local events = require("raymond.events")
local tags = require("raymond.tags")

local TOP = os.getenv("TESTS_TOP") or "."

local function doc(name)
  return assert(raymond.read_file(TOP .. "/docs/" .. name))
end

-- The leading names of the `code` spans in `cell` ("`decision = "block"`"
-- gives decision; spans not starting with a name are skipped).
local function names(cell)
  local out = {}
  for span in cell:gmatch("`([^`]*)`") do
    local n = span:match("^([%a_][%w_]*)")
    if n then out[#out + 1] = n end
  end
  table.sort(out)
  return out
end

local function sorted(list)
  local c = {}
  for i, v in ipairs(list) do c[i] = v end
  table.sort(c)
  return c
end

-- The rows of the events table: name -> { fields = {...}, decisions = {...} }.
local function event_rows(text)
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    local name, rest = line:match("^| `(%u%a+)` |(.*)$")
    if name and events.by_name[name] then
      local cells = {}
      for c in (rest .. "|"):gmatch("([^|]*)|") do cells[#cells + 1] = c end
      rows[name] = { fields = names(cells[2] or ""), decisions = names(cells[3] or "") }
    end
  end
  return rows
end

T.test("docs/hooks.md lists every event with its fields and decisions", function()
  local rows = event_rows(doc("hooks.md"))
  for _, e in ipairs(events.list) do
    local row = rows[e.name]
    if not row then error("docs/hooks.md has no row for " .. e.name) end
    T.same(row.fields, sorted(e.fields), e.name .. " fields")
    T.same(row.decisions, sorted(e.decisions), e.name .. " decisions")
  end
  local n = 0
  for _ in pairs(rows) do n = n + 1 end
  T.eq(n, #events.list, "rows in the events table")
end)

T.test("docs/hooks.md describes every decision field with its type", function()
  local text = doc("hooks.md")
  for name, f in pairs(events.fields) do
    local found = false
    for line in text:gmatch("[^\n]+") do
      local cell, ty = line:match("^| ([^|]+) | ([^|]+) |")
      if cell and ty then
        for _, n in ipairs(names(cell)) do
          local want = f.values and next(f.values) or f.type
          if n == name and ty:find(want, 1, true) then found = true end
        end
      end
    end
    if not found then error("docs/hooks.md's decisions table has no row for " .. name .. " (" .. f.type .. ")") end
  end
end)

T.test("docs/protocol.md shows every tag", function()
  local text = doc("protocol.md")
  for _, e in ipairs(tags.list) do
    if not text:find("<" .. e.name:gsub("%-", "%%-") .. "[ >]") then error("docs/protocol.md never shows <" .. e.name .. ">") end
  end
end)

T.test("every module docs/architecture.md names exists", function()
  local text = doc("architecture.md")
  local seen = 0
  local roots = { src = true, lua = true, hooks = true, tests = true, tools = true, bench = true, fuzz = true }
  for path, root in text:gmatch("`((%a+)/[%w_/%.%-]+%.%a+)`") do
    -- A name in capitals (NAME, ID) is a placeholder, not a file.
    if roots[root] and not path:find("%u%u%u") then
      seen = seen + 1
      if not raymond.stat(TOP .. "/" .. path) then error("docs/architecture.md names " .. path .. ", which does not exist") end
    end
  end
  if seen < 20 then error("docs/architecture.md names only " .. seen .. " files; is the module map gone?") end
end)

T.test("docs/config.md lists every config setting with its default, and every ignored key", function()
  local config = require("raymond.config")
  local text = doc("config.md")
  local rows = {}
  for line in text:gmatch("[^\n]+") do
    local key, rest = line:match("^| `([%a_]+)` |(.*)$")
    if key then
      local cells = {}
      for c in (rest .. "|"):gmatch("([^|]*)|") do cells[#cells + 1] = c:match("^%s*(.-)%s*$") end
      rows[key] = cells
    end
  end
  for _, k in ipairs(config.KEYS) do
    local row = rows[k.key]
    if not row then error("docs/config.md has no row for " .. k.key) end
    local d = k.default
    if type(d) == "number" or type(d) == "boolean" then
      T.eq(row[2], tostring(math.tointeger(d) or d), k.key .. " default")
    end
  end
end)

T.test("docs/testing.md's reference has a row for every key of the test file format", function()
  local testfile = require("raymond.testfile")
  local text = doc("testing.md")
  local ref = text:match("\n## Reference\n(.-)\n## ")
  assert(ref, "docs/testing.md has no ## Reference section")
  local missing = {}
  for where, keys in pairs(testfile.KEYS) do
    for k in pairs(keys) do
      if not ref:find("\n| `" .. k .. "` |", 1, true) then missing[#missing + 1] = where .. "." .. k end
    end
  end
  table.sort(missing)
  T.eq(table.concat(missing, ", "), "", "keys without a row")
end)
