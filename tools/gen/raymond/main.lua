-- tools/gen/raymond/main.lua: the man page and the shell completions,
-- written by raymond itself from its own tables.
--
--   RAYMOND_LUA_DIR=tools/gen build/raymond man|bash|zsh > FILE
--
-- RAYMOND_LUA_DIR makes `require` read a module from this folder before
-- the one compiled into the binary (src/lua_host.c), so this file stands
-- in for raymond.main.  Everything else comes from the binary: the
-- command table (raymond.commands), each command's module, the options
-- (raymond.cli) and the tags (raymond.tags).  A command or option added
-- there shows up in the man page and in both completions at the next
-- build, with no edit here.

local raymond = require("raymond")

local M = {}

local writers = { man = "raymond.gen.man", bash = "raymond.gen.bash", zsh = "raymond.gen.zsh" }
local code

function M.main(argv)
  local module = writers[argv[1] or ""]
  if not module or argv[2] then
    require("raymond.console").error("usage: RAYMOND_LUA_DIR=tools/gen raymond man|bash|zsh")
    code = 1
    return
  end
  raymond.stdout(require(module)(require("raymond.gen.model")()))
  code = 0
end

function M.finish()
  return code or 1
end

return M
