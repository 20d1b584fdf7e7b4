-- raymond.commands.version: `raymond version`.  The C side answers a bare
-- `raymond version` or `raymond --version` itself, without starting Lua;
-- this module answers the rest (`raymond --quiet --version`, an
-- abbreviated --vers) and gives the command its help.

local raymond = require("raymond")

local M = {}

M.usage = { "raymond version" }

M.help = "Prints raymond's version."

function M.main()
  raymond.stdout("raymond " .. raymond.version .. "\n")
  return 0
end

return M
