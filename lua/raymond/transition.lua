-- raymond.transition: from the tags a state printed to a change of the run.
--
-- decide(tags, scope) turns the tags a state emitted into one decided
-- transition (see raymond.tags for its fields), or fails with a message.
-- apply(run, agent, tr) changes the run record accordingly, through the
-- tag's handler.  What each tag takes and does is written in
-- raymond.tags; this module holds only the rules every tag shares.
-- Neither function does I/O beyond checking that files exist.

local raymond = require("raymond")
local ask = require("raymond.ask")
local isolation = require("raymond.isolation")
local join = require("raymond.join")
local resolve = require("raymond.resolve")
local scope_of = require("raymond.scope")
local tags = require("raymond.tags")
local text = require("raymond.text")
local xworkflow = require("raymond.xworkflow")

local M = {}

local trim = text.trim

-- The field of a decided transition that holds attribute `attr`.
local FIELD = { ["return"] = "ret" }

local function tag_list(list)
  local names = {}
  for i, t in ipairs(list) do names[i] = "<" .. t.name .. ">" end
  return table.concat(names, ", ")
end

-- The message for attribute `k`, which tag entry `e` does not take.
function M.unknown_attr(e, k)
  local names = {}
  for a in pairs(e.attrs) do names[#names + 1] = a end
  table.sort(names)
  return string.format("unknown attribute '%s' on <%s>; allowed: %s", k, e.name,
    #names > 0 and table.concat(names, ", ") or "none")
end

local function check_attrs(e, t)
  for k in pairs(t.attrs) do
    if e.forbid and e.forbid[k] then
      return nil, string.format("<%s> does not take %s=: %s", e.name, k, e.forbid[k])
    end
    if not e.free and not e.attrs[k] then return nil, M.unknown_attr(e, k) end
  end
  return true
end

local function resolve_attr(scope, t, key)
  local v = t.attrs[key]
  if v == nil then return nil end
  local name, err = resolve.target(scope, trim(v))
  if not name then
    return nil, string.format("<%s %s=\"%s\">: %s", t.name, key, v, err)
  end
  return name
end

local function resolve_body(scope, t)
  if tags.by_name[t.name].body == "workflow" then
    local where, err = xworkflow.locate(scope_of.of(scope), t.body)
    if not where then
      return nil, string.format("<%s>%s</%s>: %s", t.name, t.body, t.name, err)
    end
    return where.entry, nil, where
  end
  local name, err = resolve.target(scope, trim(t.body))
  if not name then
    return nil, string.format("<%s>%s</%s>: %s", t.name, t.body, t.name, err)
  end
  return name
end

-- Every declared attribute of tag `t` into `tr`, state names resolved
-- and durations checked; `tr`, or nil and a message.
local function attributes(e, t, scope, tr)
  for attr, why in pairs(e.requires or {}) do
    if not t.attrs[attr] then
      return nil, string.format("<%s> needs %s=\"STATE\" (%s)", t.name, attr, why)
    end
  end
  for attr, kind in pairs(e.attrs) do
    local v, err = t.attrs[attr], nil
    if kind == "target" and v ~= nil then
      v, err = resolve_attr(scope, t, attr)
      if not v then return nil, err end
    elseif kind == "duration" and v ~= nil then
      local _, why = ask.duration(v)
      if why then return nil, string.format("<%s %s=\"%s\">: %s", t.name, attr, v, why) end
    end
    tr[FIELD[attr] or attr] = v
  end
  if e.check then
    local why = e.check(tr)
    if why then return nil, string.format("<%s>: %s", t.name, why) end
  end
  return tr
end

-- One tag with a state (or another workflow) as its body: the target
-- and every declared attribute.
local function decide_one(e, t, scope)
  local target, err, where = resolve_body(scope, t)
  if not target then return nil, err end
  local tr = { tag = t.name, target = target }
  if where then
    tr.workflow, tr.sha256, tr.spec, tr.real = where.workflow, where.sha256, where.spec, where.real
  end
  return attributes(e, t, scope, tr)
end

-- nil when `name` is a launcher a model may pick: one built in or
-- configured for the run, nothing else (docs/security.md).
function M.launcher_error(name)
  local launchers = require("raymond.launchers")
  if launchers.known(name) then return nil end
  return launchers.unknown_text()
end

-- The worker a <fork> asks for; its undeclared attributes are the
-- worker's variables, whose names must pass tags.var_error.
local function fork_entry(e, scope, t)
  local target, err, where = resolve_body(scope, t)
  if not target then return nil, err end
  local vars = {}
  for k, v in pairs(t.attrs) do
    if not e.attrs[k] then
      local bad = tags.var_error(k)
      if bad then return nil, string.format("<%s>%s</%s>: attribute %s", t.name, t.body, t.name, bad) end
      vars[k] = v
    end
  end
  if t.attrs.launcher then
    local why = M.launcher_error(t.attrs.launcher)
    if why then return nil, string.format("<%s launcher=\"%s\">: %s", t.name, t.attrs.launcher, why) end
  end
  local f = { target = target, input = t.attrs.input, cd = t.attrs.cd, task = t.attrs.task,
              worktree = t.attrs.worktree, launcher = t.attrs.launcher, vars = vars }
  if where then
    f.workflow, f.sha256, f.spec, f.real, f.xtag = where.workflow, where.sha256, where.spec, where.real, t.name
  end
  return f
end

-- Several <fork> tags and at most one <goto>: the parent continues at the
-- goto's target and/or the forks' next, which must all agree.
local function decide_forks(list, scope)
  local tr = { tag = "fork-workflow", forks = {} }
  local cont, cont_from
  local function agree(name, from)
    if cont and cont ~= name then
      return nil, string.format("the parent's next state is ambiguous: %s says %s, %s says %s",
        cont_from, cont, from, name)
    end
    cont, cont_from = name, from
    return true
  end
  for _, t in ipairs(list) do
    if t.name == "goto" then
      local ok, err = check_attrs(tags.by_name["goto"], t)
      if not ok then return nil, err end
      local name, rerr = resolve_body(scope, t)
      if not name then return nil, rerr end
      ok, err = agree(name, "<goto>")
      if not ok then return nil, err end
      tr.input = t.attrs.input
    else
      local f, err = fork_entry(tags.by_name[t.name], scope, t)
      if not f then return nil, err end
      if t.name == "fork" then tr.tag = "fork" end
      tr.forks[#tr.forks + 1] = f
      if t.attrs.next then
        local name, nerr = resolve_attr(scope, t, "next")
        if not name then return nil, nerr end
        local ok, aerr = agree(name, "<" .. t.name .. " next=>")
        if not ok then return nil, aerr end
      end
    end
  end
  if not cont then
    return nil, string.format("<%s> needs next=\"STATE\" (where the parent continues) or a <goto> beside it",
      list[1].name == "goto" and list[2].name or list[1].name)
  end
  tr.next = cont
  local forks = {}
  for _, t in ipairs(list) do
    if t.name == "fork" then forks[#forks + 1] = t end
  end
  local j, jerr = join.decide(forks, function(t, key) return resolve_attr(scope, t, key) end)
  if j == false then return nil, jerr end
  if j then tr.join, tr.wait = j.join, j.wait end
  return tr
end

-- The tags that start workers, which may come several at a time.
local FORKS = { fork = true, ["fork-workflow"] = true }

-- Several tags are allowed together only as forks with at most one goto.
local function check_count(list)
  local gotos, others = 0, 0
  for _, t in ipairs(list) do
    if t.name == "goto" then gotos = gotos + 1
    elseif not FORKS[t.name] then others = others + 1 end
  end
  if others > 0 or gotos > 1 or gotos == #list then
    return nil, string.format("%d transition tags (%s); a state must emit exactly one, "
      .. "except several <fork> or <fork-workflow> with at most one <goto>", #list, tag_list(list))
  end
  return true
end

function M.decide(list, scope)
  if #list == 0 then
    return nil, "no transition tag in the output; a state must end with exactly one of " .. tags.phrase("or")
  end
  for _, t in ipairs(list) do
    if not tags.by_name[t.name] then
      return nil, string.format("unknown tag <%s>; raymond runs %s", t.name, tags.phrase("and"))
    end
    local bad = isolation.attr_error(t)
    if bad then return nil, bad end
  end
  if #list > 1 then
    local ok, err = check_count(list)
    if not ok then return nil, err end
    return decide_forks(list, scope)
  end
  local t = list[1]
  local e = tags.by_name[t.name]
  local ok, err = check_attrs(e, t)
  if not ok then return nil, err end
  if FORKS[t.name] then return decide_forks(list, scope) end
  if e.body == "payload" then return attributes(e, t, scope, { tag = t.name, payload = t.body }) end
  return decide_one(e, t, scope)
end

-- Whether the real path `real` is one of `roots` or below one.
function M.inside(roots, real)
  for _, root in ipairs(roots) do
    if real == root or root == "/" or real:sub(1, #root + 1) == root .. "/" then return true end
  end
  return false
end

-- The advice for a directory outside `roots`, whose first entry is the
-- directory the run was started in.
function M.outside(roots, real)
  return string.format("outside the directory the run was started in (%s); to let states work there, "
    .. "give --allow-cd %s to raymond run or raymond resume", roots[1], real)
end

-- An absolute, existing directory for cd= relative to the agent's cwd,
-- inside one of `roots` once symlinks are followed: a model may move an
-- agent around the project, never out of it.
local function resolve_cd(base, cd, roots)
  local path = cd:sub(1, 1) == "/" and cd or (base .. "/" .. cd)
  if raymond.stat(path) ~= "dir" then
    return nil, string.format("cd=\"%s\": '%s' is not a directory", cd, path)
  end
  local real, err = raymond.realpath(path)
  if not real then return nil, string.format("cd=\"%s\": %s", cd, err) end
  if not M.inside(roots, real) then
    return nil, string.format("cd=\"%s\" resolves to %s, %s", cd, real, M.outside(roots, real))
  end
  return real
end

-- The directories the units of `tr` (the transition, or each fork) give
-- their agents, cd= resolved (see resolve_cd): a list, or nil and a
-- message.
function M.cwds(agent, tr, roots)
  local cwds = {}
  for i, unit in ipairs(tr.forks or { tr }) do
    local cwd, err = agent.cwd, nil
    if unit.cd then cwd, err = resolve_cd(agent.cwd, unit.cd, roots) end
    if not cwd then return nil, err end
    cwds[i] = cwd
  end
  return cwds
end

-- Apply `tr` to `agent` in `run` (the run record).  `roots` are the real
-- directories a cd= may lead into (see resolve_cd).  Returns a summary
-- for logs: { workers = {agents...} } or { ended = true, payload = } or
-- {}; or nil and a message.
function M.apply(run, agent, tr, roots)
  local e = tags.by_name[tr.tag]
  if not e then return nil, "cannot apply unknown transition '" .. tostring(tr.tag) .. "'" end
  -- Every check that can fail comes before the first change, so a failed
  -- transition leaves the agent as it was and --resume runs it again.
  if e.prepare then
    local ok, err = e.prepare(run, agent, tr, roots)
    if not ok then return nil, err end
  end
  local cwds, err = M.cwds(agent, tr, roots)
  if not cwds then return nil, err end
  agent.input = nil
  agent.results = nil
  agent.branch = nil
  agent.ask_id = nil
  return e.apply(run, agent, tr, cwds) or {}
end

-- A one-line description, for the console and the transitions log.
function M.describe(tr)
  if tr.tag == "result" then return "result" end
  if tr.tag == "ask" then return "ask; the answer goes to " .. tr.next end
  if tr.forks then
    local t = {}
    for i, f in ipairs(tr.forks) do t[i] = f.spec and (f.spec .. " (" .. f.target .. ")") or f.target end
    return string.format("fork %s; continue at %s%s", table.concat(t, ", "), tr.next,
      tr.join and string.format("; join at %s (wait %s)", tr.join, tr.wait) or "")
  end
  local target = tr.spec and (tr.spec .. " (" .. tr.target .. ")") or tr.target
  if tr.ret then return string.format("%s %s (return to %s)", tr.tag, target, tr.ret) end
  return tr.tag .. " " .. target
end

return M
