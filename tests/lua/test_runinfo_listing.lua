-- Tests for runinfo.listing, the listing raymond serve keeps: it must
-- show at every call what runinfo.all reads afresh, whatever changed in
-- between, however the files changed.

local T = require("testing")
local raymond = require("raymond")
local list = require("raymond.commands.list")
local runinfo = require("raymond.runinfo")
local runstate = require("raymond.runstate")
local workspace = require("raymond.workspace")

local function sh(cmd) assert(os.execute(cmd), cmd) end

-- The text of a listing, each run's elapsed time left out (a running
-- run's grows between two reads).
local function text(values)
  return (table.concat(values, "\n"):gsub('"elapsed_seconds":[%d.e+-]+,', ""))
end

-- What runinfo.all reads now, as the listing shows it.
local function fresh(ws)
  local values = {}
  for i, info in ipairs(runinfo.all(ws)) do values[i] = list.json_object(info) end
  return text(values)
end

-- The listing shows what a fresh read shows; returns that text.
local function same(listing, ws, what)
  local got = text(listing:all())
  T.eq(got, fresh(ws), what)
  return got
end

local function record(dir, id, status, fields)
  local rec = runstate.new(id, dir, "START.sh", { cwd = dir })
  rec.status = status
  for k, v in pairs(fields or {}) do rec[k] = v end
  return rec
end

local function put(ws, id, status, fields)
  T.put(workspace.state_path(ws, id), assert(runstate.encode(record(ws.root, id, status, fields))))
end

local function status_of(listing, id)
  for _, v in ipairs(listing:all()) do
    if v:find('"id":"' .. id .. '"', 1, true) then return v:match('"status":"(%a+)"'), v end
  end
  return nil
end

-- Hold the run's lease for another process of this host, as a running
-- raymond does (src/lease.h); returns that process's pid.
local function hold_lock(ws, id)
  local pidfile = ws.root .. "/" .. id .. ".holder"
  sh(string.format("{ sleep 120 </dev/null >/dev/null 2>&1 & echo $! >'%s'; }", pidfile))
  local pid = (T.get(pidfile):gsub("%s", ""))
  T.put(workspace.lock_path(ws, id), string.format(
    "raymond lease\nhost %s\npid %s\nstart 0\nexpires %.3f\ngen 1\ntoken %s\n",
    raymond.host(), pid, raymond.now() + 600, string.rep("ab", 16)))
  return pid
end

local function project()
  local dir = T.tmpdir()
  local ws = workspace.new(dir)
  assert(raymond.mkdir_p(ws.state_dir))
  return ws
end

T.test("a listing shows every kind of run as a fresh read does", function()
  local ws = project()
  put(ws, "done", "completed", { cost = 0.25 })
  put(ws, "bad", "failed", { error = "script exited with status 3" })
  put(ws, "live", "running")
  put(ws, "killed", "running")
  T.put(workspace.state_path(ws, "garbled"), "{not json")
  local holder = hold_lock(ws, "live")
  local listing = runinfo.listing(ws, list.json_object)
  local first = same(listing, ws, "first listing")
  T.has(first, '"id":"live","status":"running"', "a run whose lock is held runs")
  T.has(first, '"id":"killed","status":"interrupted"', "a run saved as running without its raymond")
  T.has(first, '"id":"garbled","status":"unreadable"', "a file that is no state")
  T.eq(same(listing, ws, "nothing changed"), first, "the same again")
  -- The raymond driving the run is killed: no file changes, and a lease of
  -- this host whose process is gone holds nothing.
  sh("kill -9 " .. holder)
  sh(string.format("i=0; while kill -0 %s 2>/dev/null; do i=$((i + 1)); [ $i -lt 600 ] || exit 1; sleep 0.1; done",
    holder))
  T.eq(status_of(listing, "live"), "interrupted", "a killed run shows interrupted at once")
  same(listing, ws, "after the kill")
end)

