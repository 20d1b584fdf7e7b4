-- raymond.serve: the HTTP API of `raymond serve` (docs/serve.md).
--
--   local api = serve.new{ ws =, cwd =, host =, port =, token = }
--   api:handle(req)        -- a request of raymond.http_listen
--   api:login_link()       -- a one-time link that sets the cookie
--
-- The daemon holds no run state: every answer is read from .raymond/,
-- as `raymond list` and `raymond status` read it.  A request is checked
-- before anything else, in this order:
--
--   Host     must name the address the daemon listens on (a page of
--            another site, reached through DNS rebinding, names its own)
--   Origin   when sent, must be this daemon's own origin (a form or a
--            script of another site sends its own: CSRF)
--   token    `Authorization: Bearer TOKEN`, or the cookie the one-time
--            login link set; compared in time that does not depend on
--            where it differs
--
-- Every error is JSON {"error": ..., "hint": ...} with its status.

local raymond = require("raymond")
local list = require("raymond.commands.list")
local runinfo = require("raymond.runinfo")
local workspace = require("raymond.workspace")

local M = {}

M.COOKIE = "raymond_token"

local Api = {}
Api.__index = Api

function M.new(o)
  local api = setmetatable({ ws = o.ws, cwd = o.cwd, token = o.token, logins = {} }, Api)
  local hosts = { o.host }
  if o.host == "127.0.0.1" or o.host == "::1" then hosts[#hosts + 1] = "localhost" end
  api.hosts, api.origins = {}, {}
  for _, h in ipairs(hosts) do
    local name = h:find(":", 1, true) and ("[" .. h .. "]") or h
    api.hosts[name .. ":" .. o.port] = true
    api.origins["http://" .. name .. ":" .. o.port] = true
  end
  api.base = "http://" .. (o.host:find(":", 1, true) and ("[" .. o.host .. "]") or o.host) .. ":" .. o.port
  return api
end

-- A fresh secret: 64 hex digits.
function M.secret()
  return (raymond.uuid() .. raymond.uuid()):gsub("-", "")
end

-- The daemon's token, made on first start (.raymond/serve/token, 0600).
function M.token(ws)
  local dir = ws.root .. "/serve"
  local path = dir .. "/token"
  local have = raymond.read_file(path, 4096)
  if have and have:match("^%x+\n?$") and #have >= 64 then return (have:gsub("\n", "")), path end
  local ok, err = raymond.mkdir_p(dir)
  if not ok then return nil, err end
  local t = M.secret()
  ok, err = raymond.write_atomic(path, t .. "\n", "private")
  if not ok then return nil, err end
  return t, path
end

-- Equal texts, compared in time that does not depend on where they differ.
local function same(a, b)
  if type(a) ~= "string" or #a ~= #b then return false end
  local diff = 0
  for i = 1, #a do diff = diff | (a:byte(i) ~ b:byte(i)) end
  return diff == 0
end

function Api:login_link()
  local code = M.secret()
  self.logins[code] = true
  return self.base .. "/login?code=" .. code
end

local JSON = { ["Content-Type"] = "application/json", ["Cache-Control"] = "no-store" }

local function answer(req, status, body)
  req:respond(status, JSON, raymond.json_encode(body) .. "\n")
end

local function fail(req, status, msg, hint)
  answer(req, status, { error = msg, hint = hint })
end

local function cookie(req)
  local c = req:header("Cookie") or ""
  return c:match("%f[%w_]" .. M.COOKIE .. "=(%x+)")
end

-- Nil when the request may go on, else it has been answered.
function Api:refused(req)
  local host = req:header("Host")
  if not self.hosts[host or ""] then
    fail(req, 403, "the Host header names another server: " .. tostring(host),
      "reach the daemon by the address it listens on, " .. self.base)
    return true
  end
  local origin = req:header("Origin")
  if origin and not self.origins[origin] then
    fail(req, 403, "a request from another origin (" .. origin .. ") is refused")
    return true
  end
  return false
end

function Api:authorised(req)
  local auth = req:header("Authorization") or ""
  local bearer = auth:match("^Bearer%s+(%S+)$")
  return same(bearer or cookie(req), self.token)
end

-- GET /login?code=CODE: a one-time code becomes the HttpOnly cookie.
function Api:login(req)
  local code = req:arg("code") or ""
  if not self.logins[code] then
    fail(req, 401, "this login link is used or unknown", "use the link raymond serve printed, once")
    return
  end
  self.logins[code] = nil
  req:respond(303, {
    Location = "/",
    ["Set-Cookie"] = string.format("%s=%s; HttpOnly; SameSite=Strict; Path=/", M.COOKIE, self.token),
    ["Cache-Control"] = "no-store",
  }, "")
end

function Api:runs(req)
  local items = {}
  for i, info in ipairs(runinfo.all(self.ws)) do items[i] = list.json_object(info) end
  req:respond(200, JSON, "[" .. table.concat(items, ",\n") .. "]\n")
end

function Api:run(req, id)
  local ok = workspace.valid_id(id)
  if not ok or not raymond.stat(workspace.state_path(self.ws, id), true) then
    fail(req, 404, "no run " .. id, "GET /api/runs lists them")
    return
  end
  local info = runinfo.read(self.ws, id)
  if not info.rec then
    fail(req, 500, info.error)
    return
  end
  local rec = info.rec
  rec.status = info.status
  req:respond(200, JSON, raymond.json_encode(rec) .. "\n")
end

function Api:handle(req)
  if self:refused(req) then return end
  local method, path = req:method(), req:path()
  if path == "/login" and method == "GET" then return self:login(req) end
  if not self:authorised(req) then
    fail(req, 401, "a token is needed", "send Authorization: Bearer TOKEN (the file .raymond/serve/token), "
      .. "or open the login link raymond serve printed")
    return
  end
  if method ~= "GET" then
    fail(req, 405, method .. " is not allowed here")
    return
  end
  if path == "/api/runs" then return self:runs(req) end
  local id = path:match("^/api/runs/([^/]+)$")
  if id then return self:run(req, id) end
  fail(req, 404, "no such path: " .. path, "the API is in docs/serve.md")
end

return M
