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
