-- raymond.gen.man: the man page raymond(1), in the man macros, from the
-- model (raymond.gen.model): every command with its usage, help and
-- options, every option with its help, and the transition tags.  Only
-- the description, exit status, files and examples are prose of this
-- file.  Lines are wrapped as raymond help wraps them: roff fills them
-- again, and a long source line is hard to read and lint.

local cli = require("raymond.cli")
local help = require("raymond.commands.help")
local wrap = help.wrap

-- An option's name as roff text: its hyphens as minus signs, so the
-- page shows (and a reader copies) the characters to type.
local function flag(name)
  return "\\-\\-" .. name:gsub("%-", "\\-")
end

-- `s` as roff text: backslashes escaped, a leading dot or quote kept from
-- being read as a request, and the hyphens of options as minus signs.
local function esc(s)
  s = s:gsub("\\", "\\e"):gsub("^([.'])", "\\&%1"):gsub("\n([.'])", "\n\\&%1")
  s = s:gsub("(%s)%-(%w)", "%1\\-%2"):gsub("^%-(%w)", "\\-%1")
  return (s:gsub("%-%-(%w[%w%-]*)", flag):gsub("%-%-", "\\-\\-"))
end

-- A paragraph of help text (roff fills it), a blank line starting a new
-- paragraph inside the current indent.
local function text(out, s)
  for line in (s .. "\n"):gmatch("(.-)\n") do
    if line:find("%S") then wrap(out, esc(line)) else out[#out + 1] = ".IP" end
  end
end

-- "raymond run WORKFLOW [options]" with the command in bold and the
-- placeholders in italics.
local function usage_line(u)
  local words = {}
  for w in u:gmatch("%S+") do
    if w == "raymond" or w:match("^%l[%l-]*$") then
      words[#words + 1] = "\\fB" .. esc(w) .. "\\fR"
    else
      words[#words + 1] = (esc(w):gsub("(%u[%u_]+)", "\\fI%1\\fR"))
    end
  end
  return table.concat(words, " ")
end

local function option_tag(o)
  return "\\fB" .. flag(o.name) .. "\\fR" .. (o.arg and " \\fI" .. o.arg .. "\\fR" or "")
end

local function commands_section(out, m)
  out[#out + 1] = ".SH COMMANDS"
  for _, c in ipairs(m.commands) do
    out[#out + 1] = ".TP"
    out[#out + 1] = usage_line(c.synopsis)
    out[#out + 1] = esc(c.summary) .. "."
    out[#out + 1] = ".IP"
    for i, u in ipairs(c.usage) do
      if i > 1 then out[#out + 1] = ".br" end
      out[#out + 1] = (i == 1 and "Usage: " or "or: ") .. usage_line(u)
    end
    out[#out + 1] = ".IP"
    text(out, c.help)
    local names = {}
    for _, name in ipairs(c.options) do names[#names + 1] = "\\fB" .. flag(name) .. "\\fR" end
    out[#out + 1] = ".IP"
    wrap(out, "Options: " .. table.concat(names, ", ") .. ".")
  end
end

-- Each option once, in the groups of the commands that take it, then the
-- options of the old form that choose a command.
local function options_section(out, m)
  out[#out + 1] = ".SH OPTIONS"
  text(out, [[
Options are long: --input TEXT or --input=TEXT.  They may come before or
after the arguments, may be shortened while they stay unambiguous, and --
ends them.  -h is --help.  Each command takes the options listed under it
above, and --help; the old form raymond WORKFLOW [options] takes them all.]])
  local shown = { [cli.by_name.help] = true }
  for _, c in ipairs(m.commands) do
    for _, g in ipairs(help.groups(c.module, shown)) do
      out[#out + 1] = ".SS " .. esc(g.title:gsub("^%l", string.upper))
      for _, o in ipairs(g.options) do
        out[#out + 1] = ".TP"
        out[#out + 1] = option_tag(o)
        text(out, o.help)
      end
    end
  end
  out[#out + 1] = ".SS The old form"
  for _, o in ipairs(m.options) do
    if o.command then
      out[#out + 1] = ".TP"
      out[#out + 1] = option_tag(o) .. (o.name == "help" and ", \\fB\\-h\\fR" or "")
      local same = o.command .. (o.name ~= o.command and " --" .. o.name or "")
      text(out, string.format("%s; the same as raymond %s.", o.help:gsub("\n", " "), same))
    end
  end
end

local function tags_section(out, m)
  out[#out + 1] = ".SH TRANSITION TAGS"
  text(out, "Each state ends by printing one of these tags:")
  for _, t in ipairs(m.tags) do
    out[#out + 1] = ".TP"
    out[#out + 1] = "\\fB" .. esc(t.usage) .. "\\fR"
    text(out, t.summary)
  end
  out[#out + 1] = ".PP"
  text(out, "<print>TEXT</print> shows TEXT as it arrives and is not a transition.")
end

local HEAD = [[
.SH DESCRIPTION
raymond runs workflows for AI coding agents.  A workflow is a folder of
states: markdown prompts (.md), run by the Claude Code CLI, and bash scripts
(.sh), run directly.  Its entry state is 1_START or START.  A workflow can
also be a .zip archive of such a folder, or one state file.  Each state ends
by printing one transition tag (below), and raymond follows it: on to the
next state, into a subroutine and back, or out to parallel agents.
.PP
Policy is Lua: hook files in the workflow folder (hooks.lua, hooks/*.lua)
or given with \-\-hooks watch and override transitions, or stop a run.  The
default hooks (budget, max_visits, evaluate, loop detection) are compiled
into raymond; copies are installed to read and adapt (see FILES).
.PP
A run's state is saved after every step, so a crash loses nothing and
\fBraymond resume\fR \fIID\fR carries on.  Progress goes to stderr; stdout
carries only the workflow's <print> text and its final result.
.PP
A first argument naming a command is that command, even when a folder of
that name exists: run such a workflow with \fBraymond run\fR \fINAME\fR or
\fBraymond ./\fR\fINAME\fR.]]

-- The end of the description's last paragraph: the options choosing a
-- command in the old form, from the table, as raymond help lists them.
local function old_form(out)
  local forms = esc((help.old_forms(true))):gsub("(%u[%u_]+)", "\\fI%1\\fR")
  wrap(out, "Any other first argument is read the old way, \\fBraymond\\fR \\fIWORKFLOW\\fR "
    .. "[options], where " .. forms .. " choose the command.")
end

local TAIL = [[
.SH EXIT STATUS
.TP
0
The run completed; list, status, help and version succeeded.
.TP
1
An error: a bad command line, a workflow or run that cannot be used, a
failed state.  One line on stderr says what and where, then a hint how to
fix it.
.TP
3
The run stopped without an error and can be resumed: the budget, a hook,
max_visits, loop detection, a usage limit with \-\-no\-wait.  The last line
on stderr is the command that continues it.
.TP
130
Interrupted by Ctrl\-C or SIGTERM; continue with \fBraymond resume\fR \fIID\fR.
.SH FILES
.TP
\&.raymond/state/\fIID\fR.json
A run's state, in .raymond/ at the project root: the nearest folder up from
the current one that holds .raymond, else the nearest holding .git, else the
current folder.
.TP
\&.raymond/debug/\fIID\fR.record
The debug record of a run: each step's command, prompt, output and outcome
(not kept with \-\-no\-debug).
.TP
\fIPREFIX\fR/share/raymond/hooks/
The default hooks, as compiled into raymond, to read, or to copy and adapt:
run with \-\-no\-default\-hooks \-\-hooks \fIFILE\fR to use a changed copy.
\fIPREFIX\fR is where raymond was installed, /usr/local by default.
.TP
\fIPREFIX\fR/share/raymond/lua/
The engine's Lua modules, as compiled into raymond, to read.  Setting
RAYMOND_LUA_DIR to a copy of this folder makes raymond load the copy's
modules instead of its own, to try a change without a rebuild.
.TP
\fIPREFIX\fR/share/doc/raymond/
The documentation: cli.md (the command line), authoring.md (writing
workflows), protocol.md (the reference), hooks.md (the hook API).
.SH EXAMPLES
.nf
raymond run workflows/hello \-\-input world
raymond run review \-\-budget 2 \-\-model sonnet \-\-quiet
raymond list
raymond status review_1 \-\-json
raymond resume review_1 \-\-timeout 1200
raymond help resume
.fi]]

-- The page's date: SOURCE_DATE_EPOCH's when set, for a build that makes
-- the same page each time, else today's.
local function date()
  return os.date("!%Y-%m-%d", tonumber(os.getenv("SOURCE_DATE_EPOCH") or "") or os.time())
end

return function(m)
  local out = {
    '.\\" Generated from raymond\'s command table by tools/gen; do not edit.',
    string.format('.TH RAYMOND 1 %s "raymond %s" "User Commands"', date(), m.version),
    ".SH NAME",
    "raymond \\- run workflows of AI coding agents",
    ".SH SYNOPSIS",
    ".nf",
  }
  for _, c in ipairs(m.commands) do
    for _, u in ipairs(c.usage) do out[#out + 1] = usage_line(u) end
  end
  out[#out + 1] = ".fi"
  out[#out + 1] = HEAD
  old_form(out)
  commands_section(out, m)
  options_section(out, m)
  tags_section(out, m)
  out[#out + 1] = TAIL
  return table.concat(out, "\n") .. "\n"
end
