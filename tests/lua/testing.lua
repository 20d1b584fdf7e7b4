-- raymond.testing: a small harness for the Lua tests under tests/lua.
--
--   local T = require("raymond.testing")
--   T.test("name", function() T.eq(actual, expected) end)
--
-- Each test prints "PASS name" or "FAIL name: message"; finish() (called
-- by tests/unit/luarun.c after the loop drains) returns 1 if any failed.

local M = {}

local failed = 0

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end
M.show = show

-- nil when a and b are equal (recursively), else where they differ.
-- Numbers compare by value: 3 and 3.0 are equal here; integer-ness is
-- checked separately where it matters.
local function diff(a, b, path)
  if type(a) ~= "table" or type(b) ~= "table" then
    if a == b then return nil end
    return string.format("%s: got %s, expected %s", path, show(a), show(b))
  end
  for k, v in pairs(a) do
    local d = diff(v, b[k], path .. "." .. tostring(k))
    if d then return d end
  end
  for k, v in pairs(b) do
    if a[k] == nil then
      return string.format("%s.%s: missing, expected %s", path, tostring(k), show(v))
    end
  end
  return nil
end

-- Deep equality of tables (and plain equality of other values).
function M.same(a, b, what)
  local d = diff(a, b, what or "value")
  if d then error(d, 2) end
end

-- A fresh, empty, absolute temporary directory.
function M.tmpdir()
  local raymond = require("raymond")
  local name = os.tmpname()
  os.remove(name)
  assert(raymond.mkdir_p(name))
  return assert(raymond.realpath(name))
end

-- Write `data` to the file at `path`, and read a whole file.
function M.put(path, data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  assert(f:close())
end

function M.get(path)
  local f = assert(io.open(path, "rb"))
  local data = f:read("a")
  f:close()
  return data
end

function M.eq(a, b, what)
  if a ~= b then
    error(string.format("%s: got %s, expected %s", what or "value", show(a), show(b)), 2)
  end
end

-- err is expected to be a string containing `pattern` (plain text).
function M.has(err, pattern, what)
  if type(err) ~= "string" or not err:find(pattern, 1, true) then
    error(string.format("%s: %s does not contain %q", what or "message", show(err), pattern), 2)
  end
end

function M.test(name, fn)
  local ok, err = xpcall(fn, debug.traceback)
  if ok then
    print("PASS " .. name)
  else
    failed = failed + 1
    print("FAIL " .. name .. ": " .. tostring(err):gsub("\n", "\n    "))
  end
end

function M.finish(crashed)
  if crashed then return 1 end
  return failed > 0 and 1 or 0
end

return M
