-- raymond.resolve: from names in tags to state files in the workflow folder.
--
-- A workflow (a folder, an archive or a YAML file, see raymond.scope) is
-- flat; a target is a file name, never a path.
--   NAME.md / NAME.sh   must exist as written
--   NAME.bat / NAME.ps1 are another platform's scripts: an error here
--   NAME                NAME.md, else NAME.sh (in the order of the kinds in
--                       raymond.states); two present is ambiguous; only
--                       NAME.bat or NAME.ps1 present is an error naming it
-- Functions take a scope (or a folder path) and return the resolved file
-- name, or nil and a message.

local raymond = require("raymond")
local scope_of = require("raymond.scope")
local states = require("raymond.states")

local M = {}

-- Another platform's scripts, in the order they are named in messages.
local foreign = { "bat", "ps1" }
local is_foreign = {}
for _, ext in ipairs(foreign) do is_foreign[ext] = true end

-- The kind of a resolved state file ("markdown" or "script").
function M.kind(name)
  local k = states.of(name)
  return k and k.name
end

function M.target(scope, name)
  scope = scope_of.of(scope)
  local dir = scope.path
  if name == nil or name == "" then
    return nil, "empty target"
  end
  if name:find("[/\\]") then
    return nil, string.format(
      "target '%s' contains a path separator; targets are file names in the workflow folder", name)
  end
  if name == "." or name == ".." then
    return nil, string.format("target '%s' is not a state file name", name)
  end
  local ext = name:match("%.(%w+)$")
  if ext and states.by_ext[ext] then
    if scope:has(name) then return name end
    return nil, string.format("state '%s' not found in %s", name, dir)
  end
  if ext and is_foreign[ext] then
    return nil, string.format(
      "state '%s' is a Windows script; on this platform write it as a .sh script", name)
  end
  local tried, found = {}, {}
  for _, k in ipairs(states.list) do
    local file = name .. "." .. k.ext
    tried[#tried + 1] = file
    if scope:has(file) then found[#found + 1] = file end
  end
  if #found > 1 then
    return nil, string.format(
      "state '%s' is ambiguous: both %s and %s exist in %s; name one with its extension or remove one",
      name, found[1], found[2], dir)
  end
  if found[1] then return found[1] end
  for _, ext in ipairs(foreign) do
    local file = name .. "." .. ext
    if scope:has(file) then
      return nil, string.format("state '%s' exists only as %s, a Windows script, which is not supported "
        .. "on this platform; write it as %s.sh", name, file, name)
    end
  end
  return nil, string.format("state '%s' not found in %s (looked for %s and %s)", name, dir,
    table.concat(tried, ", ", 1, #tried - 1), tried[#tried])
end

-- The entry state of a workflow folder: 1_START or START, any extension.
function M.entry(scope)
  scope = scope_of.of(scope)
  local dir = scope.path
  local found = {}
  for _, stem in ipairs({ "1_START", "START" }) do
    local name, err = M.target(scope, stem)
    if name then
      found[#found + 1] = name
    elseif err:find("ambiguous", 1, true) then
      return nil, err
    end
  end
  if #found == 2 then
    return nil, string.format(
      "ambiguous entry point in %s: both %s and %s exist; keep one", dir, found[1], found[2])
  end
  if #found == 0 then
    return nil, string.format(
      "no entry point in %s: expected 1_START.md, 1_START.sh, START.md or START.sh", dir)
  end
  return found[1]
end

-- The workflows that are one file, and how each is opened.
local FILES = {
  { is = scope_of.is_yaml, open = scope_of.yaml },
  { is = scope_of.is_zip, open = scope_of.zip },
}

-- A workflow in one file named by `path`: a YAML workflow (FILE.yaml or
-- .yml) or an archive (FILE.zip), or FILE.yaml/STATE or FILE.zip/STATE to
-- start at STATE.  Returns the scope and STATE resolved (nil when the
-- path names none: the caller looks for the entry, or reports it); nil
-- and a message; or nothing when `path` names no such file.
function M.file(path)
  for _, k in ipairs(FILES) do
    local file, state = path, nil
    if not (k.is(path) and raymond.stat(path) == "file") then
      file, state = path:match("^(.+)/([^/]+)$")
      if not (file and k.is(file) and raymond.stat(file) == "file") then file = nil end
    end
    if file then
      local abs, err = raymond.realpath(file)
      if not abs then return nil, err end
      local scope, serr = k.open(abs)
      if not scope then return nil, serr end
      if not state then return scope end
      local entry, eerr = M.target(scope, state)
      if not entry then
        scope:close()
        return nil, eerr
      end
      return scope, entry
    end
  end
end

-- Split the WORKFLOW argument into a scope and an entry state.  `path` is
-- a folder, a zip archive, a YAML file (either of them with /STATE) or a
-- state file.
function M.workflow(path)
  local fscope, fentry = M.file(path)
  if fscope and not fentry then
    local entry, eerr = M.entry(fscope)
    if not entry then
      fscope:close()
      return nil, eerr
    end
    return fscope, entry
  end
  if fscope ~= nil or fentry ~= nil then return fscope, fentry end
  local kind = raymond.stat(path)
  if kind == nil then
    return nil, string.format("workflow '%s' does not exist", path)
  end
  local abs, err = raymond.realpath(path)
  if not abs then return nil, err end
  if kind == "dir" or (kind == "file" and scope_of.is_zip(abs)) then
    local scope, serr
    if kind == "dir" then scope = scope_of.dir(abs) else scope, serr = scope_of.zip(abs) end
    if not scope then return nil, serr end
    local entry, eerr = M.entry(scope)
    if not entry then return nil, eerr end
    return scope, entry
  end
  local dir, base = abs:match("^(.*)/([^/]+)$")
  if dir == "" then dir = "/" end
  if not M.kind(base) then
    return nil, string.format(
      "workflow '%s' is neither a folder, a .zip archive nor a state file (.md or .sh)", path)
  end
  return scope_of.dir(dir), base
end

-- The scope of a run's workflow path, on --resume: a folder, or an archive
-- that must still be there and unchanged.
--
-- A YAML file is read again, as a folder's files are: it is the
-- workflow's source, and a state that failed on a bad prompt or field is
-- fixed by editing it and resuming.
function M.reopen(path, sha256)
  if scope_of.is_yaml(path) then
    if raymond.stat(path) ~= "file" then
      return nil, string.format("the YAML workflow %s of this run is gone", path)
    end
    return scope_of.yaml(path)
  end
  if scope_of.is_zip(path) then
    if raymond.stat(path) ~= "file" then
      return nil, string.format("the archive %s of this run is gone", path)
    end
    local scope, err = scope_of.zip(path)
    if not scope then return nil, err end
    if sha256 and scope.sha256 ~= sha256 then
      return nil, string.format("the archive %s changed since the run started (SHA-256 %s, was %s)",
        path, scope.sha256, sha256)
    end
    return scope
  end
  if raymond.stat(path) ~= "dir" then
    return nil, string.format("the workflow folder %s of this run is gone", path)
  end
  return scope_of.dir(path)
end

return M
