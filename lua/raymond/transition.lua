-- raymond.transition: the protocol's semantics.
--
-- decide(tags, dir) turns the tags a state emitted into one transition
-- table, or fails with a message.  apply(run, agent, tr) changes the run
-- record accordingly.  Neither does I/O beyond checking that files exist,
-- so both are easy to test and the engine stays a thin loop around them.
--
-- A transition table:
--   { tag = "goto"|"reset"|"call"|"function"|"result"|"fork",
--     target = "B.sh",        -- goto, reset, call, function
--     ret = "R.sh",           -- call, function: where <result> returns
--     input = "text" | nil,   -- payload for the next state
--     cd = "dir" | nil,       -- reset: the agent's new working directory
--     payload = "text",       -- result
--     forks = { {target=, input=, cd=, vars={}} ... },  -- fork
--     next = "N.sh" | nil }   -- fork: where the parent continues

local resolve = require("raymond.resolve")
local raymond = require("raymond")

local M = {}

local transitions = {
  ["goto"] = { input = true },
  reset = { cd = true, input = true },
  call = { ["return"] = true, input = true },
  ["function"] = { ["return"] = true, input = true },
  result = {},
  fork = true, -- any attribute: next, cd, input, and worker variables
}

local function trim(s)
  return (s:gsub("^%s+", ""):gsub("%s+$", ""))
end

local function tag_list(tags)
  local names = {}
  for i, t in ipairs(tags) do names[i] = "<" .. t.name .. ">" end
  return table.concat(names, ", ")
end

