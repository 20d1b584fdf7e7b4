-- The run's lease as the engine sees it (src/lua_lease.c): raymond.lock
-- takes it and says who holds it when refused; lock_held, lock_owner and
-- lease read it as list, status and serve do; lock_check turns false for
-- good once another process's lease is found there, and unlock then
-- leaves that lease alone.

local T = require("testing")
local raymond = require("raymond")

-- A lease of `host`, pid `pid`, expiring `ttl` seconds from now.
local function plant(path, host, pid, ttl)
  T.put(path, string.format("raymond lease\nhost %s\npid %d\nstart 0\nexpires %.3f\ngen 4\ntoken %s\n",
    host, pid, raymond.now() + ttl, string.rep("5a", 16)))
end

T.test("a lease taken here is held, owned by this process, and refused to a second take", function()
  local dir = T.tmpdir()
  local path = dir .. "/run.lock"
  T.eq(raymond.lock_held(path), false, "no lease yet")
  T.eq(raymond.lock(path), true, "taken")
  local lease = raymond.lease(path)
  T.eq(lease.host, raymond.host(), "host")
  T.eq(lease.live and lease.here, true, "live and here")
  T.eq(lease.expires > raymond.now() + 10, true, "expires later")
  T.eq(raymond.lock_held(path), true, "held")
  T.eq(raymond.lock_owner(path), lease.pid, "owner")
  local ok, err, why, holder = raymond.lock(path)
  T.eq(ok, nil, "second take")
  T.eq(why, "locked", "why")
  T.has(err, "is held by raymond pid " .. lease.pid .. " on host " .. raymond.host() .. " until ")
  T.eq(holder.pid, lease.pid, "holder")
  T.eq(raymond.lock_check(path), true, "may save")
  raymond.unlock(path)
  T.eq(raymond.stat(path), nil, "given up: the file goes")
  T.eq(raymond.lock_held(path), false, "not held")
  T.eq(raymond.lock_owner(path), nil, "no owner")
  raymond.rmtree(dir)
end)

T.test("another host's live lease is held but has no owner here; an expired one is taken", function()
  local dir = T.tmpdir()
  local path = dir .. "/run.lock"
  plant(path, "elsewhere", 4242, 600)
  T.eq(raymond.lock_held(path), true, "held")
  T.eq(raymond.lock_owner(path), nil, "a pid of another host means nothing here")
  local lease = raymond.lease(path)
  T.eq(lease.here, false, "not here")
  local ok, err = raymond.lock(path)
  T.eq(ok, nil, "refused")
  T.has(err, "is held by raymond pid 4242 on host elsewhere until ")
  plant(path, "elsewhere", 4242, -1)
  T.eq(raymond.lock_held(path), false, "expired")
  T.eq(raymond.lock(path), true, "taken once expired")
  raymond.unlock(path)
  raymond.rmtree(dir)
end)

T.test("a lease found taken stops the saves for good, and unlock leaves the new holder's lease", function()
  local dir = T.tmpdir()
  local path = dir .. "/run.lock"
  T.eq(raymond.lock(path), true, "taken")
  plant(path, "elsewhere", 4242, 600)
  local ok, err = raymond.lock_check(path)
  T.eq(ok, nil, "may not save")
  T.has(err, "the lease '" .. path .. "' of this run was taken by raymond pid 4242 on host elsewhere")
  T.eq(raymond.lock_check(path), nil, "still not, even if asked again")
  raymond.unlock(path)
  T.eq(raymond.lease(path).host, "elsewhere", "the new holder's lease is left")
  T.eq(raymond.lock_check(dir .. "/other.lock"), true, "a lease never taken here does not stop saves")
  raymond.rmtree(dir)
end)

T.test("a FIFO in place of the lease is refused, never waited on", function()
  local dir = T.tmpdir()
  local path = dir .. "/run.lock"
  assert(os.execute("mkfifo '" .. path .. "'"))
  local held, err = raymond.lock_held(path)
  T.eq(held, nil, "no answer")
  T.has(err, "is not a regular file")
  T.eq(raymond.lock(path), nil, "not taken")
  raymond.rmtree(dir)
end)
