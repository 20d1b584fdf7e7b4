-- raymond.bridge_listen, conn:reply, srv:close and raymond.exe_path
-- (src/lua_bridge.c, src/bridge.c), with the real `raymond hook-bridge`
-- as the client.  Each handler runs as a coroutine of its own, so it may
-- yield; the listening socket never keeps the loop alive (this file ends
-- with a server left open, and luarun still returns).
local T = require("testing")
local raymond = require("raymond")

local DIR = T.tmpdir()
local TOKEN = string.rep("0123456789abcdef", 4)
-- build/tests/luarun runs this; the binary under test is build/raymond.
local RAYMOND = raymond.exe_path():gsub("/tests/luarun$", "/raymond")

-- `raymond hook-bridge` with `event` on stdin: its result, captured.
local function call(path, event, args, token)
  local argv = { RAYMOND, "hook-bridge" }
  for _, a in ipairs(args or {}) do argv[#argv + 1] = a end
  local env = raymond.environ()
  env.RAYMOND_BRIDGE, env.RAYMOND_BRIDGE_TOKEN = path, token or TOKEN
  return raymond.spawn({ argv = argv, env = env, input = event, capture = true })
end

T.test("exe_path is the absolute path of the running binary", function()
  local p = raymond.exe_path()
  T.eq(p:sub(1, 1), "/", "absolute")
  T.eq(p:match("[^/]+$"), "luarun")
  T.eq(raymond.stat(p), "file")
end)

T.test("bridge_listen checks its arguments", function()
  T.eq(pcall(raymond.bridge_listen, nil, print), false)
  local ok, err = pcall(raymond.bridge_listen, DIR .. "/x.sock", "not a function")
  T.eq(ok, false)
  T.has(err, "function expected")
end)

do
  local path = DIR .. "/a.sock"
  local seen = {}
  local srv = assert(raymond.bridge_listen(path, function(conn, token, body)
    seen.token, seen.body = token, body
    seen.co = coroutine.isyieldable()
    -- A handler may wait: other requests and agents go on meanwhile.
    raymond.sleep(0.01)
    seen.sent = conn:reply(0, "answer to " .. body)
    seen.again = { pcall(conn.reply, conn, 0, "twice") }
  end))
  local res = call(path, '{"tool_name":"Bash"}')
  T.test("a request reaches the handler, which may yield, and its answer the client", function()
    T.eq(seen.token, TOKEN, "token")
    T.eq(seen.body, '{"tool_name":"Bash"}', "body")
    T.eq(seen.co, true, "the handler runs in a coroutine of its own")
    T.eq(seen.sent, true, "reply")
    T.eq(res.exit, 0, "exit")
    T.eq(res.stdout, 'answer to {"tool_name":"Bash"}')
    T.eq(res.stderr, "")
  end)
  T.test("a second reply raises", function()
    T.eq(seen.again[1], false)
    T.has(seen.again[2], "conn:reply: this request has its answer already")
  end)
  T.test("the socket is mode 0600; close removes it and may be called again", function()
    local out = raymond.spawn({ argv = { "stat", "-c", "%a %F", path }, capture = true })
    T.eq(out.stdout, "600 socket\n")
    srv:close()
    T.eq(raymond.stat(path), nil, "removed")
    srv:close()
  end)
end

do
  local path = DIR .. "/b.sock"
  local codes = {}
  local srv = assert(raymond.bridge_listen(path, function(conn, _, body)
    if body == "bad code" then
      codes.bad = { pcall(conn.reply, conn, 1, "x") }
      conn:reply(2, "refused")
    else
      conn:reply(2, "no: " .. body)
    end
  end))
  local denied = call(path, "rm -rf")
  local bad = call(path, "bad code")
  T.test("code 2: the text on the client's stderr, exit 2", function()
    T.eq(denied.exit, 2)
    T.eq(denied.stdout, "")
    T.eq(denied.stderr, "no: rm -rf")
  end)
  T.test("a code other than 0 and 2 raises", function()
    T.eq(codes.bad[1], false)
    T.has(codes.bad[2], "the code is 0 or 2")
    T.eq(bad.exit, 2)
  end)
  srv:close()
end

do
  local path = DIR .. "/c.sock"
  local late
  local srv = assert(raymond.bridge_listen(path, function(conn)
    -- The client gives up before this answer: the peer is gone.
    raymond.sleep(2)
    late = conn:reply(0, "too late")
  end))
  local res = call(path, "{}", { "--timeout", "0.2" })
  while late == nil do raymond.sleep(0.05) end
  T.test("a reply after the client gave up returns false", function()
    T.has(res.stderr, "no answer from the bridge within 0.2 seconds; the tool call is denied")
    T.eq(late, false)
  end)
  srv:close()
end

do
  local path = DIR .. "/d.sock"
  local srv = assert(raymond.bridge_listen(path, function(conn, _, body)
    if body == "drop" then
      conn = nil
      collectgarbage()
      return
    end
    conn:reply(0, "ok")
  end))
  local res = call(path, "drop")
  T.test("a conn collected without a reply closes its connection; the client denies", function()
    T.eq(res.exit, 2)
    T.has(res.stderr, "the bridge closed the connection without an answer; the tool call is denied")
  end)
  srv = nil
  collectgarbage()
  collectgarbage()
  T.test("a server collected unclosed removes its socket", function()
    T.eq(raymond.stat(path), nil)
  end)
end

T.test("something that is not a socket at the path: nil and a message, the file kept", function()
  local path = DIR .. "/file.sock"
  T.put(path, "keep")
  local srv, err = raymond.bridge_listen(path, print)
  T.eq(srv, nil)
  T.eq(err, "cannot make the bridge socket '" .. path ..
    "': something that is not a socket is in the way (remove it)")
  T.eq(T.get(path), "keep")
  local nodir
  srv, nodir = raymond.bridge_listen(DIR .. "/nowhere/x.sock", print)
  T.eq(srv, nil)
  T.eq(nodir, "no folder for the bridge socket '" .. DIR .. "/nowhere/x.sock'")
  local name = string.rep("n", 100)
  local long
  srv, long = raymond.bridge_listen(DIR .. "/" .. name, print)
  T.eq(srv, nil)
  T.eq(long, "the bridge socket name '" .. name .. "' is too long for a Unix socket")
end)

-- Last: a server left open does not keep luarun's loop alive, so this
-- file still ends.
OPEN = assert(raymond.bridge_listen(DIR .. "/e.sock", print))
