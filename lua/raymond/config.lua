-- raymond.config: settings from config files (docs/config.md).
--
--   local cfg, err = config.load(cwd)     -- the files found, read, checked
--   local from = config.apply(opts, cfg [, only])
--   local from, err = config.settle(opts [, only])   -- load, warn, apply
--
-- Two files are read: the project's, config.yaml in the .raymond folder
-- that holds the runs (raymond.workspace.find_root), and the user's,
-- $XDG_CONFIG_HOME/raymond/config.yaml (else ~/.config/raymond/config.yaml).
-- Each holds a mapping `raymond:` of the settings in M.KEYS, and maybe
-- `launchers:`, the launchers it defines (raymond.launchers.template),
-- which add up by name, the project's winning, into opts.launchers.  A
-- setting the command line gives wins, else the project's, else the user's, else
-- raymond's default.  Lists (allow_cd, hooks) add up instead: the user's,
-- then the project's, then the command line's.  Booleans can be true or
-- false in a file (the project's false beats the user's true); as the
-- command line has only the switch that turns one on, --no-config is the
-- way to run once without a file's true, but for the flags that also
-- take =false (--dangerously-skip-permissions=false).
--
-- A value is checked as the command line checks the option of the same
-- name (raymond.cli's take), and a bad one is an error naming FILE:LINE,
-- as is YAML that cannot be read: a setting written down must not be
-- dropped without the user knowing, least of all a budget.  Unknown keys
-- only warn (with FILE:LINE and the key it may be a typo of), so a file
-- written for a later raymond still works.
--
-- `cfg` = { files = { file, ... } } lowest precedence first, each file
-- { which = "user" or "project", path, shown, values = { key = value } },
-- a value being { value =, line = } or, for a list, { items = { { value =,
-- line = }, ... } }, plus `warnings` ({ line =, text = }, by line).  apply fills the unset options of
-- `opts` (the command line's, see raymond.cli) and returns where each
-- setting came from: from[key] = { value =, source = } with source
-- "command line", "default", "RAYMOND_CLAUDE" or "FILE:LINE", and for a
-- list from[key] = { items = { { value =, source = }, ... } }.  `only`, a
-- set of keys, limits apply to those (a resume reads only `quiet`).

local raymond = require("raymond")
local cli = require("raymond.cli")
local console = require("raymond.console")
local engine = require("raymond.engine")
local launchers = require("raymond.launchers")
local template = require("raymond.launchers.template")
local text = require("raymond.text")
local workspace = require("raymond.workspace")

local M = {}

-- A config file is a page of settings; a file far larger is a mistake
-- (or not a config file), refused unread.
M.MAX_BYTES = 1024 * 1024

-- Every setting, in the order init-config writes them:
--   key      the key under raymond:
--   option   the command-line option it stands for (raymond.cli)
--   default  its value when nothing gives one (nil: the Claude CLI's own)
--   example  a value to show in hints and the commented file, when there
--            is no default
--   path     its values are paths, taken from the file's base folder
--   doc      one line on what it does
--   ignored  a key of the original raymond that this one does not
--            support: why it is ignored
M.KEYS = {
  { key = "budget", option = "budget", default = engine.DEFAULTS.budget,
    doc = "stop the run once it has spent this much, in USD (0 = no limit)" },
  { key = "timeout", option = "timeout", default = engine.DEFAULTS.timeout,
    doc = "stop a state that prints nothing for this many seconds (0 = no limit)" },
  { key = "model", option = "model", example = "sonnet",
    doc = "model for markdown states whose frontmatter names none (haiku, sonnet, opus, or an id)" },
  { key = "effort", option = "effort", example = "high",
    doc = "effort for markdown states whose frontmatter names none: low, medium, high, xhigh or max" },
  { key = "dangerously_skip_permissions", option = "dangerously-skip-permissions", default = false,
    doc = "let Claude run any tool without asking (else it may only edit files)" },
  { key = "name", option = "name", example = "nightly review",
    doc = "a name for new runs: shown by list and status, and in the terminal's title" },
  { key = "on_ask", option = "on-ask", default = "reject",
    doc = "what an <ask> does: reject (refuse the workflow), pause (save, exit 2), prompt" },
  { key = "no_wait", option = "no-wait", default = false,
    doc = "stop at a usage limit instead of waiting for its reset" },
  { key = "no_debug", option = "no-debug", default = false,
    doc = "keep no per-step record in .raymond/debug/" },
  { key = "quiet", option = "quiet", default = false,
    doc = "print no progress, only errors and the workflow's output" },
  { key = "max_parallel", option = "max-parallel", default = engine.DEFAULTS.max_parallel,
    doc = "run at most this many states at once (0 = no limit)" },
  { key = "max_agents", option = "max-agents", default = engine.MAX_AGENTS,
    doc = "stop the run when a fork would make more live agents than this (0 = no limit)" },
  -- hooks/loops.lua's threshold when neither gives one.
  { key = "max_repeats", option = "max-repeats", default = 3,
    doc = "stop when a markdown state gives the same reply this many times in a row (0 = off)" },
  { key = "claude", option = "claude", path = true, default = "claude",
    doc = "the claude executable; RAYMOND_CLAUDE in the environment wins over this" },
  { key = "allow_cd", option = "allow-cd", path = true, default = {},
    doc = "more directories cd= may lead into, besides the one the run started in" },
  { key = "hooks", option = "hooks", path = true, default = {},
    doc = "hook files to load after the default hooks and the workflow's" },
  { key = "no_default_hooks", option = "no-default-hooks", default = false,
    doc = "leave out the built-in hooks (budget, max_visits, evaluate, loop detection)" },
  { key = "launcher", option = "launcher", default = "local",
    doc = "where states run that name no launcher (local, slurm, ssh, kubernetes, or configured)" },
  { key = "verbose", ignored = "raymond shows progress unless quiet is set" },
  { key = "task_folder_pattern", ignored = "raymond makes no task folders" },
}

M.by_key = {}
for _, k in ipairs(M.KEYS) do M.by_key[k.key] = k end

-- ------------------------------------------------------------------ finding

local function dirname(path)
  local d = path:match("^(.*)/[^/]*$")
  return (d == nil or d == "") and "/" or d
end

-- The project's config file: config.yaml in the .raymond folder where
-- the runs go (raymond.workspace.find_root), so a file above the project
-- root is never read.  Returns the path if something is there (anything
-- by that name, so a broken link is reported), and where the file goes
-- in any case.
function M.project_path(cwd)
  local path = workspace.find_root(cwd) .. "/config.yaml"
  return raymond.stat(path, true) and path or nil, path
end

-- Where the user's config file is, whether or not it exists.  An
-- XDG_CONFIG_HOME that is not absolute is ignored, as the XDG spec says.
function M.user_path()
  local xdg = os.getenv("XDG_CONFIG_HOME")
  if xdg and xdg:sub(1, 1) == "/" then return xdg .. "/raymond/config.yaml" end
  local home = os.getenv("HOME")
  if home and home ~= "" then return home .. "/.config/raymond/config.yaml" end
  return nil
end

-- ------------------------------------------------------------------ reading

local BOOLEANS = { ["true"] = true, yes = true, on = true, ["false"] = false, no = false, off = false }

-- "a list" or "a mapping", for table `t` read with `lines`.
local function shape(t, lines)
  local first = next(lines[t] or {})
  return type(first) == "number" and "a list" or "a mapping"
end

-- Check a list setting's value (one path stands for a list of one).
-- Returns what the file's values table keeps, or nil, the message
-- (without FILE:LINE), a hint and the line at fault if not `line`.
local function check_list(k, o, value, line, lines, base)
  if type(value) == "string" then value = { value } lines[value] = { line } end
  if shape(value, lines) ~= "a list" and next(value) ~= nil then
    return nil, string.format("%s must be a list of paths, not a mapping", k.key),
      string.format("for example: %s: [path, path]", k.key)
  end
  local items = {}
  for i, v in ipairs(value) do
    local at = lines[value][i] or line
    if type(v) ~= "string" then
      return nil, string.format("%s: item %d must be a path, not %s", k.key, i, shape(v, lines)), nil, at
    end
    if v == "" then return nil, string.format("%s: item %d is empty", k.key, i), nil, at end
    local path = v:sub(1, 1) == "/" and v or base .. "/" .. v
    local want = o.name == "allow-cd" and "dir" or "file"
    if raymond.stat(path) ~= want then
      return nil, string.format("%s: '%s' is not a %s", k.key, path, want == "dir" and "directory" or "file"),
        "relative paths are taken from " .. base, at
    end
    items[i] = { value = path, line = at }
  end
  if #items > o.many then
    return nil, string.format("more than %d %s in %s", o.many, o.too_many[1], k.key), o.too_many[2]
  end
  return { items = items, line = line }
end

-- Check one setting's value, as check_list does.
local function check(k, value, line, lines, base)
  local o = cli.by_name[k.option]
  if o.many then return check_list(k, o, value, line, lines, base) end
  if type(value) ~= "string" then
    return nil, string.format("%s must be a single value, not %s", k.key, shape(value, lines)),
      string.format("for example: %s: %s", k.key, tostring(k.example or k.default))
  end
  if not o.arg then
    local b = BOOLEANS[value:lower()]
    if b == nil then
      return nil, string.format("%s must be true or false, not '%s'", k.key, value),
        string.format("for example: %s: true", k.key)
    end
    return { value = b, line = line }
  end
  local scratch = {}
  local ok, err = cli.take(scratch, o, value, k.key)
  if not ok then return nil, err.msg, err.hint end
  value = scratch[o.key]
  if k.path and value:find("/", 1, true) and value:sub(1, 1) ~= "/" then value = base .. "/" .. value end
  return { value = value, line = line }
end

-- The known key `key` may be a typo of, for "did you mean".
local function suggest(key)
  local norm = key:lower():gsub("-", "_")
  for _, k in ipairs(M.KEYS) do
    local o = k.option and cli.by_name[k.option]
    if norm == k.key or (o and norm == o.key) then return k.key end
  end
  local best, best_d
  for _, k in ipairs(M.KEYS) do
    local d = text.distance(norm, k.key)
    if d <= 2 and d < #k.key and (not best_d or d < best_d) then best, best_d = k.key, d end
  end
  return best
end

local keys_by_line = text.keys_by_line

-- Read and check one file.  Returns the file table, or nil and an error.
local function read(which, path, cwd, base)
  local shown = console.rel(path, cwd)
  local data, rerr = raymond.read_file(path, M.MAX_BYTES)
  if not data then
    return nil, { msg = rerr, hint = "make " .. shown .. " a readable file of settings, or run with --no-config" }
  end
  local doc, lines = raymond.yaml(data, shown)
  local hint = "fix the file, or run with --no-config; see raymond help config"
  if not doc then return nil, { msg = lines, hint = hint } end
  local file = { which = which, path = path, shown = shown, values = {}, warnings = {} }
  local function warn(line, fmt, ...)
    file.warnings[#file.warnings + 1] = { line = line, text = string.format("%s:%d: ", shown, line)
      .. string.format(fmt, ...) }
  end
  for _, key in ipairs(keys_by_line(doc, lines)) do
    if key ~= "raymond" then
      local line = lines[doc][key]
      if M.by_key[key] then
        warn(line, "'%s' is outside raymond: and is ignored; indent it under raymond:", key)
      else
        local near = text.distance(key:lower(), "raymond") <= 2 and "; did you mean 'raymond'?" or ""
        warn(line, "unknown key '%s' is ignored (settings go under raymond:)%s", key, near)
      end
    end
  end
  local top = doc.raymond
  if top == nil then return file end
  local top_line = lines[doc].raymond
  if type(top) ~= "table" or shape(top, lines) == "a list" then
    return nil, { msg = string.format("%s:%d: raymond must be a mapping of key: value, not %s", shown, top_line,
      type(top) == "table" and "a list" or "a single value"), hint = "write raymond: on a line of its own and each setting below it, indented: '  budget: 5'" }
  end
  for _, key in ipairs(keys_by_line(top, lines)) do
    local line, value, k = lines[top][key], top[key], M.by_key[key]
    if key == "launchers" and value ~= nil then
      local defs, lerr = template.parse(value, lines, shown, line, launchers.BUILTIN)
      if not defs then return nil, { msg = lerr, hint = "see docs/cluster.md; fix the file, or run with --no-config" } end
      file.launchers = defs
    elseif not k then
      local near = suggest(key)
      warn(line, "unknown key '%s' is ignored%s", key, near and string.format("; did you mean '%s'?", near) or "")
    elseif k.ignored then
      warn(line, "%s is not supported by raymond yet and is ignored (%s)", key, k.ignored)
    elseif value == nil then
      warn(line, "%s has no value and is ignored", key)
    else
      local v, msg, vhint, at = check(k, value, line, lines, base)
      if not v then
        return nil, { msg = string.format("%s:%d: %s", shown, at or line, msg), hint = vhint or hint }
      end
      file.values[key] = v
    end
  end
  table.sort(file.warnings, function(a, b) return a.line < b.line end)
  return file
end

-- The config files for a command run in `cwd`, read and checked: the
-- user's, then the project's.  nil and an error for the first bad one.
function M.load(cwd)
  local cfg = { files = {}, project_path = M.project_path(cwd), user_path = M.user_path() }
  local user, project = cfg.user_path, cfg.project_path
  -- A user file that is the project's file (a config in ~/.config's
  -- project, a link) is read once, as the project's.
  local real = user and project and raymond.realpath(user)
  if real and real == raymond.realpath(project) then user = nil end
  if user and raymond.stat(user, true) then
    local file, err = read("user", user, cwd, dirname(user))
    if not file then return nil, err end
    cfg.files[#cfg.files + 1] = file
  end
  if project then
    local file, err = read("project", project, cwd, dirname(dirname(project)))
    if not file then return nil, err end
    cfg.files[#cfg.files + 1] = file
  end
  return cfg
end

-- Print every file's warnings on stderr.
function M.warn(cfg)
  for _, f in ipairs(cfg.files) do
    for _, w in ipairs(f.warnings) do console.warn("%s", w.text) end
  end
end

-- ------------------------------------------------------------------ applying

-- Setting `k` from the file of highest precedence that gives it, else
-- its default: { value =, source = }.
local function highest(cfg, k)
  local got = { value = k.default, source = "default" }
  for _, f in ipairs(cfg.files) do
    local v = f.values[k.key]
    if v then got = { value = v.value, source = string.format("%s:%d", f.shown, v.line) } end
  end
  return got
end

-- A list setting: every file's items, then the command line's.
local function apply_list(opts, cfg, k, o)
  local items = {}
  for _, f in ipairs(cfg.files) do
    for _, it in ipairs(f.values[k.key] and f.values[k.key].items or {}) do
      items[#items + 1] = { value = it.value, source = string.format("%s:%d", f.shown, it.line) }
    end
  end
  local merged = {}
  for i, it in ipairs(items) do merged[i] = it.value end
  for _, v in ipairs(opts[o.key] or {}) do
    items[#items + 1] = { value = v, source = "command line" }
    merged[#merged + 1] = v
  end
  if #merged > o.many then
    return nil, { msg = string.format("more than %d %s in all, with the config files' %s", o.many, o.too_many[1],
      k.key), hint = o.too_many[2] }
  end
  if #merged > 0 then opts[o.key] = merged end
  return { items = items }
end

-- A boolean: a file's true turns it on unless a file above says false;
-- the command line can only turn it on, but for a flag that takes
-- =false (cli's `boolean`), which turns it off.
local function apply_boolean(opts, cfg, k, o)
  local on = o.value == nil and true or o.value
  if opts[o.key] == on then return { value = true, source = "command line" } end
  if o.boolean and opts[o.key] == false then return { value = false, source = "command line" } end
  local got = highest(cfg, k)
  if got.value then opts[o.key] = on end
  return got
end

local function apply_value(opts, cfg, k, o)
  if opts[o.key] ~= nil then return { value = opts[o.key], source = "command line" } end
  if k.key == "claude" and os.getenv("RAYMOND_CLAUDE") then
    return { value = os.getenv("RAYMOND_CLAUDE"), source = "RAYMOND_CLAUDE" }
  end
  local got = highest(cfg, k)
  if got.source ~= "default" then opts[o.key] = got.value end
  return got
end

-- Fill the options `opts` leaves unset from `cfg`; returns where each
-- setting came from, or nil and an error.
function M.apply(opts, cfg, only)
  local from = {}
  for _, k in ipairs(M.KEYS) do
    if not k.ignored and (not only or only[k.key]) then
      local o = cli.by_name[k.option]
      local got, err
      if o.many then
        got, err = apply_list(opts, cfg, k, o)
      elseif not o.arg then
        got = apply_boolean(opts, cfg, k, o)
      else
        got = apply_value(opts, cfg, k, o)
      end
      if not got then return nil, err end
      from[k.key] = got
    end
  end
  -- Configured launchers add up by name, the project's winning.
  if not only or only.launchers then
    for _, f in ipairs(cfg.files) do
      for name, def in pairs(f.launchers or {}) do
        opts.launchers = opts.launchers or {}
        opts.launchers[name] = def
      end
    end
  end
  return from
end

-- Load (unless --no-config), warn and apply: what a command does.
function M.settle(opts, only)
  local cfg = { files = {} }
  if not opts.no_config then
    local err
    cfg, err = M.load(opts.cwd)
    if not cfg then return nil, err end
    M.warn(cfg)
  end
  local from, err = M.apply(opts, cfg, only)
  if not from then return nil, err end
  return from, cfg
end

return M
