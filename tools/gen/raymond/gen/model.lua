-- raymond.gen.model: raymond's commands and options as the man page and
-- the completions need them, read from the tables the CLI itself uses.
--
--   local m = model()
--   m.commands   { name, module (the command's module), summary,
--                  usage = {...}, help, synopsis,
--                  args = { { name, optional, kind } },
--                  options = { option names, "help" last },
--                  groups = cmd.flags }, in table order
--   m.options    every option of raymond.cli, in its order, each with
--                `kind` (what its value is) and `values` (allowed values)
--   m.by_name    the same by name (a command's c.by_name adds the options
--                it defines itself, c.own)
--   m.old_form   the names the old form `raymond WORKFLOW [options]` takes
--   m.tags       raymond.tags.list
--   m.version    raymond's version
--
-- Kinds say what to complete: "workflow" (a folder, a .zip or a state
-- file), "run" (the id of a run of this project), "command", "file",
-- "dir", "values" (one of `values`), "text" (anything: no completion) and,
-- for options, "flag" (no value).

local raymond = require("raymond")
local cli = require("raymond.cli")
local commands = require("raymond.commands")
local help = require("raymond.commands.help")
local tags = require("raymond.tags")

-- What to complete for a placeholder in usage and options; any other
-- (TEXT, N, KEY...) is text, with nothing to offer.
local kinds = { WORKFLOW = "workflow", ID = "run", COMMAND = "command",
                FILE = "file", PATH = "file", DIR = "dir" }

-- What an option's value is.  An ID chooses an existing run when the
-- option chooses a command (--resume, --status); --workflow-id names a
-- new one.
local function option_kind(o)
  if not o.arg then return "flag" end
  if o.one_of then return "values" end
  if o.arg == "ID" and not o.command then return "text" end
  return kinds[o.arg] or "text"
end

local function entry_of(o)
  return { name = o.name, arg = o.arg, help = o.help, command = o.command,
           kind = option_kind(o), values = o.one_of }
end

return function()
  local m = { options = {}, by_name = {}, old_form = {}, commands = {}, tags = tags.list,
              version = raymond.version }
  for _, o in ipairs(cli.options) do
    local entry = entry_of(o)
    m.options[#m.options + 1] = entry
    m.by_name[o.name] = entry
    m.old_form[#m.old_form + 1] = o.name
  end
  for _, name in ipairs(commands.names()) do
    local cmd = commands.load(name)
    local c = { name = name, module = cmd, summary = cmd.summary, usage = cmd.usage, help = cmd.help,
                synopsis = help.synopsis(cmd), args = {}, options = {}, groups = cmd.flags or {},
                by_name = setmetatable({}, { __index = m.by_name }), own = {} }
    -- A command may define an option of its own under a name the old form
    -- gives another meaning (list's --status S against --status ID).
    for _, o in ipairs(cmd.options or {}) do
      c.by_name[o.name] = entry_of(o)
      c.own[#c.own + 1] = c.by_name[o.name]
    end
    for _, a in ipairs(cmd.args or {}) do
      c.args[#c.args + 1] = { name = a.name, optional = a.optional, kind = kinds[a.name] or "text" }
    end
    for _, group in ipairs(c.groups) do table.move(group, 2, #group, #c.options + 1, c.options) end
    c.options[#c.options + 1] = "help"
    m.commands[#m.commands + 1] = c
  end
  return m
end
