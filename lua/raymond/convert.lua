-- raymond.convert: a workflow folder or archive as one YAML workflow
-- (raymond.yamlflow), which runs as the folder does.
--
--   local text, err, warnings = convert.yaml(path, cwd)
--
-- States come in the order a run meets them (the entry, then breadth
-- first along the transitions written in them), then the rest by name.  A
-- prompt's frontmatter is copied as written, comments and quoting kept,
-- indented under its state; the prompt and each script become literal
-- blocks (`|`), so their lines read as in the files, or a quoted string
-- when they hold characters a block cannot (a CR, a control character).
-- hooks.lua and hooks/*.lua become hooks: entries, in the order a run
-- loads them, and the original's manifest (workflow.yaml) its top keys.
-- Anything else the folder holds cannot be carried, and is refused rather
-- than dropped: a script may read it from $RAYMOND_STATE_DIR.  A script
-- that names $RAYMOND_STATE_DIR or $RAYMOND_STATE_FILE is converted with a
-- warning: in a YAML workflow the first is the YAML file's folder and the
-- second a private copy, so what it finds there may differ.

local raymond = require("raymond")
local analyse = require("raymond.analyse")
local states = require("raymond.states")
local yamlflow = require("raymond.yamlflow")

local M = {}

local FOREIGN = { bat = true, ps1 = true }

-- The files of the scope: dir -> name -> true, with hooks/*.lua as
-- "hooks/NAME"; or nil and the list of what cannot be converted.
local function list(scope)
  local names, other = {}, {}
  if scope.kind == "zip" then
    for name in pairs(scope.files) do names[name] = true end
    return names, other
  end
  for _, name in ipairs(raymond.listdir(scope.path) or {}) do
    local kind = raymond.stat(scope.path .. "/" .. name)
    if kind == "file" then
      names[name] = true
    elseif kind == "dir" and name == "tests" then
      -- The workflow's tests (raymond test) are not part of it: they stay
      -- where they are, and the caller says so.
      names["tests/"] = true
    elseif kind == "dir" and name == "hooks" then
      for _, h in ipairs(raymond.listdir(scope.path .. "/hooks") or {}) do
        if h:match("%.lua$") then names["hooks/" .. h] = true else other[#other + 1] = "hooks/" .. h end
      end
    else
      other[#other + 1] = name .. (kind == "dir" and "/" or "")
    end
  end
  return names, other
end

-- `s` as the value of a key at indent `indent`: a literal block, or a
-- quoted string when a block would change it; nil when no YAML can hold
-- it (text that is not UTF-8).
local function block(s, indent)
  if not utf8.len(s) then return nil end
  if s:gsub("[\t\n]", ""):find("[%c\127]") or s:find("\xC2\x85")
    or s:find("\xE2\x80[\xA8\xA9]") or s:find("\xEF\xBB\xBF") then
    return yamlflow.quote(s)
  end
  local chomp = s:sub(-1) ~= "\n" and "-" or (s:sub(-2) == "\n\n" and "+" or "")
  -- A first line that starts with a space would set the block's indent.
  local first = s:match("^\n*([^\n]*)")
  local ind = first:match("^ ") and "2" or ""
  local pad = string.rep(" ", indent + 2)
  local out = {}
  local body = s:sub(-1) == "\n" and s or s .. "\n"
  for line in body:gmatch("([^\n]*)\n") do
    out[#out + 1] = line == "" and "" or pad .. line
  end
  return "|" .. ind .. chomp .. "\n" .. table.concat(out, "\n")
end

local function key(name)
  if name:match("^[%w_][%w_%.%-]*$") then return name end
  return yamlflow.quote(name)
end

-- The states in the order a run meets them, then the rest by name
-- (`groups` holds them all, Windows-only scripts included).
local function order(wf, groups)
  local seen, out = {}, {}
  local function add(name)
    local stem = name:gsub("%.%w+$", "")
    if not seen[stem] then
      seen[stem] = true
      out[#out + 1] = stem
    end
  end
  local queue, i = {}, 1
  if wf.entry then queue[1] = wf.entry end
  while queue[i] do
    local st = wf.by_name[queue[i]]
    if st and not seen[st.name:gsub("%.%w+$", "")] then
      add(st.name)
      for _, e in ipairs(st.edges) do
        for _, t in ipairs({ e.target, e.ret, e.next }) do queue[#queue + 1] = t end
      end
    end
    i = i + 1
  end
  local rest = {}
  for stem in pairs(groups) do
    if not seen[stem] then rest[#rest + 1] = stem end
  end
  table.sort(rest)
  for _, stem in ipairs(rest) do add(stem) end
  return out
end

local function fail(fmt, ...) return nil, { msg = string.format(fmt, ...) } end

-- One state's lines: its prompt and copied frontmatter, or its scripts.
local function state_lines(scope, stem, files, out, warnings)
  out[#out + 1] = "  " .. key(stem) .. ":"
  if files.md then
    local source = assert(scope:read(files.md))
    local meta, body = raymond.frontmatter(source)
    if not meta then return fail("%s/%s: %s", scope.path, files.md, body) end
    for _, k in ipairs({ "prompt", "sh", "ps1", "bat" }) do
      if meta[k] ~= nil then
        return fail("%s/%s: a frontmatter field named %s cannot be carried into YAML, where %s: is the "
          .. "state's own text", scope.path, files.md, k, k)
      end
    end
    if body == "" then return fail("%s/%s has no prompt; a YAML state needs one", scope.path, files.md) end
    local b = block(body, 4)
    if not b then return fail("%s/%s is not UTF-8 text, which YAML cannot hold", scope.path, files.md) end
    out[#out + 1] = "    prompt: " .. b
    local fm = #source - #body > 0 and source:sub(1, #source - #body) or ""
    fm = fm:gsub("^\xEF\xBB\xBF", ""):match("^%-%-%-[ \t]*\r?\n(.*)\n%-%-%-[ \t]*\r?\n?$")
    for line in (fm and fm .. "\n" or ""):gmatch("([^\n]*)\n") do
      out[#out + 1] = line == "" and "" or "    " .. line
    end
    return true
  end
  for _, ext in ipairs(yamlflow.SCRIPT_KEYS) do
    if files[ext] then
      local source = assert(scope:read(files[ext]))
      if source == "" then return fail("%s/%s is empty; a YAML state needs a script", scope.path, files[ext]) end
      local b = block(source, 4)
      if not b then return fail("%s/%s is not UTF-8 text, which YAML cannot hold", scope.path, files[ext]) end
      out[#out + 1] = "    " .. ext .. ": " .. b
      if source:find("RAYMOND_STATE_[DF]I") then
        warnings[#warnings + 1] = string.format("%s uses $RAYMOND_STATE_DIR or $RAYMOND_STATE_FILE: in the YAML "
          .. "workflow they are the YAML file's folder and a private copy of the script", files[ext])
      end
    end
  end
  return true
end

-- The manifest of the original (workflow.yaml), copied as written, when
-- it holds only manifest keys; or nil and an error.
local function manifest(scope, out)
  local source = assert(scope:read("workflow.yaml"))
  local doc, lines = raymond.yaml(source, scope.path .. "/workflow.yaml")
  if not doc then return nil, { msg = lines } end
  local known = {}
  for _, k in ipairs(yamlflow.MANIFEST) do known[k] = true end
  for k, line in pairs(lines[doc] or {}) do
    if not known[k] then
      return fail("%s/workflow.yaml:%d: '%s' is not a manifest key (%s); it cannot be carried", scope.path,
        line, k, table.concat(yamlflow.MANIFEST, ", "))
    end
  end
  for line in (source:gsub("\n*$", "") .. "\n"):gmatch("([^\n]*)\n") do
    if not line:match("^%-%-%-") and not line:match("^%.%.%.") then out[#out + 1] = line end
  end
  return true
end

-- The YAML text of workflow `path` (a folder or archive, relative to
-- `cwd`) and a list of warnings; or nil and { msg =, hint = }.
function M.yaml(path, cwd)
  local wf, err = analyse.load(path, cwd, { no_default_hooks = true })
  if not wf then return nil, err end
  local scope = wf.scope
  local ok, res, rerr = pcall(function()
    if scope.kind == "yaml" then
      return fail("%s is already a YAML workflow", path)
    end
    if wf.kind == "dir" and raymond.stat(path:sub(1, 1) == "/" and path or cwd .. "/" .. path) ~= "dir" then
      return fail("convert takes a workflow folder or a .zip archive, not a state file: %s", path)
    end
    if wf.entry_error then return fail("%s", wf.entry_error.msg) end
    local names, other = list(scope)
    local groups, hooks, tests = {}, {}, false
    for name in pairs(names) do
      local stem, ext = name:match("^([^/]+)%.(%w+)$")
      if name:match("^tests/") then
        tests = true
      elseif name == "hooks.lua" or name:match("^hooks/") then
        hooks[#hooks + 1] = name
      elseif name ~= "workflow.yaml" and stem and (states.by_ext[ext] or FOREIGN[ext]) then
        groups[stem] = groups[stem] or {}
        groups[stem][ext] = name
      elseif name ~= "workflow.yaml" then
        other[#other + 1] = name
      end
    end
    if #other > 0 then
      table.sort(other)
      return nil, { msg = string.format("%s holds files a YAML workflow cannot carry: %s", path,
        table.concat(other, ", ")), hint = "a YAML workflow holds states and hooks only; move the other "
        .. "files beside the YAML file (its scripts find them in $RAYMOND_STATE_DIR) and convert again" }
    end
    for stem, g in pairs(groups) do
      local scripts = g.sh or g.bat or g.ps1
      if g.md and scripts then
        return fail("%s: state %s is both %s and %s; a YAML state is a prompt or a script", path, stem, g.md,
          scripts)
      end
    end
    local out, warnings = {}, {}
    if tests then
      warnings[#warnings + 1] = "the tests/ folder is not converted: a YAML workflow's test file sits beside it "
        .. "(NAME.test.yaml with workflow: NAME.yaml, see docs/testing.md)"
    end
    if names["workflow.yaml"] then
      local mok, merr = manifest(scope, out)
      if not mok then return nil, merr end
    end
    out[#out + 1] = "states:"
    for _, stem in ipairs(order(wf, groups)) do
      local sok, serr = state_lines(scope, stem, groups[stem], out, warnings)
      if not sok then return nil, serr end
    end
    table.sort(hooks, function(a, b) return (a == "hooks.lua" and "" or a) < (b == "hooks.lua" and "" or b) end)
    if #hooks > 0 then out[#out + 1] = "hooks:" end
    for _, name in ipairs(hooks) do
      local source = scope.kind == "zip" and assert(scope:read(name))
        or assert(raymond.read_file(scope.path .. "/" .. name))
      local b = source ~= "" and block(source, 4)
      if not b then return fail("%s/%s is empty or not UTF-8 text", path, name) end
      out[#out + 1] = "  - lua: " .. b
    end
    return table.concat(out, "\n") .. "\n", warnings
  end)
  analyse.close(wf)
  if not ok then error(res, 0) end
  return res, rerr
end

return M
