-- raymond.resolve: from names in tags to state files in the workflow folder.
--
-- A workflow folder is flat; a target is a file name, never a path.
--   NAME.md / NAME.sh   must exist as written
--   NAME.bat / NAME.ps1 are another platform's scripts: an error here
--   NAME                NAME.md, else NAME.sh; both present is ambiguous
-- Functions return the resolved file name, or nil and a message.

local raymond = require("raymond")

local M = {}

M.kinds = { md = "markdown", sh = "script" }

local foreign = { bat = true, ps1 = true }

local function exists(dir, name)
  return raymond.stat(dir .. "/" .. name) == "file"
end

-- The kind of a resolved state file ("markdown" or "script").
function M.kind(name)
  return M.kinds[name:match("%.(%w+)$") or ""]
end

function M.target(dir, name)
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
  if ext and M.kinds[ext] then
    if exists(dir, name) then return name end
    return nil, string.format("state '%s' not found in %s", name, dir)
  end
  if ext and foreign[ext] then
    return nil, string.format(
      "state '%s' is a Windows script; on this platform write it as a .sh script", name)
  end
  local md, sh = name .. ".md", name .. ".sh"
  local has_md, has_sh = exists(dir, md), exists(dir, sh)
  if has_md and has_sh then
    return nil, string.format(
      "state '%s' is ambiguous: both %s and %s exist in %s; name one with its extension or remove one",
      name, md, sh, dir)
  end
  if has_md then return md end
  if has_sh then return sh end
  return nil, string.format("state '%s' not found in %s (looked for %s and %s)", name, dir, md, sh)
end

-- The entry state of a workflow folder: 1_START or START, any extension.
function M.entry(dir)
  local found = {}
  for _, stem in ipairs({ "1_START", "START" }) do
    local name, err = M.target(dir, stem)
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

-- Split the WORKFLOW argument into a scope folder and an entry state.
-- `path` is a folder or a state file; `cwd` makes it absolute.
function M.workflow(path)
  local kind = raymond.stat(path)
  if kind == nil then
    return nil, string.format("workflow '%s' does not exist", path)
  end
  local abs, err = raymond.realpath(path)
  if not abs then return nil, err end
  if kind == "dir" then
    local entry, eerr = M.entry(abs)
    if not entry then return nil, eerr end
    return abs, entry
  end
  local dir, base = abs:match("^(.*)/([^/]+)$")
  if dir == "" then dir = "/" end
  if not M.kind(base) then
    return nil, string.format(
      "workflow '%s' is neither a folder nor a state file (.md or .sh)", path)
  end
  return dir, base
end

return M
