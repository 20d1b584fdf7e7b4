-- raymond.launchers.template: command templates, and the launchers a
-- config file defines with them (docs/cluster.md).
--
--   local defs, err = template.parse(value, lines, shown, line)
--   local argv = template.expand(list, values, resources)
--
-- A template is a list of strings, an argv.  Each element may hold
-- placeholders, {NAME} with NAME one of M.PLACEHOLDERS: expand replaces
-- them with `values`; an element with a placeholder that has no value is
-- left out (so "--namespace={namespace}" goes when no namespace is
-- given), and an element that is exactly {resources} becomes the list
-- `resources` (the launcher's resource options).  An unknown placeholder
-- is an error when the config is read, naming FILE:LINE, the launcher
-- and the element: a typo must not quietly drop an argument.

local text = require("raymond.text")

local M = {}

M.PLACEHOLDERS = { "job", "cwd", "spool", "script", "command", "host", "image", "namespace", "partition",
                   "cpus", "mem", "time", "gpus", "resources" }
local KNOWN = {}
for _, p in ipairs(M.PLACEHOLDERS) do KNOWN[p] = true end

-- The keys a configured launcher may have: its templates, the list of
-- variables it passes, and its settings.
M.LISTS = { run = true, submit = true, status = true, cancel = true, env = true, args = true }
M.SETTINGS = { base = true, host = true, image = true, namespace = true, partition = true, cpus = true,
               mem = true, time = true, gpus = true, check = true, grace = true }
M.NUMBERS = { cpus = true, gpus = true, check = true, grace = true }

-- The first unknown placeholder in `s`, or nil.
function M.unknown(s)
  for name in s:gmatch("{([^{}]*)}") do
    if not KNOWN[name] then return name end
  end
  return nil
end

-- `list` with `values` filled in (see the top of this file).
function M.expand(list, values, resources)
  local out = {}
  for _, el in ipairs(list) do
    if el == "{resources}" then
      for _, r in ipairs(resources or {}) do out[#out + 1] = r end
    else
      local missing = false
      local s = el:gsub("{([%w_]+)}", function(name)
        local v = values[name]
        if v == nil or v == "" then missing = true return "" end
        return tostring(v)
      end)
      if not missing then out[#out + 1] = s end
    end
  end
  return out
end

-- An argv as one shell-quoted string ({command}).
function M.command(argv)
  local parts = {}
  for i, a in ipairs(argv) do parts[i] = text.sh_quote(a) end
  return table.concat(parts, " ")
end

M.NAME = "^[A-Za-z0-9_.-]+$"

local function is_list(t, lines)
  return type(t) == "table" and (next(t) == nil or type(next(lines[t] or {})) == "number")
end

-- One launcher's definition `t` (the mapping under its name) as a table
-- of plain values, or nil and "message", line.
local function parse_one(name, t, lines, line, builtins)
  if not name:find(M.NAME) then
    return nil, string.format("launcher name '%s' may hold only letters, digits, '_', '.' and '-'", name), line
  end
  if name == "local" then return nil, "the local launcher has no settings to configure", line end
  if type(t) ~= "table" or is_list(t, lines) then
    return nil, string.format("launchers: %s must be a mapping of its settings (base:, run: or submit:, ...)",
      name), line
  end
  local def = { name = name }
  for key, v in pairs(t) do
    local at = lines[t][key] or line
    local where = string.format("launchers: %s: %s", name, key)
    if M.LISTS[key] then
      if not is_list(v, lines) then return nil, where .. " must be a list, for example [a, b]", at end
      local list = {}
      for i, el in ipairs(v) do
        local el_at = lines[v][i] or at
        if type(el) ~= "string" then return nil, string.format("%s: item %d must be text, not a list or mapping",
          where, i), el_at end
        local bad = key ~= "env" and M.unknown(el)
        if bad then
          return nil, string.format("%s: unknown placeholder {%s} in '%s'; the placeholders are {%s}", where, bad,
            el, table.concat(M.PLACEHOLDERS, "}, {")), el_at
        end
        if key == "env" and not el:find("^[A-Za-z_][A-Za-z0-9_]*$") then
          return nil, string.format("%s: '%s' is not a variable name", where, el), el_at
        end
        list[i] = el
      end
      def[key] = list
    elseif M.SETTINGS[key] then
      if type(v) ~= "string" or v == "" then return nil, where .. " must be a single value", at end
      if M.NUMBERS[key] and not (tonumber(v) and tonumber(v) >= 0) then
        return nil, string.format("%s must be a number, not '%s'", where, v), at
      end
      if M.unknown(v) then return nil, string.format("%s: '%s' may hold no placeholder", where, v), at end
      def[key] = v
    else
      local keys = {}
      for k in pairs(M.LISTS) do keys[#keys + 1] = k end
      for k in pairs(M.SETTINGS) do keys[#keys + 1] = k end
      table.sort(keys)
      return nil, string.format("launchers: %s: unknown key '%s'; a launcher has %s", name, key,
        table.concat(keys, ", ")), at
    end
  end
  if def.base == nil and builtins[name] then def.base = name end
  if def.base ~= nil then
    local b = builtins[def.base]
    if not b or def.base == "local" then
      return nil, string.format("launchers: %s: base '%s' is not a built-in launcher (slurm, ssh, kubernetes)",
        name, def.base), lines[t].base or line
    end
    if b.needs and not def[b.needs] then
      return nil, string.format("launchers: %s: a %s launcher needs %s:", name, def.base, b.needs), line
    end
  elseif def.run and def.submit then
    return nil, string.format("launchers: %s has both run: and submit:; a launcher streams (run:) or "
      .. "submits (submit:, status:, cancel:)", name), line
  elseif def.submit then
    if not def.status or not def.cancel then
      return nil, string.format("launchers: %s: a submit: launcher needs status: and cancel: too", name), line
    end
  elseif not def.run then
    return nil, string.format("launchers: %s needs base: (slurm, ssh, kubernetes), run: or submit:", name), line
  end
  def.line = line
  return def
end

-- The launchers: mapping of a config file, `value` with its `lines`
-- (raymond.yaml), as name -> definition; or nil and "SHOWN:LINE: ...".
-- `builtins` is name -> built-in launcher.
function M.parse(value, lines, shown, line, builtins)
  if type(value) ~= "table" or is_list(value, lines) then
    return nil, string.format("%s:%d: launchers must be a mapping of launcher names to their settings",
      shown, line)
  end
  local defs = {}
  for name, t in pairs(value) do
    local def, msg, at = parse_one(name, t, lines, lines[value][name] or line, builtins)
    if not def then return nil, string.format("%s:%d: %s", shown, at or line, msg) end
    def.file = shown
    defs[name] = def
  end
  return defs
end

return M
