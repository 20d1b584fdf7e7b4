-- raymond.commands.config: `raymond config [--json] [options]`: the
-- settings a run started here would use, and where each comes from: the
-- command line, a config file (FILE:LINE), RAYMOND_CLAUDE or the default.

local raymond = require("raymond")
local cli = require("raymond.cli")
local config = require("raymond.config")
local console = require("raymond.console")

local M = {}

M.usage = { "raymond config [--json] [options]" }

M.options = {
  { name = "json", key = "json", help = "print the settings and the files read as one JSON object" },
}

M.flags = {
  { "config options", "json", "timeout", "max-parallel", "max-agents", "allow-cd" },
  cli.groups.markdown,
  cli.groups.hooks,
  cli.groups.output,
  cli.groups.config,
}

M.help = [[
Shows the settings a run started here with the same options would use, one
per line with where it comes from: the command line, a config file
(FILE:LINE), RAYMOND_CLAUDE, or the default.  A list shows one line per item,
and each launcher the files define under launchers: one line,
launchers.NAME = its base or kind (FILE:LINE).
The config files are the project's, config.yaml in the .raymond folder
where a run started here keeps its runs, and the user's,
$XDG_CONFIG_HOME/raymond/config.yaml (else ~/.config/raymond/config.yaml).
The command line wins over the project's file, and that over the user's;
lists add up.  A value is checked as the option of the same name is, and a
bad one is an error naming the line.  A resumed run keeps the options it was
launched with.  --json prints
{"files": {...}, "settings": {KEY: {"value", "source"} or {"items"}},
"launchers": {NAME: definition}}.
raymond init-config writes a file with every setting; docs/config.md tells
more.]]

local function show(v)
  if v == nil then return "(unset)" end
  if math.type(v) == "float" and v == math.floor(v) and math.abs(v) < 2^53 then
    return string.format("%d", math.tointeger(v))
  end
  return tostring(v)
end

local function text(cfg, from, opts)
  local out = {}
  local function file_line(which, path)
    local f
    for _, file in ipairs(cfg.files) do if file.which == which then f = file end end
    local state = opts.no_config and "not read (--no-config)" or (f and "read" or "none")
    out[#out + 1] = string.format("# %s config: %s (%s)", which, path and console.rel(path, opts.cwd) or "-", state)
  end
  file_line("project", cfg.project_path)
  file_line("user", cfg.user_path)
  for _, k in ipairs(config.KEYS) do
    local got = from[k.key]
    if got and got.items then
      if #got.items == 0 then out[#out + 1] = k.key .. " = (none) (default)" end
      for _, it in ipairs(got.items) do
        out[#out + 1] = string.format("%s = %s (%s)", k.key, it.value, it.source)
      end
    elseif got then
      out[#out + 1] = string.format("%s = %s (%s)", k.key, show(got.value), got.source)
    end
  end
  -- The launchers the files define (docs/cluster.md), by name.
  local names = {}
  for name in pairs(opts.launchers or {}) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    local def = opts.launchers[name]
    local kind = def.base and ("base " .. def.base) or (def.submit and "submit: template" or "run: template")
    out[#out + 1] = string.format("launchers.%s = %s (%s:%d)", name, kind, def.file, def.line)
  end
  return table.concat(out, "\n") .. "\n"
end

local function json(cfg, from, opts)
  local settings = {}
  for key, got in pairs(from) do settings[key] = got end
  local files = {}
  for _, f in ipairs(cfg.files) do files[f.which] = f.path end
  return raymond.json_encode({ files = files, settings = settings, launchers = opts.launchers }) .. "\n"
end

function M.main(opts)
  local from, cfg = config.settle(opts)
  if not from then
    console.error(cfg.msg, nil, cfg.hint)
    return 1
  end
  cfg.project_path = cfg.project_path or select(2, config.project_path(opts.cwd))
  cfg.user_path = cfg.user_path or config.user_path()
  raymond.stdout(raymond.printable(opts.json and json(cfg, from, opts) or text(cfg, from, opts)))
  return 0
end

return M
