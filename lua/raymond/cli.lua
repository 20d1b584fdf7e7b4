-- raymond.cli: the command line, from argv to a command and its options.
--
--   local name, opts = cli.parse(argv, cwd)
--   -- or nil, { msg =, hint = } for a command line that cannot be run
--
-- `name` names an entry of raymond.commands; `opts` is the table the
-- command receives (and run and resume hand to the engine): `command`,
-- `cwd`, the arguments (`workflow`, `resume`, `status`, `topic`) and one
-- field per option given (the `key`s below).  Options that were not given
-- stay nil, so a resumed run can tell "not given" from "given as the
-- default"; `quiet` is always a boolean, and `implied` is true when a bare
-- WORKFLOW implied the run command.
--
-- Two forms are read.  When the first argument names a command, git style,
-- the rest are that command's arguments and the options its module lists.
-- Otherwise argv is the old form: `raymond WORKFLOW [options]`, where
-- --resume, --list, --recover, --status, --help and --version choose the command and
-- every option is accepted.
--
-- Options are long (`--input TEXT` or `--input=TEXT`), may be shortened
-- while they stay unambiguous, may come before or after the arguments,
-- and `--` ends them; -h is --help.  An option taking one value may be
-- given once; a flag may be repeated, and an option with `many` collects.

local commands = require("raymond.commands")
local text = require("raymond.text")

local M = {}

-- Every option raymond knows.  An entry:
--   name     the option without its dashes
--   key      the field of opts it sets (default: none)
--   arg      the value's placeholder, for options taking one
--   value    what a flag sets its key to (default true)
--   boolean  the flag may also be given =true (the same) or =false (its
--            key false: as if not given, and winning over a config file)
--   number   the largest number allowed; the value must be a number
--   whole    the number must be a whole number
--   one_of   the values allowed
--   text     the value is printable text of at most this many characters
--   many     how many times it may be given; its key holds a list
--   too_many what the list holds and a hint, for the error past `many`
--   command  in the old form, the command this option chooses
--   help     what it does, for help text (lines split at "\n")
M.options = {
  { name = "input", key = "input", arg = "TEXT",
    help = "payload for the first state ({{input}}, $RAYMOND_INPUT);\nwith --resume, the answer to the oldest pending <ask>" },
  { name = "on-ask", key = "on_ask", arg = "MODE", one_of = { "reject", "pause", "prompt" },
    help = "what an <ask> does: reject (the default) refuses a\nworkflow that can ask; pause saves the run and exits\nwith status 2 once no agent is at work, to be answered\nwith --resume ID --input TEXT; prompt asks on the\nterminal (pause when stdin is not one)" },
  { name = "workflow-id", key = "workflow_id", arg = "ID",
    help = "name the new run (letters, digits, _ and -)" },
  { name = "name", key = "name", arg = "NAME", text = 200,
    help = "a name for people: shown by list and status, and in the\nterminal's title while the run runs" },
  { name = "timeout", key = "timeout", arg = "SECONDS", number = 1e7,
    help = "stop a state that prints nothing for this long\n(default 600, 0 = no limit)" },
  { name = "max-parallel", key = "max_parallel", arg = "N", number = 1e6, whole = true,
    help = "run at most N states at once (default 32, 0 = no limit)" },
  { name = "max-agents", key = "max_agents", arg = "N", number = 1e6, whole = true,
    help = "stop the run when a <fork> would make more than N live\nagents (default 2000, 0 = no limit)" },
  { name = "allow-cd", key = "allow_cd", arg = "DIR", many = 64,
    too_many = { "directories", "allow a common parent directory instead" },
    help = "let cd= lead into DIR too, besides the directory the run\nwas started in; may be given again" },
  { name = "budget", key = "budget", arg = "USD", number = 1e6,
    help = "stop the run once it has spent this much (default 10.00,\n" ..
           "0 = no limit); each turn also gets the rest as its cap" },
  { name = "model", key = "model", arg = "NAME",
    help = "model for states whose frontmatter names none (haiku,\nsonnet, opus or a full model id)" },
  { name = "effort", key = "effort", arg = "LEVEL", one_of = { "low", "medium", "high", "xhigh", "max" },
    help = "low, medium, high, xhigh or max, likewise" },
  { name = "claude", key = "claude", arg = "PATH",
    help = "the claude executable (default: RAYMOND_CLAUDE, else\nclaude on PATH)" },
  { name = "dangerously-skip-permissions", key = "skip_permissions", boolean = true,
    help = "let Claude run any tool without asking (default: it may\n" ..
           "edit files, see --permission-mode acceptEdits); =false\n" ..
           "is the default, even over a config file's true" },
  { name = "no-wait", key = "no_wait",
    help = "stop at a usage limit instead of waiting for its reset" },
  { name = "hooks", key = "hooks", arg = "FILE", many = 64,
    too_many = { "files", "put hook files in the workflow's hooks/ folder instead" },
    help = "load FILE after the default hooks and the workflow's\n" ..
           "hooks.lua and hooks/*.lua; may be given again" },
  { name = "no-default-hooks", key = "no_default_hooks",
    help = "leave out the built-in hooks (budget, max_visits,\nevaluate, loop detection)" },
  { name = "max-repeats", key = "max_repeats", arg = "N", number = 1e6, whole = true,
    help = "loop detection: stop when a markdown state gives the same\nreply N times in a row (default 3, 0 = off); a state's\nmax_repeats or max_visits wins" },
  { name = "launcher", key = "launcher", arg = "NAME",
    help = "where states run unless they or their fork say: local\n(the default), slurm, ssh, kubernetes or one the config\ndefines under launchers: (docs/cluster.md)" },
  { name = "record", key = "record", arg = "FILE",
    help = "write every model exchange of the run to FILE, a cassette\nto replay offline (docs/testing.md); a resume appends" },
  { name = "quiet", key = "quiet",
    help = "print no progress and no live view, only errors and the\nworkflow's output" },
  { name = "no-debug", key = "debug", value = false,
    help = "keep no per-step record in .raymond/debug/" },
  -- The old form's --json, which goes with --status ID; each command
  -- taking --json gives its own, saying what it prints.
  { name = "json", key = "json",
    help = "with --status ID: print the run's whole state as JSON" },
  { name = "no-config", key = "no_config",
    help = "read no config file (.raymond/config.yaml, the user's)" },
  { name = "user", key = "user",
    help = "write the user's config file instead of the project's" },
  { name = "level", key = "level", arg = "LEVEL", one_of = { "info", "warning", "error" },
    help = "show findings of this severity and above: info,\nwarning (the default) or error" },
  { name = "no-lint", key = "no_lint",
    help = "start without the error checks of raymond lint" },
  { name = "html", key = "html",
    help = "write an HTML page that draws the diagram, needing no\nnetwork, instead of Mermaid text" },
  { name = "output", key = "output", arg = "FILE",
    help = "write to FILE instead of stdout: a regular file is\nreplaced atomically, a device or symlink written into" },
  { name = "resume", key = "resume", arg = "ID", command = "resume",
    help = "continue a run that failed, stopped or was killed" },
  { name = "list", command = "list", help = "list runs with their status" },
  { name = "recover", key = "recover", command = "list",
    help = "print the ids of the runs raymond resume would continue,\none a line" },
  { name = "status", key = "status", arg = "ID", command = "status",
    help = "show a run's agents, stacks and hooks" },
  { name = "init-config", command = "init-config",
    help = "write a config file with every setting, commented" },
  { name = "version", command = "version", help = "print the version" },
  { name = "help", command = "help", help = "print this help" },
}

