-- raymond.scope: where a workflow's states live, a folder, a zip archive
-- or one YAML file (raymond.yamlflow).
--
-- A scope answers three questions about a state NAME (a bare file name):
--   scope:has(name)          is there such a state file?
--   scope:read(name)         its text, or nil and a message
--   scope:script(name)       a path bash can run: the file itself in a
--                            folder; for an archive, its copy in a private
--                            folder extracted on first use
-- plus scope.path (the folder, archive or YAML file, absolute), scope.kind
-- ("dir", "zip" or "yaml"), scope.dir (the folder scripts see as
-- RAYMOND_STATE_DIR) and scope:close() (removes an extracted copy).
--
-- A YAML scope also says where its states are written: line_of(NAME, n)
-- is the line of the YAML file that line n of state NAME comes from (the
-- state's own line when n is nil),
-- label(NAME) "FILE:LINE" of the state, timeout_of(NAME) the state's own
-- timeout and its line, launcher_of(NAME) a script state's launcher:;
-- hooks() gives its hook files (hooks: in the file)
-- and check_fields(extra) refuses a state field nobody reads.
--
-- Archives are checked when opened (src/archive.c): flat or single-folder
-- layout, no `..` or absolute names, a SHA-256 in the file name
-- (name-<64 hex>.zip) must match the file, and the caps of M.LIMITS hold.
-- scope.sha256 lets --resume check that the archive did not change under
-- a run.
--
-- An archive scope opens and hashes the file once and keeps it open until
-- close(); every read and the extraction come from that descriptor.  So
-- an archive replaced on disk (a new file renamed over it) does not
-- change a run that is going: it goes on with the bytes it hashed, and
-- --resume, which opens the path again, refuses if the hash differs.  A
-- file rewritten in place (the same inode, so the descriptor sees it) is
-- refused by the next read or extraction ("was rewritten after it was
-- opened"), whatever its new bytes.

local raymond = require("raymond")

local M = {}

local Dir = {}
Dir.__index = Dir

function Dir:has(name) return raymond.stat(self.path .. "/" .. name) == "file" end
function Dir:read(name) return raymond.read_file(self.path .. "/" .. name) end
function Dir:script(name) return self.path .. "/" .. name end
function Dir:close() end

local Zip = {}
Zip.__index = Zip

function Zip:has(name) return self.files[name] == true end
function Zip:read(name)
  if not self.files[name] then return nil, string.format("no state '%s' in %s", name, self.path) end
  return self.archive:read(name)
end

-- A private folder for a scope's extracted scripts.  The engine names a
-- folder of the run's (.raymond/extract/<id>), so a copy left by a killed
-- process is replaced, not leaked, and a check that nothing on the way
-- there is a symbolic link; on its own a scope gets a fresh temporary
-- folder.
local function private_dir(self, prefix)
  if not self.workdir then return raymond.mkdtemp(prefix) end
  local ok, lerr, hint = self.check_workdir()
  if not ok then return nil, lerr .. "\nhint: " .. hint end
  raymond.rmtree(self.workdir)
  local made, err = raymond.mkdir_p(self.workdir, tonumber("700", 8))
  if not made then return nil, err end
  return self.workdir
end

-- Scripts run from a private copy, extracted once per process and removed
-- by close(); the archive itself is never run in place.
function Zip:script(name)
  if not self.dir then
    local dir, err = private_dir(self, "raymond-zip-")
    if not dir then return nil, err end
    local ok, xerr = self.archive:extract(dir)
    if not ok then
      raymond.rmtree(dir)
      return nil, xerr
    end
    self.dir = dir
  end
  return self.dir .. "/" .. name
end

-- Also closes the archive: a scope is not used after close().
function Zip:close()
  if self.dir then raymond.rmtree(self.dir) end
  self.dir = nil
  self.archive:close()
end

local Yaml = {}
Yaml.__index = Yaml

function Yaml:has(name) return self.model.files[name] ~= nil end
function Yaml:read(name)
  local text = self.model.files[name]
  if not text then return nil, string.format("no state '%s' in %s", name, self.path) end
  return text
end

-- A script is written to the private folder when it first runs, from the
-- text read when the scope was opened.
function Yaml:script(name)
  local text = self.model.files[name]
  if not text then return nil, string.format("no state '%s' in %s", name, self.path) end
  if not self.xdir then
    local dir, err = private_dir(self, "raymond-yaml-")
    if not dir then return nil, err end
    self.xdir, self.written = dir, {}
  end
  local path = self.xdir .. "/" .. name
  if not self.written[name] then
    local ok, err = raymond.write_atomic(path, text)
    if not ok then return nil, err end
    self.written[name] = true
  end
  return path
end

function Yaml:close()
  if self.xdir then raymond.rmtree(self.xdir) end
  self.xdir = nil
end

local function stem(name) return (name:gsub("%.%w+$", "")) end

function Yaml:line_of(name, n)
  if n == nil then
    local st = self.model.by_name[stem(name)]
    return st and st.line
  end
  local map = self.model.maps[name]
  return map and map(n) or nil
end

function Yaml:label(name)
  local st = self.model.by_name[stem(name)]
  return string.format("%s:%d", self.path, st and st.line or 1)
end

function Yaml:timeout_of(name)
  local st = self.model.by_name[stem(name)]
  if not st or not st.timeout then return nil end
  return st.timeout, string.format("%s:%d", self.path, st.keys.timeout)
end

-- A script state's launcher: (raymond.launchers), or nil; a markdown
-- state's is in its frontmatter.
function Yaml:launcher_of(name)
  local st = self.model.by_name[stem(name)]
  return st and st.launcher
end

-- The hook files of hooks:, in order, as raymond.hooks.discover lists
-- them.  An embedded hook is named after the YAML file and starts on the
-- line it is written on, so its messages name the YAML file's lines.
function Yaml:hooks()
  local files = {}
  for _, h in ipairs(self.model.hooks) do
    if h.lua then
      files[#files + 1] = { name = self.path, source = string.rep("\n", h.line - 1) .. h.lua }
    else
      local path = self.dir .. "/" .. h.file
      local source, err = raymond.read_file(path)
      if not source then
        return nil, string.format("%s:%d: hook file %s cannot be read: %s", self.path, h.line, h.file, err)
      end
      files[#files + 1] = { name = path, source = source }
    end
  end
  return files
end

function Yaml:check_fields(extra)
  return require("raymond.yamlflow").check_fields(self.model, extra)
end

local dirs = setmetatable({}, { __mode = "v" })

-- A folder scope for `path` (absolute).
function M.dir(path)
  local s = dirs[path]
  if not s then
    s = setmetatable({ kind = "dir", path = path, dir = path }, Dir)
    dirs[path] = s
  end
  return s
end

-- Caps against zip bombs (src/archive.h), each refused when the archive
-- is opened, before anything is unpacked: the environment variable, the
-- field of raymond.zip_open's limits, the default.
M.LIMITS = {
  { "RAYMOND_ZIP_MAX_BYTES", "max_total", 256 * 1024 * 1024 },
  { "RAYMOND_ZIP_MAX_FILES", "max_files", 10000 },
  { "RAYMOND_ZIP_MAX_FILE_BYTES", "max_file", 64 * 1024 * 1024 },
}

local LIMIT_HINT = "if you trust this archive, raise the limit it names: RAYMOND_ZIP_MAX_BYTES "
  .. "(all files together), RAYMOND_ZIP_MAX_FILES or RAYMOND_ZIP_MAX_FILE_BYTES (one file)"

-- The caps from the environment, or nil and a message.
local function limits()
  local lim = {}
  for _, l in ipairs(M.LIMITS) do
    local text = os.getenv(l[1])
    local n = text and math.tointeger(tonumber(text))
    if text and (not n or n < 0) then
      return nil, string.format("%s must be a whole number, not '%s'", l[1], text)
    end
    lim[l[2]] = n or l[3]
  end
  return lim
end

-- An archive scope for `path` (absolute), or nil and a message.
function M.zip(path)
  local lim, lerr = limits()
  if not lim then return nil, lerr end
  local archive, err, code = raymond.zip_open(path, lim)
  if not archive then
    if code == raymond.ETOOBIG then err = err .. "\nhint: " .. LIMIT_HINT end
    return nil, err
  end
  return setmetatable({ kind = "zip", path = path, archive = archive, files = archive.files,
    sha256 = archive.sha256 }, Zip)
end

function M.is_zip(path) return path:lower():match("%.zip$") ~= nil end

-- A YAML scope for the file `path` (absolute), or nil and a message
-- naming the line at fault.  The file is read once, here: a run goes on
-- with the text it started with, and a resume reads it again.
function M.yaml(path)
  local yamlflow = require("raymond.yamlflow")
  local text, err = raymond.read_file(path, yamlflow.MAX_BYTES)
  if not text then return nil, err end
  local model, perr = yamlflow.parse(text, path)
  if not model then return nil, perr end
  local dir = path:match("^(.*)/[^/]*$")
  return setmetatable({ kind = "yaml", path = path, dir = dir == "" and "/" or dir, model = model,
    files = model.files }, Yaml)
end

function M.is_yaml(path) return require("raymond.yamlflow").is_yaml(path) end

-- Callers may pass a folder path where a scope is expected.
function M.of(x)
  if type(x) == "string" then return M.dir(x) end
  return x
end

return M
