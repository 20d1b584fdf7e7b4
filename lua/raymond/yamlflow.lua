-- raymond.yamlflow: a whole workflow in one YAML file.
--
--   states:
--     1_START:
--       prompt: |
--         Plan the change, then <goto>CHECK</goto>.
--       model: sonnet
--       allowed_transitions: [{ tag: goto, target: CHECK }]
--     CHECK:
--       sh: |
--         make test >&2 && echo '<result>ok</result>'
--       timeout: 300
--   hooks:
--     - lua: |
--         return { PreState = function(ev) end }
--     - file: policy/budget.lua
--
-- parse(source, shown) checks the file and returns its model (below), or nil
-- and a message "SHOWN:LINE: ..." naming the line at fault.  The file is
-- the original raymond's format: `states` is a mapping of state names to
-- states; a state has `prompt` (a markdown state) or script keys (`sh`;
-- `ps1` and `bat` are Windows scripts, kept so such a file still loads);
-- a markdown state may have any frontmatter field (raymond.policy, and
-- those the hooks read), a script state only `timeout` and `launcher`
-- (raymond.launchers).  Top-level keys
-- other than `states` and `hooks` are the original's manifest fields,
-- accepted and not used.
--
-- Each state is a virtual file, as in a folder: NAME.md, whose text is the
-- prompt under a frontmatter made of the state's fields, so a markdown
-- state runs exactly as the same file in a folder; or NAME.sh (NAME.ps1,
-- NAME.bat) holding the script.  line_of(file, n) says which line of the
-- YAML file line n of a virtual file comes from, so messages about a
-- state (lint findings, frontmatter errors) name the YAML file's lines: a
-- `|` block's lines are the file's own, one for one; a frontmatter line is
-- its field's line.
--
-- The model:
--   files        virtual file name -> text
--   states       { name =, line =, kind = "markdown" | "script",
--                  file = its (first) virtual file, keys = { key -> line },
--                  extra = { key -> line } (fields neither raymond's nor
--                  a script key, for check_fields), timeout = seconds or
--                  nil, launcher = a script state's launcher: or nil },
--                  in the order written
--   hooks        { { lua = source, line = } | { file = relative path,
--                  line = } }, in the order written
--   shown        the file's name in messages

local raymond = require("raymond")
local policy = require("raymond.policy")
local text = require("raymond.text")

local M = {}

-- Script keys, in the order their virtual files are listed.
M.SCRIPT_KEYS = { "sh", "ps1", "bat" }
local SCRIPT_KEY = { sh = true, ps1 = true, bat = true }

-- The original's manifest fields (for its daemon); accepted, not used.
M.MANIFEST = { "id", "name", "description", "input", "default_budget", "working_directory",
  "environment", "requires_human_input", "backend" }
local TOP = { states = true, hooks = true }
for _, k in ipairs(M.MANIFEST) do TOP[k] = true end

-- The largest YAML workflow read, in bytes.
M.MAX_BYTES = 16 * 1024 * 1024

-- The longest per-state timeout, as --timeout's.
M.MAX_TIMEOUT = 1e7

function M.is_yaml(path) return path:lower():match("%.ya?ml$") ~= nil end

-- --------------------------------------------------------------- emitting

local ESCAPES = { ["\\"] = "\\\\", ['"'] = '\\"', ["\n"] = "\\n", ["\t"] = "\\t", ["\r"] = "\\r" }

-- `s` as a YAML double-quoted scalar on one line.  The YAML line breaks
-- beyond ASCII (U+0085, U+2028, U+2029) are escaped too, or a reader
-- would fold them.
function M.quote(s)
  s = s:gsub('[%c\\"]', function(c) return ESCAPES[c] or string.format("\\x%02X", c:byte()) end)
  s = s:gsub("\xC2\x85", "\\N"):gsub("\xE2\x80\xA8", "\\L"):gsub("\xE2\x80\xA9", "\\P")
  return '"' .. s .. '"'
end

-- A top-level scalar the frontmatter reader types (a number, a boolean)
-- is written plain, so it is typed there as it would be in a folder's
-- file; anything else is quoted and stays the text it is.
local function plain_ok(s)
  if s:match("^[-+]?%d+$") or s:match("^[-+]?%d*%.?%d+[eE]?[-+]?%d*$") then return tonumber(s) ~= nil end
  local w = s:lower()
  return w == "true" or w == "false" or w == "yes" or w == "no" or w == "on" or w == "off"
end

-- `v` (from raymond.yaml: strings, and tables whose keys `lines` knows)
-- as YAML flow text.
local function flow(v, lines, top)
  if type(v) ~= "table" then
    v = tostring(v)
    if top and plain_ok(v) then return v end
    return M.quote(v)
  end
  local keys = {}
  for k in pairs(lines[v] or {}) do keys[#keys + 1] = k end
  if #keys > 0 and math.type(keys[1]) ~= "integer" then
    table.sort(keys, function(a, b) return lines[v][a] < lines[v][b] end)
    local parts = {}
    for _, k in ipairs(keys) do
      if v[k] ~= nil then parts[#parts + 1] = M.quote(k) .. ": " .. flow(v[k], lines) end
    end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  local parts = {}
  for i, x in ipairs(v) do parts[i] = flow(x, lines) end
  return "[" .. table.concat(parts, ", ") .. "]"
end

-- ---------------------------------------------------------------- reading

-- The line of the YAML file on which the value of the key (or element) on
-- `line` starts: the next line for a literal `|` block, whose lines are
-- then the file's one for one; else nil (a one-line or folded value).
local function literal_start(src_lines, line)
  local s = (src_lines[line] or ""):gsub("%s+#.*$", "")
  if s:match("[:%-]%s+|[%d+-]*%s*$") or s:match("^%s*|[%d+-]*%s*$") then return line + 1 end
  return nil
end

local function split_lines(s)
  local out = {}
  for l in (s .. "\n"):gmatch("([^\n]*)\n") do out[#out + 1] = l end
  return out
end

local keys_by_line = text.keys_by_line

local function is_list(t, lines)
  local k = next(lines[t] or {})
  return k == nil and t[1] ~= nil or math.type(k) == "integer"
end

local function what(v, lines)
  if type(v) ~= "table" then return "a single value" end
  return is_list(v, lines) and "a list" or "a mapping"
end

local function known_field(k) return policy.fields[k] ~= nil end

-- A state name a run can use as a file name stem.
local function name_error(name)
  if name == "" then return "a state name must not be empty" end
  if name:find("[/\\]") then return "state name '" .. name .. "' must not contain a path separator" end
  if name == "." or name == ".." or name:find("%c") then return "'" .. name .. "' is not a state name" end
  local stem, ext = name:match("^(.+)%.(%w+)$")
  if stem and (ext == "md" or SCRIPT_KEY[ext]) then
    return string.format("state name '%s' ends in .%s; write it without the extension ('%s'): "
      .. "the kind comes from its keys", name, ext, stem)
  end
  return nil
end

-- The model of a markdown state `st` with fields `t`: its virtual file
-- and the map of that file's lines.
local function markdown_file(m, st, t, lines, src_lines)
  local fm, map = {}, {}
  local function add(line_text, yaml_line)
    fm[#fm + 1] = line_text
    map[#fm + 1] = yaml_line
  end
  for _, k in ipairs(keys_by_line(t, lines)) do
    local v = t[k]
    if k ~= "prompt" and v ~= nil then
      -- A list (allowed_transitions) gets a line per entry, each mapped
      -- to the entry's own line, so a finding about one names it.
      if type(v) == "table" and v[1] ~= nil and is_list(v, lines) then
        add(k .. ":", lines[t][k])
        for i, x in ipairs(v) do add("  - " .. flow(x, lines), lines[v][i]) end
      else
        add(k .. ": " .. flow(v, lines, true), lines[t][k])
      end
    end
  end
  local prompt = t.prompt
  local body = literal_start(src_lines, lines[t].prompt)
  local file_text = prompt
  -- A prompt starting with a fence line gets an empty frontmatter, or its
  -- first lines would be read as one.
  if #fm > 0 or prompt:match("^%-%-%-[ \t]*\r?\n") or prompt:match("^%-%-%-[ \t]*$") then
    map[1] = st.line
    map[#fm + 2] = st.line
    file_text = "---\n" .. table.concat(fm, "\n") .. (#fm > 0 and "\n" or "") .. "---\n" .. prompt
  end
  local skip = file_text ~= prompt and #fm + 2 or 0
  st.file = st.name .. ".md"
  m.files[st.file] = file_text
  m.maps[st.file] = function(n)
    if map[n] then return map[n] end
    if n > skip and body then return body + n - skip - 1 end
    return lines[t].prompt
  end
end

local function script_files(m, st, t, lines, src_lines)
  for _, k in ipairs(M.SCRIPT_KEYS) do
    if t[k] ~= nil then
      local file = st.name .. "." .. k
      st.file = st.file or file
      m.files[file] = t[k]
      local body = literal_start(src_lines, lines[t][k])
      m.maps[file] = function(n) return body and (body + n - 1) or lines[t][k] end
    end
  end
end

local function timeout_of(v)
  local n = type(v) == "string" and tonumber(v)
  if not n or n ~= n or n < 0 or n > M.MAX_TIMEOUT then return nil end
  return n
end

-- Check state `name` (its mapping `t` starting on `line`) into m.
local function read_state(m, name, t, line, lines, src_lines)
  local at = m.shown .. ":" .. line .. ": "
  local bad = name_error(name)
  if bad then return at .. bad end
  if type(t) ~= "table" or is_list(t, lines) then
    return at .. string.format("state %s must be a mapping of keys (prompt: or sh:, then its fields), "
      .. "not %s", name, t == nil and "empty" or what(t, lines))
  end
  local st = { name = name, line = line, keys = {}, extra = {} }
  local scripts = {}
  for _, k in ipairs(keys_by_line(t, lines)) do
    st.keys[k] = lines[t][k]
    if SCRIPT_KEY[k] then scripts[#scripts + 1] = k end
  end
  local function here(k) return m.shown .. ":" .. (st.keys[k] or line) .. ": " end
  if t.prompt ~= nil and #scripts > 0 then
    return here(scripts[1]) .. string.format("state %s has both prompt and %s: a state is a prompt or a "
      .. "script, not both", name, scripts[1])
  end
  if t.prompt == nil and #scripts == 0 then
    return at .. string.format("state %s has neither prompt nor sh: give it a prompt (a markdown state) "
      .. "or an sh script", name)
  end
  for _, k in ipairs(t.prompt ~= nil and { "prompt" } or scripts) do
    if type(t[k]) ~= "string" or t[k] == "" then
      return here(k) .. string.format("%s of state %s must be non-empty text, not %s", k, name,
        type(t[k]) == "string" and "empty" or what(t[k], lines))
    end
  end
  for _, k in ipairs({ "prompt", table.unpack(M.SCRIPT_KEYS) }) do
    if st.keys[k] and t[k] == nil then
      return here(k) .. string.format("%s of state %s has no value", k, name)
    end
  end
  if t.timeout ~= nil then
    st.timeout = timeout_of(t.timeout)
    if not st.timeout then
      return here("timeout") .. string.format("timeout of state %s must be a number of seconds from 0 "
        .. "(no limit) to %g, got %s", name, M.MAX_TIMEOUT, type(t.timeout) == "string"
        and ("'" .. t.timeout .. "'") or what(t.timeout, lines))
    end
  end
  if #scripts > 0 and t.launcher ~= nil then
    local why = require("raymond.launchers").spec_error(t.launcher)
    if why then return here("launcher") .. string.format("state %s: %s", name, why) end
    st.launcher = t.launcher
  end
  for _, k in ipairs(keys_by_line(t, lines)) do
    if k ~= "prompt" and k ~= "timeout" and not (SCRIPT_KEY[k] or (#scripts > 0 and k == "launcher")) then
      if #scripts > 0 then
        return here(k) .. string.format("script state %s may not have %s: only a prompt has %s", name, k,
          known_field(k) and "policy fields" or "fields (a script state has sh, timeout and launcher)")
      end
      if not known_field(k) then st.extra[k] = lines[t][k] end
    end
  end
  if #scripts > 0 then
    st.kind = "script"
    script_files(m, st, t, lines, src_lines)
  else
    st.kind = "markdown"
    markdown_file(m, st, t, lines, src_lines)
    -- The fields raymond knows, checked now, each naming its own line:
    -- the same checks a run makes when the state runs.
    local meta, err = raymond.frontmatter(m.files[st.file], policy.types())
    if not meta then return at .. err end
    for k in pairs(meta) do
      if known_field(k) then
        local _, perr = policy.parse({ [k] = meta[k] }, m.shown .. ":" .. st.keys[k])
        if type(perr) == "string" then return perr end
      end
    end
    local known = {}
    for k, v in pairs(meta) do if known_field(k) then known[k] = v end end
    local _, perr = policy.parse(known, m.shown .. ":" .. line)
    if type(perr) == "string" then return perr end
  end
  m.states[#m.states + 1] = st
  m.by_name[name] = st
  return nil
end

local function read_hooks(m, v, line, lines, src_lines)
  local at = m.shown .. ":" .. line .. ": "
  local function embedded(source, l)
    return { lua = source, line = literal_start(src_lines, l) or l }
  end
  if type(v) == "string" then
    m.hooks[1] = embedded(v, line)
    return nil
  end
  if type(v) ~= "table" or not is_list(v, lines) then
    return at .. "hooks must be Lua text, or a list of {lua: TEXT} and {file: PATH} entries"
  end
  for i, e in ipairs(v) do
    local l = lines[v][i]
    local here = m.shown .. ":" .. l .. ": "
    if type(e) == "string" then
      m.hooks[#m.hooks + 1] = embedded(e, l)
    elseif type(e) ~= "table" or is_list(e, lines) then
      return here .. string.format("hooks[%d] must be {lua: TEXT} or {file: PATH}", i)
    else
      local keys = keys_by_line(e, lines)
      if #keys ~= 1 or (keys[1] ~= "lua" and keys[1] ~= "file") then
        return here .. string.format("hooks[%d] must have exactly one key, lua (the hook's text) or file "
          .. "(a path relative to this file)", i)
      end
      local k = keys[1]
      local s = e[k]
      if type(s) ~= "string" or s == "" then
        return here .. string.format("hooks[%d] %s must be non-empty text", i, k)
      end
      if k == "lua" then
        m.hooks[#m.hooks + 1] = embedded(s, lines[e].lua)
      else
        if s:sub(1, 1) == "/" or ("/" .. s .. "/"):find("/%.%./") then
          return here .. string.format("hooks[%d] file '%s' must be a path inside the YAML file's folder, "
            .. "relative to it, without ..", i, s)
        end
        m.hooks[#m.hooks + 1] = { file = s, line = l }
      end
    end
  end
  return nil
end

-- The model of YAML text `source`, `shown` naming the file in messages; or
-- nil and a message.
function M.parse(source, shown)
  local doc, lines = raymond.yaml(source, shown)
  if not doc then return nil, lines end
  local src_lines = split_lines(source)
  local m = { files = {}, maps = {}, states = {}, by_name = {}, hooks = {}, shown = shown }
  local top_keys = keys_by_line(doc, lines)
  if doc.states == nil then
    -- States written at the top, without the wrapper: say so.
    for _, k in ipairs(top_keys) do
      local v = doc[k]
      if type(v) == "table" and (v.prompt ~= nil or v.sh ~= nil or v.ps1 ~= nil or v.bat ~= nil) then
        return nil, string.format("%s:%d: '%s' looks like a state, but states go under a top-level "
          .. "states: key; indent them under states:", shown, lines[doc][k], k)
      end
    end
    local l = lines[doc].states
    return nil, string.format("%s:%d: %s", shown, l or 1, l and "states has no value"
      or "no states: key; a YAML workflow is a mapping with states: NAME: {prompt: ...} or {sh: ...}")
  end
  for _, k in ipairs(top_keys) do
    if not TOP[k] then
      return nil, string.format("%s:%d: unknown top-level key '%s'; a YAML workflow has states:, hooks: "
        .. "and the manifest keys %s", shown, lines[doc][k], k, table.concat(M.MANIFEST, ", "))
    end
  end
  local states = doc.states
  local sline = lines[doc].states
  if type(states) ~= "table" or is_list(states, lines) then
    return nil, string.format("%s:%d: states must be a mapping of state names to states, not %s", shown,
      sline, what(states, lines))
  end
  local names = keys_by_line(states, lines)
  if #names == 0 then
    return nil, string.format("%s:%d: states is empty; give at least one state", shown, sline)
  end
  for _, name in ipairs(names) do
    local err = read_state(m, name, states[name], lines[states][name], lines, src_lines)
    if err then return nil, err end
  end
  if doc.hooks ~= nil then
    local err = read_hooks(m, doc.hooks, lines[doc].hooks, lines, src_lines)
    if err then return nil, err end
  end
  return m
end

-- nil when every field of every markdown state is one raymond or a hook
-- (`extra`: field -> type, as raymond.hooks gathers them) reads; else a
-- message naming the line of the first that is not.
function M.check_fields(m, extra)
  local first
  for _, st in ipairs(m.states) do
    for k, line in pairs(st.extra) do
      if not (extra and extra[k]) and (not first or line < first.line) then
        first = { line = line, key = k, state = st.name }
      end
    end
  end
  if not first then return nil end
  local best, best_d
  local names = { "prompt", "sh" }
  for k in pairs(policy.fields) do names[#names + 1] = k end
  for k in pairs(extra or {}) do names[#names + 1] = k end
  table.sort(names)
  for _, k in ipairs(names) do
    local d = text.distance(first.key:lower(), k)
    if d <= 2 and d < #k and (not best_d or d < best_d) then best, best_d = k, d end
  end
  return string.format("%s:%d: state %s has an unknown key '%s'%s; a markdown state has prompt, the "
    .. "frontmatter fields of docs/authoring.md and those its hooks read", m.shown, first.line, first.state,
    first.key, best and string.format(" (did you mean '%s'?)", best) or "")
end

return M
