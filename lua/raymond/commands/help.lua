-- raymond.commands.help: `raymond help [COMMAND]`, `raymond --help` and
-- `raymond COMMAND --help`: the help text, on stdout.
--
-- The text is put together from the tables it describes: the commands
-- (raymond.commands), their options (raymond.cli) and the tags
-- (raymond.tags), so it cannot fall behind them.

local raymond = require("raymond")
local cli = require("raymond.cli")
local commands = require("raymond.commands")
local console = require("raymond.console")
local tags = require("raymond.tags")

local M = {}

M.usage = { "raymond help [COMMAND]" }

M.args = { { key = "topic", name = "COMMAND", optional = true } }

M.help = [[
Prints the help of raymond, or of COMMAND.  raymond --help, raymond -h and
raymond COMMAND --help do the same.]]

-- The column where descriptions start in the option and command lists.
local COLUMN = 24

-- "  LEFT   text", with the text's further lines indented to the column,
-- and on a line of its own when LEFT is too wide.
local function entry(out, left, text)
  left = "  " .. left
  local lines = {}
  for line in text:gmatch("[^\n]+") do lines[#lines + 1] = string.rep(" ", COLUMN - 1) .. line end
  if #left < COLUMN - 1 then
    lines[1] = left .. lines[1]:sub(#left + 1)
  else
    table.insert(lines, 1, left)
  end
  for _, l in ipairs(lines) do out[#out + 1] = l end
end

-- `text` as lines of at most 76 characters, broken at spaces.
local function wrap(out, text)
  local line
  for word in text:gmatch("%S+") do
    if line and #line + 1 + #word > 76 then
      out[#out + 1] = line
      line = nil
    end
    line = line and line .. " " .. word or word
  end
  out[#out + 1] = line
end

local function usage(out, lines)
  for i, l in ipairs(lines) do out[#out + 1] = (i == 1 and "usage: " or "       ") .. l end
end

-- The option groups of `cmd`, each { title =, options = }, leaving out
-- options in `shown` (and adding those it returns), so commands sharing
-- groups show them once; an option of the same name that means something
-- else to a command is its own.
local function groups(cmd, shown)
  local list = {}
  for _, group in ipairs(cmd.flags or {}) do
    local rows = {}
    for i = 2, #group do
      local o = cli.option(cmd, group[i])
      if not shown[o] then
        shown[o] = true
        rows[#rows + 1] = o
      end
    end
    if #rows > 0 then list[#list + 1] = { title = group[1], options = rows } end
  end
  return list
end

local function options(out, cmd, shown)
  for _, g in ipairs(groups(cmd, shown)) do
    out[#out + 1] = ""
    out[#out + 1] = g.title .. ":"
    for _, o in ipairs(g.options) do entry(out, "--" .. o.name .. (o.arg and " " .. o.arg or ""), o.help) end
  end
end

-- A command's name and arguments, as the command list shows them.
local function synopsis(cmd)
  local s = cmd.name
  for _, a in ipairs(cmd.args or {}) do
    s = s .. " " .. (a.optional and "[" .. a.name .. "]" or a.name)
  end
  return s
end

-- Usages longer than this (the -workflow tags') take a line of their
-- own, their summary the next, so the help stays within 80 columns.
local TAG_WIDTH = 42

local function tag_table(out)
  local width = 0
  for _, t in ipairs(tags.list) do
    if #t.usage <= TAG_WIDTH then width = math.max(width, #t.usage) end
  end
  for _, t in ipairs(tags.list) do
    if #t.usage > width then
      out[#out + 1] = "  " .. t.usage
      out[#out + 1] = string.rep(" ", width + 3) .. t.summary
    else
      out[#out + 1] = "  " .. t.usage .. string.rep(" ", width - #t.usage + 1) .. t.summary
    end
  end
end

-- "--resume ID, --list, ... and --help": the options choosing a command
-- in the old form.
-- The old-form options, "--resume ID, ... and --help": those named as
-- their command, and the others ("--recover is raymond list --recover.")
-- apart; with `all`, every one in the list.
local function old_forms(all)
  local forms, others = {}, {}
  for _, o in ipairs(cli.options) do
    if o.command == o.name or (all and o.command) then
      forms[#forms + 1] = "--" .. o.name .. (o.arg and " " .. o.arg or "")
    elseif o.command then
      others[#others + 1] = string.format(" --%s is raymond %s --%s.", o.name, o.command, o.name)
    end
  end
  return table.concat(forms, ", ", 1, #forms - 1) .. " and " .. forms[#forms], table.concat(others)
end

local function general()
  local out, cmds = {}, {}
  for i, name in ipairs(commands.names()) do cmds[i] = commands.load(name) end
  local lines = {}
  for _, cmd in ipairs(cmds) do table.move(cmd.usage, 1, #cmd.usage, #lines + 1, lines) end
  usage(out, lines)
  out[#out + 1] = ""
  out[#out + 1] = "commands:"
  for _, cmd in ipairs(cmds) do entry(out, synopsis(cmd), cmd.summary) end
  out[#out + 1] = ""
  out[#out + 1] = "A first argument naming a command is that command, even when a folder of"
  out[#out + 1] = "that name exists; run such a workflow with: raymond run NAME (or ./NAME)."
  local forms, others = old_forms()
  wrap(out, "The old forms still work: " .. forms .. " do what the commands of the same name do." .. others)
  local shown = {}
  for _, cmd in ipairs(cmds) do options(out, cmd, shown) end
  out[#out + 1] = ""
  out[#out + 1] = "Runs a workflow: a folder of states, each a markdown prompt (.md) or a"
  out[#out + 1] = "bash script (.sh), that ends by printing one transition tag:"
  out[#out + 1] = ""
  tag_table(out)
  out[#out + 1] = [[

<print>TEXT</print> shows TEXT as it arrives and is not a transition.
<fork ... join="SUM" wait="all|first|N"> gathers the workers' results,
failures included, for a new agent at SUM ({{results}}, RAYMOND_RESULTS_FILE).
WORKFLOW is a folder (entry state 1_START or START), a .zip archive of one,
or one state file.
A script sees RAYMOND_INPUT/RAYMOND_RESULT (the payload handed to it;
RAYMOND_INPUT_FILE names a file holding it, its only place when over
128 KiB), RAYMOND_WORKFLOW_ID, RAYMOND_AGENT_ID, RAYMOND_TASK_FOLDER (the
agent's own folder), RAYMOND_STATE_DIR and RAYMOND_STATE_FILE, plus a
fork's extra attributes as variables.  <reset> and <fork> also take
task="new"/"inherit" (task folders) and worktree="NAME" (a git worktree).

Progress goes to stderr; stdout carries <print> text and the final result.
State lives in .raymond/ at the project root; a killed run loses nothing:
raymond resume ID (or raymond --resume ID) runs again the states that were
running.  raymond help COMMAND tells more about one command.

exit status: 0 completed, 1 error, 2 waiting for answers (--on-ask pause),
3 stopped (budget, hook, max_visits, loop; resumable), 130 interrupted

example:
  raymond workflows/hello --input world]]
  return out
end

local function one(cmd)
  local out = {}
  usage(out, cmd.usage)
  out[#out + 1] = ""
  out[#out + 1] = cmd.help
  options(out, cmd, {})
  return out
end

function M.main(opts)
  local out
  if opts.topic then
    if not commands.by_name[opts.topic] then
      console.error(string.format("unknown command '%s'", opts.topic), nil,
        "commands: " .. table.concat(commands.names(), ", "))
      return 1
    end
    out = one(commands.load(opts.topic))
  else
    out = general()
  end
  raymond.stdout(table.concat(out, "\n") .. "\n")
  return 0
end

-- The man page (tools/gen) lays out the same tables with these.
M.synopsis, M.wrap, M.old_forms, M.groups = synopsis, wrap, old_forms, groups

return M
