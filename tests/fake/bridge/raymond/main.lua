-- tests/fake/bridge/raymond/main.lua: a bridge server for the tests of
-- `raymond hook-bridge`, run by the binary under test in place of its
-- entry point (RAYMOND_LUA_DIR, src/lua_host.c):
--
--   RAYMOND_LUA_DIR=tests/fake/bridge raymond SOCKET TOKEN [keep]
--
-- It listens at SOCKET through raymond.bridge_listen, prints "listening"
-- once it does, and answers until SIGTERM, when it closes the socket and
-- exits 0.  With "keep" it does not close the socket on SIGTERM: it goes
-- on answering while a connection keeps the loop alive, and the socket
-- goes when the server is collected at exit.  A request with another token is refused as the run's handler
-- refuses one: (2, "unknown token").  Otherwise the event's "test" field
-- says what to do:
--
--   "allow"   answer (0, '{"seen":EVENT}'), the event as it came
--   "deny"    answer (2, "denied by the test")
--   "drop"    give no answer: the conn is collected, which closes it
--   "sleep"   wait "seconds", then answer (0, "late")

local raymond = require("raymond")
local cjson = raymond.cjson

local M = {}
local code

local function handle(conn, token, body, want)
  if token ~= want then
    conn:reply(2, "unknown token")
    return
  end
  local ok, ev = pcall(cjson.decode, body)
  local test = ok and type(ev) == "table" and ev.test or "allow"
  if test == "deny" then
    conn:reply(2, "denied by the test")
  elseif test == "drop" then
    conn = nil
    collectgarbage()
  elseif test == "sleep" then
    raymond.sleep(ev.seconds)
    conn:reply(0, "late")
  else
    conn:reply(0, '{"seen":' .. body .. '}')
  end
end

function M.main(argv)
  local path, want, keep = argv[1], argv[2], argv[3] == "keep"
  local srv, err = raymond.bridge_listen(path, function(conn, token, body)
    return handle(conn, token, body, want)
  end)
  if not srv then
    raymond.stderr("bridge server: " .. err .. "\n")
    code = 1
    return
  end
  raymond.quiet_signals()
  raymond.stdout("listening\n")
  -- The listening socket keeps nothing alive: this sleep does, until a
  -- signal stops the run and wakes it.
  raymond.go(function()
    while raymond.sleep(3600) do end
    raymond.stdout("stopping\n")
    if not keep then srv:close() end
    code = 0
  end)
end

function M.finish()
  return code or 1
end

return M
