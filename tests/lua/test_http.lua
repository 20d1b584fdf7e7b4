local T = require("testing")
local raymond = require("raymond")
T.test("a request answered at once and one answered later", function()
  local later
  local srv = assert(raymond.http_listen{ port = 0, handler = function(req)
    if req:path() == "/now" then
      req:respond(200, { ["Content-Type"] = "text/plain" }, "now " .. req:method() .. " " .. tostring(req:arg("x")))
    elseif req:path() == "/later" then
      raymond.sleep(0.1)
      req:respond(201, {}, "later " .. req:body())
    elseif req:path() == "/sse" then
      req:stream(200, { ["Content-Type"] = "text/event-stream" })
      for i = 1, 3 do req:send("data: " .. i .. "\n\n") raymond.sleep(0.05) end
      req:finish()
    end
  end })
  local port = srv:port()
  local function curl(...)
    return raymond.spawn({ argv = { "curl", "-s", "-S", "-i", ... }, capture = true })
  end
  local r = curl("http://127.0.0.1:" .. port .. "/now?x=1")
  T.has(r.stdout, "now GET 1")
  r = curl("-d", "hello", "http://127.0.0.1:" .. port .. "/later")
  T.has(r.stdout, "201")
  T.has(r.stdout, "later hello")
  r = curl("http://127.0.0.1:" .. port .. "/sse")
  T.has(r.stdout, "data: 3")
  r = curl("http://127.0.0.1:" .. port .. "/none")
  T.has(r.stdout, "500")
  srv:close()
end)