T.test("a run changed in place, to the same size and the same modification time, shows its change", function()
  local ws = project()
  put(ws, "a", "completed", { cost = 0.25 })
  put(ws, "b", "completed")
  local path = workspace.state_path(ws, "a")
  local listing = runinfo.listing(ws, list.json_object)
  T.has(same(listing, ws), '"cost_usd":0.25', "first")
  local before = T.get(path)
  local after = before:gsub('"cost":0%.25', '"cost":0.75')
  T.eq(#after, #before, "the same size")
  T.eq(after ~= before, true, "other text")
  sh(string.format("touch -r '%s' '%s.ref'", path, path))
  T.put(path, after)
  sh(string.format("touch -m -r '%s.ref' '%s'", path, path))
  T.has(same(listing, ws, "after the change"), '"cost_usd":0.75', "the new cost")
  -- Changed in place again, in the same instant, back to the old text.
  T.put(path, before)
  sh(string.format("touch -m -r '%s.ref' '%s'", path, path))
  T.has(same(listing, ws, "changed back"), '"cost_usd":0.25', "the old cost again")
end)

T.test("each save of a running run shows, snapshot or journal, however fast they come", function()
  local ws = project()
  put(ws, "other", "completed")
  local path = workspace.state_path(ws, "r")
  local store = runstate.store(path)
  store.interval = 3600
  local rec = record(ws.root, "r", "running")
  local listing = runinfo.listing(ws, list.json_object)
  T.eq(status_of(listing, "r"), nil, "no run r yet")
  assert(store:save(rec))
  same(listing, ws, "the first save, a snapshot")
  -- The journal is made at its full size: a save in it changes no size.
  for steps = 1, 5 do
    rec.steps = steps
    assert(store:save(rec))
    local _, v = status_of(listing, "r")
    T.has(v, '"steps":' .. steps, "save " .. steps .. " in the journal")
  end
  T.eq(raymond.stat(runstate.journal_path(path)) ~= nil, true, "the saves went to the journal")
  rec.status, rec.result = "completed", "done"
  assert(store:save(rec, true))
  T.eq(status_of(listing, "r"), "completed", "the last save")
  same(listing, ws, "after the last save")
end)

T.test("runs removed and made, and the state folder replaced, show at the next listing", function()
  local ws = project()
  put(ws, "a", "completed")
  put(ws, "b", "failed")
  local listing = runinfo.listing(ws, list.json_object)
  same(listing, ws, "first")
  os.remove(workspace.state_path(ws, "b"))
  T.eq(status_of(listing, "b"), nil, "a removed run is gone")
  put(ws, "c", "stopped")
  T.eq(status_of(listing, "c"), "stopped", "a new run shows")
  same(listing, ws, "after removing and making")
  sh(string.format("mv '%s' '%s.old'", ws.state_dir, ws.state_dir))
  T.eq(#listing:all(), 0, "no state folder, no runs")
  assert(raymond.mkdir_p(ws.state_dir))
  put(ws, "d", "completed")
  T.eq(status_of(listing, "a"), nil, "the runs of the old folder are gone")
  T.eq(status_of(listing, "d"), "completed", "the run of the new folder shows")
  same(listing, ws, "the new folder")
  -- The folder that holds it replaced too: the watch follows no folder moved away.
  sh(string.format("mv '%s' '%s.old' && mkdir -p '%s'", ws.root, ws.root, ws.state_dir))
  put(ws, "e", "failed")
  T.eq(status_of(listing, "d"), nil, "the old folder's run is gone")
  T.eq(status_of(listing, "e"), "failed", "the new one's shows")
  same(listing, ws, "a new .raymond")
end)

T.test("changes taken in between by drain show at the next listing", function()
  local ws = project()
  put(ws, "a", "failed")
  local listing = runinfo.listing(ws, list.json_object)
  T.eq(status_of(listing, "a"), "failed", "first")
  put(ws, "a", "completed")
  put(ws, "b", "stopped")
  listing:drain()
  listing:drain()
  T.eq(status_of(listing, "a"), "completed", "a change drained before the listing")
  T.eq(status_of(listing, "b"), "stopped", "a run made before the drain")
  os.remove(workspace.state_path(ws, "b"))
  listing:drain()
  T.eq(status_of(listing, "b"), nil, "a run removed before the drain")
  same(listing, ws, "at the end")
end)
