-- raymond.webpage: the files of raymond serve's page, compiled into the
-- binary as they are in web/, answered with their types and the security
-- headers; which paths are the page's (served without the token); and
-- the page's rule that text from the API is never parsed as HTML.
local T = require("testing")
local raymond = require("raymond")
local webpage = require("raymond.webpage")

local TOP = os.getenv("TESTS_TOP") or "."

-- A request of raymond.http_listen, as the page's handlers use it: the
-- answer is kept in `got`.
local function request(path)
  local got = {}
  local req = {
    path = function() return path end,
    respond = function(_, status, headers, body)
      got.status, got.headers, got.body = status, headers, body
    end,
  }
  return req, got
end

T.test("every file of web/ is compiled in as it is in the tree", function()
  local names = assert(raymond.listdir(TOP .. "/web"))
  T.eq(#names >= 3, true, "web/ holds the page")
  for _, name in ipairs(names) do
    T.eq(webpage.file(name), assert(raymond.read_file(TOP .. "/web/" .. name)), "web/" .. name)
  end
end)

T.test("/ is index.html, /assets/NAME the file, each with its type and the security headers", function()
  local req, got = request("/")
  webpage.index(nil, req)
  T.eq(got.status, 200)
  T.eq(got.body, webpage.file("index.html"))
  T.eq(got.headers["Content-Type"], "text/html; charset=utf-8")
  for name, ctype in pairs({ ["app.js"] = "text/javascript; charset=utf-8", ["app.css"] = "text/css; charset=utf-8" }) do
    req, got = request("/assets/" .. name)
    webpage.asset(nil, req, name)
    T.eq(got.status, 200, name)
    T.eq(got.headers["Content-Type"], ctype, name)
  end
  req, got = request("/assets/diagram.css")
  webpage.asset(nil, req, "diagram.css")
  T.eq(got.body, require("raymond.svg").DIAGRAM_STYLE, "the drawing's style, as diagram --html has it")
  T.has(got.body, ".node.script polygon")
  T.eq(got.headers["Content-Type"], "text/css; charset=utf-8")
  T.eq(got.headers["Content-Security-Policy"], "default-src 'none'; script-src 'self'; style-src 'self'; "
    .. "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
  T.eq(got.headers["X-Content-Type-Options"], "nosniff")
  T.eq(got.headers["Referrer-Policy"], "no-referrer")
end)

T.test("a file that is not there is a JSON 404, with the headers", function()
  local req, got = request("/assets/nope.js")
  webpage.asset(nil, req, "nope.js")
  T.eq(got.status, 404)
  T.eq(got.headers["Content-Type"], "application/json")
  T.eq(got.headers["Content-Security-Policy"], webpage.CSP)
  T.eq(raymond.cjson.decode(got.body).error, "no such file: /assets/nope.js")
end)

T.test("only the page's own paths need no token", function()
  for _, p in ipairs({ "/", "/assets/app.js", "/assets/app.css" }) do T.eq(webpage.public(p), true, p) end
  for _, p in ipairs({ "/api/runs", "/api/runs/x/events", "/login", "/assets/", "/assets/a/b",
                       "/assets/../api/runs", "//", "/index.html" }) do
    T.eq(webpage.public(p), false, p)
  end
end)

T.test("index.html refers only to files the daemon serves", function()
  local html = webpage.file("index.html")
  local n = 0
  for attr, ref in html:gmatch('%s(%a+)="([^"]*)"') do
    if attr == "src" or (attr == "href" and ref:sub(1, 1) ~= "#") then
      local name = ref:match("^/assets/([^/]+)$")
      T.eq(name ~= nil and webpage.file(name) ~= nil, true, attr .. "=" .. ref)
      n = n + 1
    end
  end
  T.eq(n > 0, true, "refers to its script and style sheet")
end)

T.test("the script sets HTML only from the daemon's diagram: all else is text", function()
  local js = webpage.file("app.js")
  local uses = {}
  for line in js:gmatch("[^\n]*innerHTML[^\n]*") do uses[#uses + 1] = line end
  T.eq(#uses, 1, "one use of innerHTML")
  T.has(uses[1], "fig.innerHTML = d.svg;")
  T.eq(js:find("outerHTML", 1, true), nil)
  T.eq(js:find("insertAdjacentHTML", 1, true), nil)
  T.eq(js:find("document.write", 1, true), nil)
end)
