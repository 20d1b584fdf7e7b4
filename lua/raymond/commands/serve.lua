-- raymond.commands.serve: `raymond serve [--listen ADDR:PORT]`: the HTTP
-- API over the runs under .raymond/ (raymond.serve, docs/serve.md).
--
-- One process on the event loop; it holds no run state, so it may be
-- stopped and started again at any time, and runs started from the
-- command line show up as well.

local raymond = require("raymond")
local console = require("raymond.console")
local serve = require("raymond.serve")
local workspace = require("raymond.workspace")

local M = {}

M.usage = { "raymond serve [--listen ADDR:PORT] [--root DIR]..." }

M.DEFAULT_LISTEN = "127.0.0.1:8420"

M.options = {
  { name = "listen", key = "listen", arg = "ADDR:PORT", text = 100,
    help = "the address and port to listen on (default\n" .. M.DEFAULT_LISTEN .. "; port 0: any free port); an address\n"
      .. "other than loopback is reachable from the network,\nand is warned about" },
  { name = "root", key = "roots", arg = "DIR", many = 64,
    too_many = { "folders", "give a folder that holds them all" },
    help = "launch only workflows under DIR (may repeat; default:\nthe current folder)" },
}

M.flags = { { "serve options", "listen", "root" } }

M.help = [[
Serves the runs under this project's .raymond/ over HTTP: GET /api/runs
lists them, GET /api/runs/ID gives one and /events follows it live
(Server-Sent Events), POST /api/runs launches a workflow under a --root,
and POST /api/runs/ID/stop, /resume and /answer act on one; GET
/api/workflows lists the workflows under the roots.  Runs started so are
ordinary raymond processes in sessions of their own: they go on when the
daemon stops.  Every API request needs the token in
.raymond/serve/token (made on first start, readable by you alone), as
Authorization: Bearer TOKEN, or the cookie the one-time login link sets;
the link is printed at start, and opens the web page at /, which shows
the runs, launches workflows and follows a run live.  Requests naming
another Host, or coming from another Origin, are refused.  The daemon
keeps no state of its own: stop it at any time.  docs/api.md has the
API with curl examples.

exit status: 0 stopped by SIGINT or SIGTERM, 1 it could not start]]

local LOOPBACK = { ["127.0.0.1"] = true, ["::1"] = true }

-- ADDR:PORT ([::1]:PORT for IPv6) as host and port, or nil and why.
function M.parse_listen(text)
  local host, port = text:match("^%[([%x:]+)%]:(%d+)$")
  if not host then host, port = text:match("^([%d%.]+):(%d+)$") end
  port = tonumber(port)
  if not host or not port or port > 65535 then
    return nil, string.format("--listen %s: give ADDR:PORT, such as 127.0.0.1:8420 or [::1]:8420", text)
  end
  return host, math.tointeger(port)
end

function M.main(opts)
  local host, port = M.parse_listen(opts.listen or M.DEFAULT_LISTEN)
  if not host then
    console.error(port, nil, "see: raymond help serve")
    return 1
  end
  local ws = workspace.new(opts.cwd)
  local token, terr = serve.token(ws)
  if not token then
    console.error("cannot make the token file under " .. ws.root .. "/serve: " .. tostring(terr))
    return 1
  end
  local api
  local srv, err = raymond.http_listen({ host = host, port = port, handler = function(req)
    -- A fault in one request's handling is that request's 500 (the
    -- server answers a request left unanswered), never the daemon's end.
    local what = req:method() .. " " .. req:path()
    local ok, herr = xpcall(api.handle, debug.traceback, api, req)
    if not ok then console.error("internal error answering " .. what .. ": " .. herr) end
  end })
  if not srv then
    console.error("cannot listen: " .. err, nil, "choose another --listen ADDR:PORT (port 0: any free port)")
    return 1
  end
  local roots = {}
  for i, r in ipairs(opts.roots or { "." }) do
    local real = raymond.realpath(r:sub(1, 1) == "/" and r or (opts.cwd .. "/" .. r))
    if raymond.stat(real or "") ~= "dir" then
      srv:close()
      console.error("--root " .. r .. ": not a folder")
      return 1
    end
    roots[i] = real
  end
  api = serve.new({ ws = ws, cwd = opts.cwd, host = host, port = srv:port(), token = token, roots = roots })
  if not LOOPBACK[host] then
    console.warn("listening on %s, which other machines can reach: every request still needs the token", host)
  end
  raymond.stdout(string.format("raymond serve: listening on %s/\nlog in once with: %s\n", api.base, api:login_link()))
  raymond.quiet_signals()
  raymond.go(function() api:warm() end)
  while raymond.sleep(3600) do end
  srv:close()
  return 0
end

return M
