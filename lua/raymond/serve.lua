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
--            where it differs; the page's own files (raymond.webpage)
--            need none, as they hold no data
--
-- Every error is JSON {"error": ..., "hint": ...} with its status.

local raymond = require("raymond")
local ask = require("raymond.ask")
local list = require("raymond.commands.list")
local runinfo = require("raymond.runinfo")
local events = require("raymond.serve_events")
local webpage = require("raymond.webpage")
local workflows = require("raymond.serve_workflows")
local workspace = require("raymond.workspace")

local M = {}

M.COOKIE = "raymond_token"

local Api = {}
Api.__index = Api

function M.new(o)
  local api = setmetatable({ ws = o.ws, cwd = o.cwd, token = o.token, logins = {}, roots = o.roots or { o.cwd } },
    Api)
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

-- A message may quote the request (its path, a header, a field's name):
-- shown printable, it is UTF-8, as JSON must be, whatever bytes came.
local function fail(req, status, msg, hint)
  answer(req, status, { error = raymond.printable(msg), hint = hint and raymond.printable(hint) })
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

-- GET /api/runs: as `raymond list --json`, from a listing that reads a
-- run again only when its files changed (runinfo.listing), and takes the
-- changes every second in between; the body is made again only when one
-- of its objects changed.
function Api:start_listing()
  if self.listing then return end
  local listing = runinfo.listing(self.ws, list.json_object)
  self.listing = listing
  raymond.go(function()
    while raymond.sleep(1) do listing:drain() end
  end)
end

-- Read every run once now, so that the first GET /api/runs answers as
-- fast as the next ones (the daemon calls it when it starts).
function Api:warm()
  self:start_listing()
  self.listing:all()
end

function Api:runs(req)
  self:start_listing()
  local values = self.listing:all()
  if self.runs_version ~= self.listing.version then
    self.runs_body = "[" .. table.concat(values, ",\n") .. "]\n"
    self.runs_version = self.listing.version
  end
  req:respond(200, JSON, self.runs_body)
end

-- The run ID names, or nil with the request answered.
function Api:existing(req, id)
  if not workspace.valid_id(id) or not raymond.stat(workspace.state_path(self.ws, id), true) then
    fail(req, 404, "no run " .. id, "GET /api/runs lists them")
    return nil
  end
  local info = runinfo.read(self.ws, id)
  if not info.rec then
    fail(req, 500, info.error)
    return nil
  end
  return info
end

local ARRAY = { __jsontype = "array" }

-- A run as GET /api/runs/ID and the `run` event give it: its record, the
-- status raymond status shows, whether a raymond drives it now, and its
-- pending asks.
function M.snapshot(info)
  local rec = info.rec
  rec.status, rec.running = info.status, info.held and true or false
  rec.cost, rec.budget = info.cost, info.budget
  setmetatable(rec.agents, ARRAY)
  for _, a in ipairs(rec.agents) do
    if type(a.stack) == "table" then setmetatable(a.stack, ARRAY) end
  end
  local asks = setmetatable({}, ARRAY)
  for i, a in ipairs(ask.pending(rec)) do
    asks[i] = { ask_id = a.ask.id, agent = a.id, prompt = a.ask.prompt, asked_at = a.ask.asked_at,
                deadline = a.ask.deadline }
  end
  rec.asks = asks
  return raymond.json_encode(rec)
end

function Api:run(req, id)
  local info = self:existing(req, id)
  if not info then return end
  req:respond(200, JSON, M.snapshot(info) .. "\n")
end

-- GET /api/runs/ID/events: the run as Server-Sent Events.
function Api:events(req, id)
  if not self:existing(req, id) then return end
  events.stream(self, req, id, M.snapshot)
end

-- GET /api/runs/ID/diagram: the drawing of the run's own workflow.
function Api:diagram(req, id)
  local info = self:existing(req, id)
  if not info then return end
  local w, err = workflows.inspect(info.rec.workflow, self.cwd)
  if not w then return fail(req, 422, "cannot draw the run's workflow: " .. err.msg, err.hint) end
  answer(req, 200, { svg = w.svg, mermaid = w.mermaid })
end

-- GET /api/workflows
function Api:workflows(req)
  answer(req, 200, setmetatable(workflows.list(self.roots), ARRAY))
end

-- GET /api/workflow?path=PATH
function Api:workflow(req)
  local path = req:arg("path")
  if not path or path == "" then return fail(req, 400, "the query needs path=WORKFLOW") end
  local wf, why = self:inside_roots(path)
  if not wf then return fail(req, 400, why, "GET /api/workflows lists the workflows under the roots") end
  local w, err = workflows.inspect(wf, self.cwd)
  if not w then return fail(req, 422, err.msg, err.hint) end
  answer(req, 200, w)
end

-- ------------------------------------------------------------------ actions

-- The request's body as a JSON object whose fields are among `fields`
-- (name -> Lua type); or nil, the request answered 400.
local function body_of(req, fields)
  if req:body():match("^%s*$") then return {} end
  local ok, obj = pcall(raymond.cjson.decode, req:body())
  if not ok or type(obj) ~= "table" or (next(obj) == nil and req:body():match("^%s*%[")) then
    fail(req, 400, "the body must be a JSON object", "send Content-Type: application/json and {...}")
    return nil
  end
  for k, v in pairs(obj) do
    if not fields[k] then
      local names = {}
      for n in pairs(fields) do names[#names + 1] = n end
      table.sort(names)
      fail(req, 400, string.format("unknown field '%s'", tostring(k)), "the fields are " .. table.concat(names, ", "))
      return nil
    end
    if type(v) ~= fields[k] then
      fail(req, 400, string.format("field '%s' must be a %s, not a %s", k, fields[k], type(v)))
      return nil
    end
  end
  return obj
end

-- Start `raymond ARGS...` in a session of its own, its output appended
-- to the run's log under .raymond/serve/logs: it outlives the daemon,
-- which only reads what it leaves in .raymond/.
function Api:detach(id, args)
  local logs = self.ws.root .. "/serve/logs"
  local ok, err = raymond.mkdir_p(logs)
  if not ok then return nil, err end
  -- raymond.spawn ends the command's process group once it exits, so
  -- the shell waits until the run has a session of its own (setsid, not
  -- forking, as the shell's child is no group leader) before it exits.
  local argv = { "sh", "-c", 'setsid "$@" </dev/null >>"$RAYMOND_SERVE_LOG" 2>&1 & p=$!; i=0\n'
    .. 'while [ "$(sed "s/.*) //" /proc/$p/stat 2>/dev/null | cut -d" " -f4)" = "$$" ] && [ $i -lt 1000 ]; do\n'
    .. '  sleep 0.01; i=$((i + 1))\ndone', "sh", raymond.exe_path() }
  table.move(args, 1, #args, #argv + 1, argv)
  local env = raymond.environ()
  env.RAYMOND_SERVE_LOG = logs .. "/" .. id .. ".log"
  local res = raymond.spawn({ argv = argv, env = env, cwd = self.cwd, capture = true })
  if res.spawn_error or res.exit ~= 0 then
    return nil, res.spawn_error or ("setsid failed: " .. (res.stderr or ""))
  end
  return env.RAYMOND_SERVE_LOG
end

-- Wait, a bounded time, until `done()` holds; the log's last lines when
-- it does not.
local function wait_for(done, log)
  for _ = 1, 200 do
    if done() then return true end
    if not raymond.sleep(0.05) then return false end
  end
  return false, require("raymond.console").tail(raymond.read_file(log, 1024 * 1024) or "", 5)
end

-- `path` resolved, if it lies inside one of the roots; or nil and why.
function Api:inside_roots(path)
  local abs = path:sub(1, 1) == "/" and path or (self.roots[1] .. "/" .. path)
  local real = raymond.realpath(abs)
  if not real then return nil, "no workflow at " .. path end
  for _, root in ipairs(self.roots) do
    local r = raymond.realpath(root)
    if r and (real == r or real:sub(1, #r + 1) == r .. "/") then return real end
  end
  return nil, path .. " is not under the daemon's roots (" .. table.concat(self.roots, ", ") .. ")"
end

-- POST /api/runs {workflow, input, budget, name, on_ask}: a new run.
function Api:launch(req)
  local b = body_of(req, { workflow = "string", input = "string", budget = "number", name = "string",
                           on_ask = "string", id = "string" })
  if not b then return end
  if not b.workflow then return fail(req, 400, "field 'workflow' is needed") end
  if b.id then
    local ok, verr = workspace.valid_id(b.id)
    if not ok then return fail(req, 400, "field 'id': " .. verr) end
    if raymond.stat(workspace.state_path(self.ws, b.id), true) then
      return fail(req, 409, "run " .. b.id .. " exists already", "GET /api/runs/" .. b.id .. " shows it")
    end
  end
  if b.on_ask and b.on_ask ~= "pause" and b.on_ask ~= "reject" then
    return fail(req, 400, "field 'on_ask' must be \"pause\" or \"reject\"")
  end
  local wf, why = self:inside_roots(b.workflow)
  if not wf then return fail(req, 400, why, "give a workflow under a --root of raymond serve") end
  local id = b.id or workspace.new_id(self.ws)
  local args = { "run", wf, "--workflow-id", id }
  if b.input then table.move({ "--input", b.input }, 1, 2, #args + 1, args) end
  if b.budget then table.move({ "--budget", string.format("%.6g", b.budget) }, 1, 2, #args + 1, args) end
  if b.name then table.move({ "--name", b.name }, 1, 2, #args + 1, args) end
  if b.on_ask then table.move({ "--on-ask", b.on_ask }, 1, 2, #args + 1, args) end
  local log, err = self:detach(id, args)
  if not log then return fail(req, 500, "cannot start the run: " .. tostring(err)) end
  local state = workspace.state_path(self.ws, id)
  local ok, tail = wait_for(function() return raymond.stat(state) ~= nil end, log)
  if not ok then
    return fail(req, 422, "the run did not start" .. (tail and tail ~= "" and (": " .. tail) or ""))
  end
  answer(req, 201, { id = id })
end

-- POST /api/runs/ID/resume
function Api:resume(req, id)
  local info = self:existing(req, id)
  if not info then return end
  if info.held then return fail(req, 409, "run " .. id .. " is running") end
  if info.status == "completed" then return fail(req, 409, "run " .. id .. " is completed: nothing to resume") end
  if not body_of(req, {}) then return end
  local log, err = self:detach(id, { "resume", id })
  if not log then return fail(req, 500, "cannot resume the run: " .. tostring(err)) end
  answer(req, 202, { id = id })
end

-- POST /api/runs/ID/stop: the run's raymond is sent SIGTERM, as Ctrl-C
-- would stop it: it ends its agents, saves the run as interrupted, and
-- the run can be resumed.  The process is the one the run's lease names,
-- whoever started it, when it is on this host.
function Api:stop(req, id)
  local info = self:existing(req, id)
  if not info then return end
  if not body_of(req, {}) then return end
  local pid = raymond.lock_owner(workspace.lock_path(self.ws, id))
  local lease = not pid and raymond.lease(workspace.lock_path(self.ws, id))
  if lease and lease.live and not lease.here then
    return fail(req, 409, string.format("run %s is driven by raymond pid %d on host %s, not this one",
      id, lease.pid, lease.host), "stop it on " .. lease.host)
  end
  if not pid then
    return fail(req, 409, string.format("run %s is not running (it is %s)", id, info.status),
      info.status ~= "completed" and ("POST /api/runs/" .. id .. "/resume continues it") or nil)
  end
  local proc = raymond.process(pid)
  if not (proc and raymond.signal(pid, proc.start, "TERM", false)) then
    return fail(req, 409, string.format("run %s has just ended", id), "GET /api/runs/" .. id .. " shows how")
  end
  answer(req, 202, { id = id })
end

-- POST /api/runs/ID/answer {ask_id, text}
function Api:answer(req, id)
  local info = self:existing(req, id)
  if not info then return end
  local b = body_of(req, { ask_id = "string", text = "string" })
  if not b then return end
  if not b.ask_id or not b.text then return fail(req, 400, "fields 'ask_id' and 'text' are needed") end
  if info.held then return fail(req, 409, "run " .. id .. " is running; answer when it waits") end
  local waiting = false
  for _, a in ipairs(ask.pending(info.rec)) do waiting = waiting or a.ask.id == b.ask_id end
  if not waiting then
    return fail(req, 409, "run " .. id .. " has no pending ask " .. b.ask_id, "GET /api/runs/" .. id .. " shows its asks")
  end
  local log, err = self:detach(id, { "answer", id, b.ask_id, b.text })
  if not log then return fail(req, 500, "cannot answer: " .. tostring(err)) end
  answer(req, 202, { id = id, ask_id = b.ask_id })
end

-- Each path: its pattern (capturing a run id) and a handler per method.
M.ROUTES = {
  { webpage.INDEX, GET = webpage.index },
  { webpage.ASSET, GET = webpage.asset },
  { "^/api/runs$", GET = Api.runs, POST = Api.launch },
  { "^/api/runs/([^/]+)$", GET = Api.run },
  { "^/api/runs/([^/]+)/events$", GET = Api.events },
  { "^/api/runs/([^/]+)/diagram$", GET = Api.diagram },
  { "^/api/runs/([^/]+)/stop$", POST = Api.stop },
  { "^/api/runs/([^/]+)/resume$", POST = Api.resume },
  { "^/api/runs/([^/]+)/answer$", POST = Api.answer },
  { "^/api/workflows$", GET = Api.workflows },
  { "^/api/workflow$", GET = Api.workflow },
}

function Api:handle(req)
  if self:refused(req) then return end
  local method, path = req:method(), req:path()
  if path == "/login" and method == "GET" then return self:login(req) end
  if not self:authorised(req) and not webpage.public(path) then
    fail(req, 401, "a token is needed", "send Authorization: Bearer TOKEN (the file .raymond/serve/token), "
      .. "or open the login link raymond serve printed")
    return
  end
  for _, r in ipairs(M.ROUTES) do
    local id = path:match(r[1])
    if id then
      if not r[method] then return fail(req, 405, method .. " is not allowed on " .. path) end
      if id == path then id = nil end
      return r[method](self, req, id)
    end
  end
  fail(req, 404, "no such path: " .. path, "the API is in docs/api.md")
end

return M
