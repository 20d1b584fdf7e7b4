-- Tests for the modules compiled into the binary (tools/embed.sh): embedded
-- as bytecode, they keep their debug information and their chunk names, so
-- an error or a traceback from inside raymond still names
-- lua/raymond/FILE.lua and the line in the source tree.

local T = require("testing")
local raymond = require("raymond")

local TOP = os.getenv("TESTS_TOP") or "."

-- The line of the source file `path` holding `text`.
local function line_of(path, text)
  local n = 0
  for line in assert(raymond.read_file(TOP .. "/" .. path)):gmatch("([^\n]*)\n?") do
    n = n + 1
    if line:find(text, 1, true) then return n end
  end
  error(path .. " has no line " .. text)
end

T.test("an embedded module's functions name its source file and line", function()
  local cases = {
    { "raymond.text", "usd", "lua/raymond/text.lua", "function M.usd(" },
    { "raymond.runstate", "decode", "lua/raymond/runstate.lua", "function M.decode(" },
    { "raymond.commands.lint", "main", "lua/raymond/commands/lint.lua", "function M.main(" },
  }
  for _, c in ipairs(cases) do
    local fn = require(c[1])[c[2]]
    if type(fn) ~= "function" then error(c[1] .. "." .. c[2] .. " is not a function") end
    local info = debug.getinfo(fn, "S")
    T.eq(info.source, "@" .. c[3])
    T.eq(info.linedefined, line_of(c[3], c[4]))
  end
end)

T.test("a traceback through an embedded module names file and line", function()
  local text = require("raymond.text")
  local ok, tb = xpcall(text.usd, debug.traceback, "not a number")
  T.eq(ok, false)
  local want = "lua/raymond/text.lua:" .. line_of("lua/raymond/text.lua", "function M.usd(") .. ":"
  if not tb:find(want, 1, true) then error("traceback lacks " .. want .. ":\n" .. tb) end
end)
