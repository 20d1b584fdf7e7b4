-- raymond.xworkflow: agents in other workflows than the run's.
--
-- <call-workflow>, <function-workflow>, <fork-workflow> and
-- <reset-workflow> (raymond.tags) take an agent into another workflow: a
-- folder, an archive or a state file, named by a path relative to the
-- workflow the agent is in.  The agent record then says where it is:
--
--   agent.workflow   the absolute path of its workflow (a folder or an
--                    archive); absent while it is in the run's own
--   agent.sha256     an archive's SHA-256, so --resume refuses a changed one
--   agent.depth      how many cross-workflow calls deep it is (absent: 0)
--
-- and every stack frame keeps the same three fields, so a <result>
-- brings the agent back to its caller's workflow.
--
-- Here: where a path leads (locate, for transition.decide), the checks a
-- tag makes before it changes anything (prepare, for transition.apply),
-- and, for the run, the scope and the hook set of the workflow an agent
-- is in, each opened once per process (scope, hooks).

local raymond = require("raymond")
local resolve = require("raymond.resolve")
local text = require("raymond.text")

local M = {}

-- The deepest an agent may be nested in cross-workflow calls.
M.MAX_DEPTH = 4

-- Scopes a decision opened, by path, so the run does not open (and hash)
-- an archive again when the agent gets there.
local opened = setmetatable({}, { __mode = "v" })

-- The folder relative paths start from in `scope`: the folder itself, or
-- for an archive (or any scope that is one file) its path without the
-- extension, as if it were a folder beside the file.
function M.base(scope)
  if scope.kind == "dir" then return scope.path end
  return (scope.path:gsub("%.[^./]*$", ""))
end

