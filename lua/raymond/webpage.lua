-- raymond.webpage: the web page of `raymond serve` (docs/serve.md, "The
-- web page").
--
--   GET /               web/index.html
--   GET /assets/NAME    web/NAME (app.js, app.css), and diagram.css
--
-- The files are compiled into the binary (tools/embed.sh), so the page
-- works from any folder and cannot differ from the daemon that serves it.
-- They hold no data: everything the page shows it asks the API for, with
-- the token.  So they are served without one, once the daemon's Host and
-- Origin checks have passed (raymond.serve).
--
-- Every answer carries a Content-Security-Policy that lets the page load
-- only its own files and talk only to its own daemon: no inline script,
-- nothing from another site, no framing by another page.

local raymond = require("raymond")

local M = {}

M.CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
  .. "connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

M.TYPES = {
  html = "text/html; charset=utf-8",
  js = "text/javascript; charset=utf-8",
  css = "text/css; charset=utf-8",
}

-- The paths of the page, as patterns of raymond.serve's routes.
M.INDEX = "^/$"
M.ASSET = "^/assets/([^/]+)$"

-- Whether `path` is one of the page's files, which need no token.
function M.public(path)
  return path:match(M.INDEX) ~= nil or path:match(M.ASSET) ~= nil
end

-- The headers of every answer, with the Content-Type of `name`.
function M.headers(name)
  return {
    ["Content-Type"] = M.TYPES[name:match("%.(%w+)$") or ""] or "application/octet-stream",
    ["Content-Security-Policy"] = M.CSP,
    ["X-Content-Type-Options"] = "nosniff",
    ["Referrer-Policy"] = "no-referrer",
    -- Asked again on every load, so a newer daemon's page is never mixed
    -- with an older one's script.
    ["Cache-Control"] = "no-cache",
  }
end

local files

-- The text of web/NAME, or nil.  diagram.css is the drawing's style of
-- raymond.svg, so the page and `raymond diagram --html` draw alike.
function M.file(name)
  if name == "diagram.css" then return require("raymond.svg").DIAGRAM_STYLE end
  files = files or raymond.embedded("web/")
  return files["web/" .. name]
end

local function send(req, name)
  local text = M.file(name)
  if not text then
    local h = M.headers(name)
    h["Content-Type"] = "application/json"
    req:respond(404, h, raymond.json_encode({ error = "no such file: " .. req:path(),
      hint = "the page is at /" }) .. "\n")
    return
  end
  req:respond(200, M.headers(name), text)
end

-- The handlers of raymond.serve's M.ROUTES (api, req, name).
function M.index(_, req) send(req, "index.html") end

function M.asset(_, req, name) send(req, name) end

return M