M.by_name = {}
for _, o in ipairs(M.options) do M.by_name[o.name] = o end

-- Options of the original raymond that this one refuses on purpose, with
-- why (docs/cli.md says more), rather than as unknown.
M.REFUSED = {
  ["continue-session"] = {
    "--continue-session is not supported: it would start the main agent from whichever Claude session "
      .. "is the latest in this directory (claude -c), which a resume after a crash cannot pin down; "
      .. "raymond chooses every session id itself (docs/cli.md, \"--continue-session\")",
    "give the context the run needs through --input or the first state's prompt",
  },
}

-- The option groups commands share (see raymond.commands).
M.groups = {
  markdown = { "markdown states (the Claude Code CLI)", "budget", "model", "effort", "claude",
               "dangerously-skip-permissions", "no-wait" },
  hooks = { "hooks (Lua files returning handlers by event; see docs/hooks.md)",
            "hooks", "no-default-hooks", "max-repeats" },
  output = { "output", "quiet", "no-debug" },
  config = { "config files (see raymond help config)", "no-config" },
}

local function fail(msg, hint)
  return nil, { msg = msg, hint = hint }
end

-- A number from 0 to `max`, read as C's strtod reads it: no trailing
-- blanks, and a hexadecimal integer never wraps around.
local function number(s, max)
  if s:find("%s$") then return nil end
  if s:find("^%s*[-+]?0[xX]") and not s:find("[pP]") then s = s .. "p0" end
  local v = tonumber(s)
  if not v or not (v >= 0 and v <= max) then return nil end
  return v + 0.0
