-- Tests for raymond.commands.prune: what it decides when a run changes
-- between the listing and the removal.

local T = require("testing")
local raymond = require("raymond")
local prune = require("raymond.commands.prune")
local runinfo = require("raymond.runinfo")
local runstate = require("raymond.runstate")

-- A project folder holding a run of each id given, each with `status`.
local function project(status, ids)
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/.raymond/state"))
  for _, id in ipairs(ids) do
    local rec = runstate.new(id, dir, "START.sh", { cwd = dir })
    rec.status = status
    T.put(dir .. "/.raymond/state/" .. id .. ".json", assert(runstate.encode(rec)))
  end
  return dir
end

-- Run prune with `opts`, calling change() once the runs are listed and
-- before any is removed: what it prints and its exit status.
local function prune_with_change(opts, change)
  local all, stdout = runinfo.all, raymond.stdout
  local out = {}
  runinfo.all = function(ws)
    local list = all(ws)
    change()
    return list
  end
  raymond.stdout = function(s) out[#out + 1] = s end
  local ok, code = pcall(prune.main, opts)
  runinfo.all, raymond.stdout = all, stdout
  assert(ok, code)
  return table.concat(out), code
end

T.test("a failed run resumed to completion after the listing is kept by prune --status failed", function()
  local dir = project("failed", { "resumed", "still" })
  local path = dir .. "/.raymond/state/resumed.json"
  local out, code = prune_with_change({ cwd = dir, only = { "failed" } }, function()
    local rec = assert(runstate.load(path))
    rec.status, rec.result = "completed", "done"
    T.put(path, assert(runstate.encode(rec)))
  end)
  T.eq(code, 0, "exit status")
  T.has(out, "kept resumed: it changed while prune ran (now completed) and no longer matches\n", "says why")
  T.has(out, "removed still (failed, ", "the run still failed goes")
  T.has(out, "removed 1 run(s)", "count")
  T.eq(raymond.stat(path) ~= nil, true, "the completed run is kept")
  T.eq(raymond.stat(dir .. "/.raymond/state/still.json"), nil, "the failed run is removed")
  T.eq(raymond.stat(dir .. "/.raymond/state/resumed.lock"), nil, "the kept run's lock is given back")
end)

T.test("a run removed by someone else after the listing is passed over in silence", function()
  local dir = project("failed", { "gone" })
  local out, code = prune_with_change({ cwd = dir, only = { "failed" } }, function()
    os.remove(dir .. "/.raymond/state/gone.json")
  end)
  T.eq(code, 0, "exit status")
  T.eq(out, "No runs to remove.\n", "output")
  T.eq(raymond.stat(dir .. "/.raymond/state/gone.lock"), nil, "no lock left behind")
end)
