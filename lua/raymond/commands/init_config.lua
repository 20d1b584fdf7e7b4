-- raymond.commands.init_config: `raymond init-config [--user]`, and the
-- old `raymond --init-config`: write a config file holding every setting,
-- commented out, with its default and what it does.  It refuses when a
-- file is already there, so it never overwrites one.

local raymond = require("raymond")
local config = require("raymond.config")
local console = require("raymond.console")
local workspace = require("raymond.workspace")

local M = {}

M.usage = { "raymond init-config [--user]" }

M.flags = { { "init-config options", "user" } }

M.help = [[
Writes .raymond/config.yaml at the project root (where raymond keeps its
runs), or with --user the user's file, $XDG_CONFIG_HOME/raymond/config.yaml
(else ~/.config/raymond/config.yaml).  Every setting is there, commented
out, with its default and a line on what it does: uncomment one to set it.
Refuses when the file is already there.  raymond config shows what is in
effect; docs/config.md tells more.]]

local function yaml_value(v)
  if type(v) == "table" then return "[]" end
  if math.type(v) == "float" and v == math.floor(v) then return string.format("%d", math.tointeger(v)) end
  return tostring(v)
end

-- The file's text, from config.KEYS.
function M.text()
  local out = {
    "# raymond's settings (docs/config.md, raymond help config).",
    "# Uncomment a line to set it; the value shown is the default.  The command",
    "# line wins over the project's file (.raymond/config.yaml), that over the",
    "# user's (~/.config/raymond/config.yaml); lists add up.  Relative paths are",
    "# taken from the folder holding .raymond (for the user's file, its folder).",
    "raymond:",
  }
  for _, k in ipairs(config.KEYS) do
    if not k.ignored then
      out[#out + 1] = "  # " .. k.doc
      if k.default == nil then
        out[#out + 1] = "  # " .. k.key .. ": " .. k.example .. "    # default: the Claude CLI's own"
      else
        out[#out + 1] = "  # " .. k.key .. ": " .. yaml_value(k.default)
      end
    end
  end
  return table.concat(out, "\n") .. "\n"
end

local function fail(msg, hint)
  console.error(msg, nil, hint)
  return 1
end

function M.main(opts)
  local path
  if opts.user then
    path = config.user_path()
    if not path then return fail("cannot tell where the user's config goes", "set HOME or XDG_CONFIG_HOME") end
  else
    local ws = workspace.new(opts.cwd)
    local ok, err, hint = workspace.refuse_links(ws)
    if not ok then return fail(err, hint) end
    path = ws.root .. "/config.yaml"
  end
  if raymond.stat(path, true) then
    return fail("a config file already exists: " .. console.rel(path, opts.cwd),
      "edit it, or remove it to write a fresh one")
  end
  local ok, err = raymond.mkdir_p(path:match("^(.*)/"))
  if ok then ok, err = raymond.write_atomic(path, M.text()) end
  if not ok then return fail(err) end
  raymond.stdout("Created " .. console.rel(path, opts.cwd) .. "\n")
  return 0
end

return M