end

-- Check the value given to option `o` and store it in opts.  `label`
-- names it in messages instead of --NAME (a config file's key).
local function take(opts, o, value, label)
  local flag = label or "--" .. o.name
  if o.number then
    local v = number(value, o.number)
    if not v then
      return fail(string.format("%s needs a number from 0 to %g, got '%s'", flag, o.number, value),
        string.format("for example: %s%s300", flag, label and ": " or " "))
    end
    if o.whole then
      v = math.tointeger(v)
      if not v then return fail(string.format("%s needs a whole number, got '%s'", flag, value)) end
    end
    value = v
  elseif o.text then
    local ok, why = text.printable_text(value, o.text)
    if not ok then
      return fail(string.format("%s %s", flag, why), "give printable text, for example: " .. flag ..
        (label and ": " or " ") .. "'nightly review'")
    end
  elseif o.one_of then
    local ok = false
    for _, allowed in ipairs(o.one_of) do ok = ok or value == allowed end
    if not ok then
      return fail(string.format("%s must be %s or %s, not '%s'", flag,
        table.concat(o.one_of, ", ", 1, #o.one_of - 1), o.one_of[#o.one_of], value))
    end
  end
  if o.many then
    local list = opts[o.key] or {}
    if #list == o.many then
      return fail(string.format("more than %d %s %s", o.many, flag, o.too_many[1]), o.too_many[2])
    end
    list[#list + 1] = value
    opts[o.key] = list
  elseif o.key then
    opts[o.key] = value
  end
  return true
end
M.take = take

-- Option `name` as command `cmd` reads it: the command's own entry of that
-- name (cmd.options, entries as above, for an option whose meaning is the
-- command's alone, like list's --status), else the shared one.
function M.option(cmd, name)
  for _, o in ipairs(cmd and cmd.options or {}) do
    if o.name == name then return o end
  end
  return M.by_name[name]
end

-- The option `name` stands for among `accepted` (a list of names): the
-- one spelled so, else the only one it begins.  nil and why otherwise.
local function lookup(name, accepted, cmd)
  if name == "" then return nil, "unknown" end
  local found = {}
  for _, a in ipairs(accepted) do
    if a == name then return M.option(cmd, a) end
    if a:sub(1, #name) == name then found[#found + 1] = a end
  end
  if #found == 1 then return M.option(cmd, found[1]) end
  if #found > 1 then return nil, "ambiguous", found end
  return nil, M.by_name[name] and "elsewhere" or "unknown"
end

-- Read `args` (from index `first`) against the options named in
-- `accepted`, storing their values in `opts`.  `on` holds:
--   option(o)     called for each option before its value is taken; a
--                 command name returned ends the reading (--help)
--   hint          the hint of every error
--   refuse(flag)  the message for an option only other commands take
--   cmd           the command whose own options win (M.option)
-- Returns the arguments that are not options (and the command that ended
-- the reading), or nil and an error.
local function read(args, first, accepted, opts, on)
  local rest, given = {}, {}
  local i = first
  while i <= #args do
    local a = args[i]
    i = i + 1
    if a == "--" then
      table.move(args, i, #args, #rest + 1, rest)
      break
    elseif a == "-h" then
      local stop = on.option(M.by_name.help)
      if stop then return rest, stop end
    elseif a:sub(1, 2) == "--" then
      local name, value = a:match("^%-%-([^=]*)=(.*)$")
      name = name or a:sub(3)
      if M.REFUSED[name] then return fail(M.REFUSED[name][1], M.REFUSED[name][2]) end
      local o, why, names = lookup(name, accepted, on.cmd)
      if not o then
        if why == "ambiguous" then
          return fail(string.format("option '--%s' is ambiguous: --%s", name, table.concat(names, ", --")),
            on.hint)
        elseif why == "elsewhere" and on.refuse then
          return fail(on.refuse("--" .. name), on.hint)
        end
        return fail(string.format("unknown option '%s'", a), on.hint)
      end
      if o.arg and not value then
        if i > #args then return fail(string.format("option '%s' needs a value", a), on.hint) end
        value = args[i]
        i = i + 1
      elseif not o.arg and value and not (o.boolean and (value == "true" or value == "false")) then
        if o.boolean then
          return fail(string.format("option '--%s' takes =true or =false, not '%s'", o.name, value), on.hint)
        end
        return fail(string.format("option '--%s' takes no value", o.name), on.hint)
      end
      local stop = on.option(o)
      if stop then return rest, stop end
      if o.arg and not o.many then
        -- The second of two values is a slip more often than a change of
        -- mind (prune --older-than 1d --older-than 2d), and letting the
        -- last win would hide it.
        if given[o.name] then
          return fail(string.format("option '--%s' given twice ('%s', then '%s'); give it once", o.name,
            given[o.name], value), on.hint)
        end
        given[o.name] = value
      end
      if o.arg then
        local ok, err = take(opts, o, value)
        if not ok then return nil, err end
      elseif o.key then
        if o.value == nil then opts[o.key] = value ~= "false" else opts[o.key] = o.value end
      end
    elseif a:sub(1, 1) == "-" and a ~= "-" then
      return fail(string.format("unknown option '%s'", a), on.hint)
    else
      rest[#rest + 1] = a
    end
  end
  return rest
end

-- Every option name, for the old form.
local function all_names()
  local names = {}
  for i, o in ipairs(M.options) do names[i] = o.name end
  return names
end

-- The old form: raymond WORKFLOW [options], raymond --resume ID, ...
local function parse_old(args, opts)
  opts.command = "run"
  local hint = "see: raymond --help"
  local rest, stop = read(args, 1, all_names(), opts, {
    hint = hint,
    option = function(o)
      if o.command then opts.command = o.command end
      -- As --help and --version end the reading, nothing after them counts.
      return (o.command == "help" or o.command == "version") and o.command
    end,
  })
  if not rest then return nil, stop end
  if stop then return stop, opts end
  if rest[2] then
    return fail(string.format("unexpected argument '%s'", rest[2]),
      "give one WORKFLOW; quote --input text that has spaces")
  end
  opts.workflow = rest[1]
  if opts.command == "run" then
    if not opts.workflow then
      return fail("no workflow given",
        "raymond WORKFLOW (a folder or a state file), or raymond --resume ID; see raymond --help")
    end
    opts.implied = true
  elseif opts.workflow then
    return fail(string.format(
      "a WORKFLOW argument ('%s') cannot go with --resume, --list or --status", opts.workflow))
  end
  if opts.json and opts.command ~= "status" then
    return fail("--json goes with --status", "raymond --status ID --json")
  end
  if opts.user and opts.command ~= "init-config" then
    return fail("--user goes with --init-config", "raymond init-config --user")
  end
  if opts.level then
    return fail("--level goes with raymond lint", "raymond lint WORKFLOW --level " .. opts.level)
  end
  if opts.html or opts.output then
    return fail("--html and --output go with raymond diagram", "raymond diagram PATH --html --output FILE")
  end
  if opts.command == "resume" and opts.name then
    return fail("--name cannot go with --resume: a resumed run keeps the name it was started with")
  end
  return opts.command, opts
end

-- The option names a command accepts, from its groups.
local function accepted(cmd)
  local names = {}
  for _, group in ipairs(cmd.flags or {}) do
    table.move(group, 2, #group, #names + 1, names)
  end
  names[#names + 1] = "help"
  return names
end

-- The new form: raymond NAME [arguments] [options].
local function parse_command(name, args, opts)
  local cmd = commands.load(name)
  local hint = "see: raymond help " .. name
  opts.command = name
  local rest, stop = read(args, 2, accepted(cmd), opts, {
    hint = hint,
    cmd = cmd,
    option = function(o) return o.name == "help" and "help" end,
    refuse = function(flag)
      return string.format("option '%s' does not go with raymond %s", flag, name)
    end,
  })
  if not rest then return nil, stop end
  if stop then
    return "help", { command = "help", topic = name, cwd = opts.cwd }
  end
  local spec = cmd.args or {}
  for i, arg in ipairs(spec) do
    if rest[i] == nil and not arg.optional then return fail(arg.missing, arg.hint) end
    -- The last argument may take all that are left (raymond test PATH...).
    if arg.rest then
      opts[arg.key] = table.move(rest, i, #rest, 1, {})
      return name, opts
    end
    opts[arg.key] = rest[i]
  end
  if rest[#spec + 1] then
    return fail(string.format("unexpected argument '%s'", rest[#spec + 1]), cmd.extra_hint or hint)
  end
  return name, opts
end

function M.parse(args, cwd)
  local opts = { cwd = cwd, quiet = false }
  if commands.by_name[args[1]] then return parse_command(args[1], args, opts) end
  return parse_old(args, opts)
end

return M
