-- The files raymond writes under .raymond/ are never opened through a
-- symbolic link, even one planted while a run goes on: the journal, the
-- run lock, the debug record and the folders mkdir_p makes.  Each call
-- on a link fails with a message saying so, and the file the link points
-- at is left exactly as it was.

local T = require("testing")
local raymond = require("raymond")
local put, get = T.put, T.get

-- A folder with a file "outside/precious" and a link "dir/link" to it.
local function planted()
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/outside"))
  put(dir .. "/outside/precious", "precious")
  assert(os.execute("ln -s '" .. dir .. "/outside/precious' '" .. dir .. "/link'"))
  return dir, dir .. "/link"
end

local LINK = "it is a symbolic link, and raymond does not write through links"

T.test("journal_open refuses a link and leaves its target alone", function()
  local dir, link = planted()
  local j, err = raymond.journal_open(link, 100)
  T.eq(j, nil, "journal")
  T.has(err, "cannot open the journal '" .. link .. "': " .. LINK)
  T.has(err, "hint: remove the link '" .. link .. "'")
  T.eq(get(dir .. "/outside/precious"), "precious", "target")
  raymond.rmtree(dir)
end)

T.test("record_open refuses a link and leaves its target alone", function()
  local dir, link = planted()
  local r, err = raymond.record_open(link)
  T.eq(r, nil, "record")
  T.has(err, "cannot open the debug record '" .. link .. "': " .. LINK)
  T.eq(get(dir .. "/outside/precious"), "precious", "target")
  raymond.rmtree(dir)
end)

T.test("lock refuses a link, even a dangling one, and creates nothing", function()
  local dir = T.tmpdir()
  local link = dir .. "/run.lock"
  assert(os.execute("ln -s '" .. dir .. "/nowhere' '" .. link .. "'"))
  local ok, err = raymond.lock(link)
  T.eq(ok, nil, "locked")
  T.has(err, "cannot open lock '" .. link .. "': " .. LINK)
  T.eq(raymond.stat(dir .. "/nowhere"), nil, "the link's target was not created")
  raymond.rmtree(dir)
end)

T.test("mkdir_p refuses a folder that is a link", function()
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/real"))
  assert(os.execute("ln -s '" .. dir .. "/real' '" .. dir .. "/state'"))
  local ok, err = raymond.mkdir_p(dir .. "/state")
  T.eq(ok, nil, "made")
  T.has(err, "cannot create directory '" .. dir .. "/state': " .. LINK)
  T.eq(raymond.stat(dir .. "/state", true), "link", "stat without following")
  T.eq(raymond.stat(dir .. "/state"), "dir", "stat following")
  raymond.rmtree(dir)
end)
