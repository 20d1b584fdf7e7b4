-- raymond.scope: where a workflow's states live, a folder or a zip archive.
--
-- A scope answers three questions about a state NAME (a bare file name):
--   scope:has(name)          is there such a state file?
--   scope:read(name)         its text, or nil and a message
--   scope:script(name)       a path bash can run: the file itself in a
--                            folder; for an archive, its copy in a private
--                            folder extracted on first use
-- plus scope.path (the folder or archive, absolute), scope.kind ("dir" or
-- "zip"), scope.dir (the folder scripts see as RAYMOND_STATE_DIR) and
-- scope:close() (removes an archive's extracted copy).
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

-- Scripts run from a private copy, extracted once per process and removed
-- by close(); the archive itself is never run in place.
function Zip:script(name)
  if not self.dir then
    -- The engine names a folder of the run's (.raymond/extract/<id>), so a
    -- copy left by a killed process is replaced, not leaked, and a check
    -- that nothing on the way there is a symbolic link; on its own an
    -- archive gets a fresh temporary folder.
    local dir, err
    if self.workdir then
      local ok, lerr, hint = self.check_workdir()
      if not ok then return nil, lerr .. "\nhint: " .. hint end
      raymond.rmtree(self.workdir)
      dir, err = self.workdir, select(2, raymond.mkdir_p(self.workdir, tonumber("700", 8)))
      if err then dir = nil end
    else
      dir, err = raymond.mkdtemp("raymond-zip-")
    end
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

-- Callers may pass a folder path where a scope is expected.
function M.of(x)
  if type(x) == "string" then return M.dir(x) end
  return x
end

return M
