-- raymond.http_listen: requests answered at once, later from the
-- handler's coroutine, as a stream, or left unanswered (500), over real
-- TCP with bash's /dev/tcp as the client.
local T = require("testing")
local raymond = require("raymond")

-- One request, raw: the whole answer as the server sent it.
local function fetch(port, text)
  local script = string.format('exec 3<>/dev/tcp/127.0.0.1/%d; printf "%%s" "$1" >&3; cat <&3', port)
  local res = raymond.spawn({ argv = { "bash", "-c", script, "bash", text }, capture = true, timeout = 30 })
  return res.stdout or ""
end

local function get(port, path)
  return fetch(port, "GET " .. path .. " HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
end

T.test("answers: at once, later, streamed, missing, too big", function()
  local srv = assert(raymond.http_listen{ port = 0, max_body = 100, handler = function(req)
    if req:path() == "/now" then
      req:respond(200, { ["Content-Type"] = "text/plain" }, "now " .. req:method() .. " " .. tostring(req:arg("x")))
    elseif req:path() == "/later" then
      raymond.sleep(0.05)
      req:respond(201, {}, "later " .. req:body() .. " " .. tostring(req:header("x-who")))
    elseif req:path() == "/sse" then
      req:stream(200, { ["Content-Type"] = "text/event-stream" })
      for i = 1, 3 do
        req:send("data: " .. i .. "\n\n")
        raymond.sleep(0.02)
      end
      req:finish()
    end
  end })
  local port = srv:port()
  T.has(get(port, "/now?x=1"), "now GET 1")
  local later = fetch(port, "POST /later HTTP/1.1\r\nHost: t\r\nX-Who: me\r\nContent-Length: 5\r\n"
    .. "Connection: close\r\n\r\nhello")
  T.has(later, "HTTP/1.1 201")
  T.has(later, "later hello me")
  local sse = get(port, "/sse")
  T.has(sse, "data: 1")
  T.has(sse, "data: 3")
  T.has(get(port, "/none"), "HTTP/1.1 500")
  local big = fetch(port, "POST /now HTTP/1.1\r\nHost: t\r\nContent-Length: 200\r\nConnection: close\r\n\r\n"
    .. string.rep("a", 200))
  T.has(big, "HTTP/1.1 413")
  srv:close()
end)

T.test("a bad address or port is an error, not a raise", function()
  local srv, err = raymond.http_listen{ host = "nowhere", handler = function() end }
  T.eq(srv, nil)
  T.has(err, "is not an IPv4 or IPv6 address")
end)

-- Wait, a bounded time, until done() holds.
local function until_true(done)
  for _ = 1, 1200 do
    if done() then return true end
    raymond.sleep(0.05)
  end
  return false
end

T.test("a server closed while a handler waits: the request is gone, not freed under it", function()
  local started, after = false, nil
  local srv <close> = assert(raymond.http_listen{ port = 0, handler = function(req)
    started = true
    raymond.sleep(0.2)
    -- The server closed meanwhile: each use of req says so, none raises
    -- or reads freed memory.
    after = { req:header("Host"), select("#", req:header("Host")), req:respond(200, {}, "late") }
  end })
  local port = srv:port()
  local answer
  raymond.go(function() answer = get(port, "/wait") end)
  T.eq(until_true(function() return started end), true, "the handler started")
  srv:close()
  T.eq(until_true(function() return after ~= nil and answer ~= nil end), true, "the handler went on")
  T.same(after, { nil, 1, nil, "gone" })
  T.eq(answer, "", "the client saw the connection close")
end)

T.test("a server closed while a stream waits for more: its on_gone runs, send says gone", function()
  local streaming, gone, after = false, false, nil
  local srv <close> = assert(raymond.http_listen{ port = 0, handler = function(req)
    req:stream(200, { ["Content-Type"] = "text/event-stream" }, function() gone = true end)
    req:send("data: 1\n\n")
    streaming = true
    raymond.sleep(0.2)
    after = { req:send("data: 2\n\n") }
  end })
  local port = srv:port()
  local answer
  raymond.go(function() answer = get(port, "/sse") end)
  T.eq(until_true(function() return streaming end), true, "the stream began")
  raymond.sleep(0.1)
  srv:close()
  T.eq(until_true(function() return after ~= nil and answer ~= nil end), true, "the handler went on")
  T.eq(gone, true, "on_gone ran")
  T.same(after, { nil, "gone" })
  T.has(answer, "data: 1")
end)

T.test("a body over max_body: refused at once when declared, after it when chunked", function()
  local called = 0
  local srv <close> = assert(raymond.http_listen{ port = 0, max_body = 100, timeout = 5, handler = function(req)
    called = called + 1
    req:respond(200, {}, "ok")
  end })
  local port = srv:port()
  -- The client sends a tenth of the body it declares, and waits: the
  -- answer comes without the rest, long before the idle timeout.
  local t0 = raymond.clock()
  local early = fetch(port, "POST /x HTTP/1.1\r\nHost: t\r\nContent-Length: 100000\r\n\r\n" .. string.rep("a", 10000))
  T.has(early, "HTTP/1.1 413 ")
  T.has(early, "over the server's limit")
  T.eq(raymond.clock() - t0 < 4, true, "answered before the idle timeout")
  local chunk = string.format("%x\r\n%s\r\n", 60, string.rep("b", 60))
  local chunked = fetch(port, "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    .. chunk .. chunk .. "0\r\n\r\n")
  T.has(chunked, "HTTP/1.1 413 ")
  local fits = fetch(port, "POST /x HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    .. chunk .. "0\r\n\r\n")
  T.has(fits, "HTTP/1.1 200 ")
  T.eq(called, 1, "the handler saw only the body that fits")
end)

T.test("a client that never reads a stream: send says full, the buffer stays bounded", function()
  local dir = T.tmpdir()
  local sent, full, why = 0, false, nil
  local chunk = string.rep("x", 1023) .. "\n"
  local srv <close> = assert(raymond.http_listen{ port = 0, max_stream = 64 * 1024, handler = function(req)
    req:stream(200, { ["Content-Type"] = "text/event-stream" })
    for _ = 1, 1024 * 1024 do
      local ok, err = req:send(chunk)
      if not ok then
        full, why = true, err
        break
      end
      sent = sent + #chunk
      -- Let the loop write what it can to the socket.
      if sent % (64 * 1024) == 0 then raymond.sleep(0.01) end
    end
    req:finish()
  end })
  -- The client asks, then reads nothing until told to stop.
  local script = string.format('exec 3<>/dev/tcp/127.0.0.1/%d; printf "GET /s HTTP/1.1\\r\\nHost: t\\r\\n\\r\\n" >&3; '
    .. 'while [ ! -e "%s/stop" ]; do sleep 0.05; done', srv:port(), dir)
  local done = false
  raymond.go(function()
    raymond.spawn({ argv = { "bash", "-c", script }, capture = true, timeout = 60 })
    done = true
  end)
  T.eq(until_true(function() return full end), true, "send said full")
  T.eq(why, "full")
  -- What the server holds is its 64 KiB; the rest sits in the kernel's
  -- socket buffers, which are bounded too.
  T.eq(sent < 16 * 1024 * 1024, true, "bytes accepted before full: " .. sent)
  T.put(dir .. "/stop", "")
  T.eq(until_true(function() return done end), true, "the client ended")
end)

T.test("slowloris: a connection that stops half way through its headers is closed after the idle timeout", function()
  local called = false
  local srv <close> = assert(raymond.http_listen{ port = 0, timeout = 1, handler = function(req)
    called = true
    req:respond(200, {}, "ok")
  end })
  local t0 = raymond.clock()
  local answer = fetch(srv:port(), "GET /x HTTP/1.1\r\nHost: t\r\nX-Slow: a")
  local took = raymond.clock() - t0
  T.eq(answer, "", "closed without an answer")
  T.eq(called, false)
  T.eq(took >= 0.9 and took < 20, true, "closed after " .. took .. " s")
end)

T.test("a handler may close its own server: it stops once the request in hand is done with", function()
  local srv
  local results = {}
  srv = assert(raymond.http_listen{ port = 0, handler = function(req)
    srv:close()
    -- MHD still holds this connection: the stop waits until it lets go.
    results = { req:header("Host"), req:respond(200, {}, "last") }
  end })
  local port = srv:port()
  local answer = get(port, "/x")
  T.same(results, { "t", true })
  T.has(answer, "HTTP/1.1 200")
  T.has(answer, "last")
  -- And it is closed: a new connection is refused.
  T.eq(get(port, "/y"), "")
end)

T.test("pipelined requests behind a handler that waits are answered in order", function()
  local srv <close> = assert(raymond.http_listen{ port = 0, handler = function(req)
    if req:path() == "/slow" then raymond.sleep(0.1) end
    req:respond(200, {}, "<" .. req:method() .. " " .. req:path() .. " " .. req:body() .. ">")
  end })
  local answer = fetch(srv:port(), "GET /slow HTTP/1.1\r\nHost: t\r\n\r\nGET /fast HTTP/1.1\r\nHost: t\r\n\r\n"
    .. "POST /slow HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}"
    .. "GET /end HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
  local bodies = {}
  for b in answer:gmatch("<([^>]*)>") do bodies[#bodies + 1] = b end
  T.same(bodies, { "GET /slow ", "GET /fast ", "POST /slow {}", "GET /end " })
end)