-- `path` (absolute) with "." and ".." taken away as written, as the
-- original cleans it: an archive's virtual folder does not exist, so
-- "../x" from inside one cannot be left to the file system.
local function clean(path)
  local parts = {}
  for part in path:gmatch("[^/]+") do
    if part == ".." then
      parts[#parts] = nil
    elseif part ~= "." then
      parts[#parts + 1] = part
    end
  end
  return "/" .. table.concat(parts, "/")
end

-- Where `spec`, the body of a -workflow tag, leads from `scope`: a table
-- { workflow = absolute path of the scope, entry = its first state,
-- sha256 =, spec = the text as written }, or nil and a message.
function M.locate(scope, spec)
  spec = text.trim(spec or "")
  if spec == "" then return nil, "empty workflow path" end
  if spec:find("%c") then return nil, "the workflow path contains a control character" end
  local path = clean(spec:sub(1, 1) == "/" and spec or (M.base(scope) .. "/" .. spec))
  local s, entry = resolve.workflow(path)
  if not s then return nil, entry end
  opened[s.path] = s
  -- resolve.workflow made the folder's path real, symlinks followed:
  -- that is where the agent would go.
  return { workflow = s.path, entry = entry, sha256 = s.sha256, spec = spec, real = s.path }
end

local roots_of = setmetatable({}, { __mode = "k" })

-- The real folders a workflow path may lead into: the cd roots (the
-- directory the run was started in, then every --allow-cd) and the
-- folder holding the run's own workflow.  Worked out once per run record
-- and list of cd roots, since every cross-workflow transition asks.
function M.roots(rec, cd_roots)
  local c = roots_of[rec]
  if c and c.cd == cd_roots then return c.roots end
  local roots = {}
  for i, r in ipairs(cd_roots or {}) do roots[i] = r end
  local holder = (rec.workflow or ""):match("^(.*)/[^/]+$")
  local real = holder and raymond.realpath(holder ~= "" and holder or "/")
  if real then roots[#roots + 1] = real end
  roots_of[rec] = { cd = cd_roots, roots = roots }
  return roots
end

-- nil when `real` lies inside `roots`, else the message.
function M.outside(tag, spec, real, roots)
  local transition = require("raymond.transition")
  if transition.inside(roots, real) then return nil end
  return string.format("<%s>%s</%s> leads to %s, outside the folders a workflow may be taken from "
    .. "(the directory the run was started in, the folder holding the run's workflow, and every "
    .. "--allow-cd); give --allow-cd for its folder to allow it", tag, spec, tag, real)
end

-- The checks of a -workflow transition `tr` of `agent`, made before
-- anything changes: the target lies inside the allowed folders, the
-- nesting limit holds, and input= is rendered with the agent's
-- variables (as the original renders these tags' input).  Returns true
-- or nil and a message.
function M.prepare(rec, agent, tr, roots)
  local template = require("raymond.template")
  local allowed, vars
  for _, unit in ipairs(tr.forks or { tr }) do
    if unit.workflow then
      allowed = allowed or M.roots(rec, roots)
      vars = vars or template.vars(rec, agent)
      local err = M.outside(unit.xtag or tr.tag, unit.spec, unit.real or unit.workflow, allowed)
      if err then return nil, err end
      if unit.input and not unit.rendered then
        unit.input, unit.rendered = template.render(unit.input, vars), true
      end
    end
  end
  if (tr.tag == "call-workflow" or tr.tag == "function-workflow") and (agent.depth or 0) >= M.MAX_DEPTH then
    return nil, string.format("<%s>%s</%s>: agent %s is already %d cross-workflow calls deep, the most "
      .. "raymond nests (a workflow that calls itself, directly or through others, never ends)",
      tr.tag, tr.spec, tr.tag, agent.id, agent.depth)
  end
  return true
end

-- Move `agent` into the workflow of `unit` (a decided transition or one
-- of its forks), at its entry.
function M.enter(agent, unit)
  agent.workflow, agent.sha256, agent.state = unit.workflow, unit.sha256, unit.target
end

-- The abbreviation a <fork-workflow> worker's id takes from the path as
-- written: the last part without its extension, lowercased, at most six
-- bytes ("../review/" -> "review", "sub.zip" -> "sub").
function M.abbrev(spec)
  local last = spec:gsub("[/\\]+$", ""):match("([^/\\]*)$")
  last = last:gsub("%.[^.]*$", ""):lower():gsub("[^%w_-]", "")
  if last == "" then last = "wf" end
  return last:sub(1, 6)
end

-- ------------------------------------------------------------------ the run's side

-- The scope of workflow `path` (an archive checked against `sha256`),
-- opened once per run; or nil and a message.
local function open(run, path, sha256)
  run.scopes = run.scopes or { [run.scope.path] = run.scope }
  local s = run.scopes[path]
  if s then
    if sha256 and s.sha256 and s.sha256 ~= sha256 then
      return nil, string.format("the archive %s changed since the agent went there (SHA-256 %s, was %s)",
        path, s.sha256, sha256)
    end
    return s
  end
  s = opened[path]
  if not (s and (not sha256 or s.sha256 == sha256)) then
    local err
    s, err = resolve.reopen(path, sha256)
    if not s then return nil, err end
  end
  run.scopes[path] = s
  return s
end

-- The scope `agent` is in; or nil and a message.
function M.scope(run, agent)
  if not agent or not agent.workflow then return run.scope end
  return open(run, agent.workflow, agent.sha256)
end

-- The hook set that applies to `agent`: the run's, or for an agent in
-- another workflow the same defaults, configuration and --hooks files
-- with that workflow's own hooks instead of the run's workflow's.
-- Loaded once per workflow per process; nil and a message when a file
-- does not load.
function M.hooks(run, agent)
  if not agent or not agent.workflow or agent.workflow == run.scope.path then return run.hooks end
  run.hook_sets = run.hook_sets or {}
  local set = run.hook_sets[agent.workflow]
  if set then return set end
  local hooks = require("raymond.hooks")
  local s, err = M.scope(run, agent)
  if not s then return nil, err end
  local files, ferr = hooks.discover(s, run.rec.launch)
  if not files then return nil, ferr end
  set, err = hooks.load(files, require("raymond.hookapi").new(run))
  if not set then return nil, err end
  run.hook_sets[agent.workflow] = set
  return set
end

-- Close every scope the run opened besides its own.
function M.close(run)
  for path, s in pairs(run.scopes or {}) do
    if s ~= run.scope then s:close() end
    run.scopes[path] = nil
  end
end

-- On --resume: every workflow an agent or a frame of `rec` names is still
-- there, unchanged, and inside the allowed folders.  Returns nil, or an
-- error table for the engine.
function M.check_record(run, roots, path)
  local allowed = M.roots(run.rec, roots)
  local bad = "state file " .. path .. " is not a valid raymond state: "
  for i, a in ipairs(run.rec.agents) do
    local places = { { a, string.format("agents[%d]", i) } }
    for j, f in ipairs(a.stack) do places[#places + 1] = { f, string.format("agents[%d].stack[%d]", i, j) } end
    for _, p in ipairs(places) do
      local where = p[1]
      if where.workflow then
        local s, err = open(run, where.workflow, where.sha256)
        if not s then
          return { msg = string.format("agent %s: %s", a.id, err),
                   hint = "put the workflow back as it was, or start a new run" }
        end
        local real = raymond.realpath(where.workflow) or where.workflow
        if not require("raymond.transition").inside(allowed, real) then
          return { msg = string.format("%s%s.workflow %s is outside the folders a workflow may be taken from",
                     bad, p[2], real),
                   hint = "the file was left as it is; restore it from a backup or start a new run" }
        end
      end
    end
  end
  return nil
end

return M