local function check_attrs(t)
  local allowed = transitions[t.name]
  if allowed == true then return true end
  for k in pairs(t.attrs) do
    if not allowed[k] then
      local names = {}
      for a in pairs(allowed) do names[#names + 1] = a end
      table.sort(names)
      return nil, string.format("unknown attribute '%s' on <%s>; allowed: %s", k, t.name,
        #names > 0 and table.concat(names, ", ") or "none")
    end
  end
  return true
end

local function resolve_attr(dir, t, key)
  local v = t.attrs[key]
  if v == nil then return nil end
  local name, err = resolve.target(dir, trim(v))
  if not name then
    return nil, string.format("<%s %s=\"%s\">: %s", t.name, key, v, err)
  end
  return name
end

local function resolve_body(dir, t)
  local name, err = resolve.target(dir, trim(t.body))
  if not name then
    return nil, string.format("<%s>%s</%s>: %s", t.name, t.body, t.name, err)
  end
  return name
end

local function fork_entry(dir, t)
  local target, err = resolve_body(dir, t)
  if not target then return nil, err end
  local vars = {}
  for k, v in pairs(t.attrs) do
    if k ~= "next" and k ~= "cd" and k ~= "input" then vars[k] = v end
  end
  return { target = target, input = t.attrs.input, cd = t.attrs.cd, vars = vars }
end

-- Several <fork> tags and at most one <goto>: the parent continues at the
-- goto's target and/or the forks' next, which must all agree.
local function decide_forks(tags, dir)
  local tr = { tag = "fork", forks = {} }
  local cont, cont_from
  local function agree(name, from)
    if cont and cont ~= name then
      return nil, string.format("the parent's next state is ambiguous: %s says %s, %s says %s",
        cont_from, cont, from, name)
    end
    cont, cont_from = name, from
    return true
  end
  for _, t in ipairs(tags) do
    if t.name == "goto" then
      local ok, err = check_attrs(t)
      if not ok then return nil, err end
      local name, rerr = resolve_body(dir, t)
      if not name then return nil, rerr end
      ok, err = agree(name, "<goto>")
      if not ok then return nil, err end
      tr.input = t.attrs.input
    else
      local f, err = fork_entry(dir, t)
      if not f then return nil, err end
      tr.forks[#tr.forks + 1] = f
      if t.attrs.next then
        local name, nerr = resolve_attr(dir, t, "next")
        if not name then return nil, nerr end
        local ok, aerr = agree(name, "<fork next=>")
        if not ok then return nil, aerr end
      end
    end
  end
  if not cont then
    return nil, "<fork> needs next=\"STATE\" (where the parent continues) or a <goto> beside it"
  end
  tr.next = cont
  return tr
end

function M.decide(tags, dir)
  if #tags == 0 then
    return nil, "no transition tag in the output; a state must end with exactly one of "
      .. "<goto>, <reset>, <call>, <function>, <fork> or <result>"
  end
  for _, t in ipairs(tags) do
    if not transitions[t.name] then
      return nil, string.format(
        "unknown tag <%s>; raymond runs <goto>, <reset>, <call>, <function>, <fork> and <result>", t.name)
    end
  end
  if #tags > 1 then
    local gotos, others = 0, 0
    for _, t in ipairs(tags) do
      if t.name == "goto" then gotos = gotos + 1
      elseif t.name ~= "fork" then others = others + 1 end
    end
    if others > 0 or gotos > 1 or gotos == #tags then
      return nil, string.format("%d transition tags (%s); a state must emit exactly one, "
        .. "except several <fork> with at most one <goto>", #tags, tag_list(tags))
    end
    return decide_forks(tags, dir)
  end
  local t = tags[1]
  local ok, err = check_attrs(t)
  if not ok then return nil, err end
  if t.name == "result" then
    return { tag = "result", payload = t.body }
  end
  if t.name == "fork" then
    return decide_forks(tags, dir)
  end
  local target, terr = resolve_body(dir, t)
  if not target then return nil, terr end
  local tr = { tag = t.name, target = target, input = t.attrs.input, cd = t.attrs.cd }
  if t.name == "call" or t.name == "function" then
    if not t.attrs["return"] then
      return nil, string.format("<%s> needs return=\"STATE\" (where its <result> goes)", t.name)
    end
    local r, rerr = resolve_attr(dir, t, "return")
    if not r then return nil, rerr end
    tr.ret = r
  end
  return tr
end

-- An absolute, existing directory for cd= relative to the agent's cwd.
local function resolve_cd(base, cd)
  local path = cd:sub(1, 1) == "/" and cd or (base .. "/" .. cd)
  if raymond.stat(path) ~= "dir" then
    return nil, string.format("cd=\"%s\": '%s' is not a directory", cd, path)
  end
  return raymond.realpath(path)
end

-- The worker id for a fork from `parent` to `target`: parent_<stem6><n>.
local function worker_id(run, parent, target)
  local stem = target:gsub("%.%w+$", ""):lower():sub(1, 6)
  local n = math.tointeger(run.fork_counters[parent.id] or 0) + 1
  run.fork_counters[parent.id] = n
  return string.format("%s_%s%d", parent.id, stem, n)
end

-- Apply `tr` to `agent` in `run`.  Returns a summary for logs:
-- { workers = {ids...}, ended = bool } or nil and a message.
function M.apply(run, agent, tr)
  -- Every check that can fail comes before the first change, so a failed
  -- transition leaves the agent as it was and --resume runs it again.
  local cwds = {}
  if tr.tag == "reset" and tr.cd then
    local cwd, err = resolve_cd(agent.cwd, tr.cd)
    if not cwd then return nil, err end
    cwds[1] = cwd
  elseif tr.tag == "fork" then
    for i, f in ipairs(tr.forks) do
      local cwd, err = agent.cwd, nil
      if f.cd then cwd, err = resolve_cd(agent.cwd, f.cd) end
      if not cwd then return nil, err end
      cwds[i] = cwd
    end
  elseif not (tr.tag == "goto" or tr.tag == "reset" or tr.tag == "call"
              or tr.tag == "function" or tr.tag == "result") then
    return nil, "cannot apply unknown transition '" .. tostring(tr.tag) .. "'"
  end
  local out = {}
  agent.input = nil
  agent.branch = nil
  if tr.tag == "goto" then
    agent.state = tr.target
    agent.input = tr.input
  elseif tr.tag == "reset" then
    agent.cwd = cwds[1] or agent.cwd
    agent.state, agent.session, agent.input = tr.target, nil, tr.input
  elseif tr.tag == "call" or tr.tag == "function" then
    table.insert(agent.stack, { state = tr.ret, session = agent.session, cwd = agent.cwd })
    agent.state, agent.input = tr.target, tr.input
    if tr.tag == "call" then
      agent.branch = true -- the callee's first turn branches the caller's session
    else
      agent.session = nil
    end
  elseif tr.tag == "result" then
    local frame = table.remove(agent.stack)
    if frame then
      agent.state, agent.session, agent.cwd = frame.state, frame.session, frame.cwd or agent.cwd
      agent.input = tr.payload
    else
      out.ended = true
      out.payload = tr.payload
    end
  elseif tr.tag == "fork" then
    local workers = {}
    for i, f in ipairs(tr.forks) do
      workers[i] = {
        id = worker_id(run, agent, f.target), state = f.target, stack = {},
        cwd = cwds[i], input = f.input, vars = f.vars, data = {},
      }
    end
    agent.state, agent.input = tr.next, tr.input
    out.workers = workers
  end
  return out
end

-- A one-line description, for the console and the transitions log.
function M.describe(tr)
  if tr.tag == "result" then return "result" end
  if tr.tag == "fork" then
    local t = {}
    for i, f in ipairs(tr.forks) do t[i] = f.target end
    return string.format("fork %s; continue at %s", table.concat(t, ", "), tr.next)
  end
  if tr.ret then return string.format("%s %s (return to %s)", tr.tag, tr.target, tr.ret) end
  return tr.tag .. " " .. tr.target
end

return M
