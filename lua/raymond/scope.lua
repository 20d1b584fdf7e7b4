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
-- layout, no `..` or absolute names, and a SHA-256 in the file name
-- (name-<64 hex>.zip) must match the file.  scope.sha256 lets --resume
-- check that the archive did not change under a run.
--
-- An archive scope opens and hashes the file once and keeps it open until
-- close(); every read and the extraction come from that descriptor.  So
-- an archive replaced on disk (a new file renamed over it) does not
-- change a run that is going: it goes on with the bytes it hashed, and
-- --resume, which opens the path again, refuses if the hash differs.  A
-- file rewritten in place is another matter: reads then fail the CRC or
-- size checks of the entries they reach, with a message naming the file.

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
    -- copy left by a killed process is replaced, not leaked; on its own an
    -- archive gets a fresh temporary folder.
    local dir, err
    if self.workdir then
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

-- An archive scope for `path` (absolute), or nil and a message.
function M.zip(path)
  local archive, err = raymond.zip_open(path)
  if not archive then return nil, err end
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
