-- raymond.tags: the transition vocabulary, one entry per tag.
--
-- Everything raymond knows about a tag is written here once: its name,
-- what its body means, which attributes it takes, what it does to the
-- agent's session and call stack, and the handler that applies it.  The
-- tag checks (raymond.transition), the frontmatter's allowed_transitions
-- (raymond.policy), the CLI's help and docs/protocol.md read this table,
-- so adding a tag is one entry here plus its handler.
--
-- An entry:
--   name      the tag's name
--   usage     how it is written, for help text
--   summary   what happens next, in a few words
--   body      "target" (a state name), "payload" (free text) or
--             "workflow" (a path to another workflow, raymond.xworkflow)
--   attrs     attribute = kind: "target" (a state name, resolved like the
--             body), "dir" (a directory for the agent), "text",
--             "duration" (30s, 15m, 48h, 2d: raymond.ask.duration) or
--             "launcher" (a built-in or configured launcher's name)
--   free      other attributes are allowed and become the new agent's
--             variables (fork), if their names pass var_error
--   requires  attribute = why, for attributes that must be given
--   forbid    attribute = why, for attributes that must not be given
--   check(tr) optional: nil when the decided transition's attributes go
--             together, else why not
--   session   what the next state's conversation is: "same", "fresh",
--             "branch" (a copy of the caller's), "caller" (back to it)
--   stack     "push" (a frame the <result> returns to) or "pop"
--   prepare(run, agent, tr, roots)
--             checks that need the agent, made before any change;
--             returns true or nil and a message
--   apply(run, agent, tr, cwds)
--             changes the agent for the decided transition `tr`; cwds
--             holds the directories checked beforehand; returns a
--             summary { workers = {...} } or { ended = true, payload = }
--
-- A decided transition (what raymond.transition.decide returns and hooks
-- see in PreTransition) is a table:
--   { tag = NAME, target = "B.sh", ret = "R.sh", input = "text",
--     cd = "dir", payload = "text", timeout = "48h", timeout_next = "L.sh",
--     task = "new", worktree = "NAME",
--     forks = { {target=, input=, cd=, task=, worktree=, launcher=, vars={}} ... },
--     next = "N.sh" }
-- and, once raymond.isolation.plan has run, `wt` (the worktree's plan)
-- in each unit asking for a worktree.

local raymond = require("raymond")
local ask = require("raymond.ask")

local M = {}

-- Worker variables.  A fork's free attributes become environment
-- variables of every script its worker runs, and they come from model
-- output, so a name must not be one that changes how a program runs:
-- only lowercase identifiers are taken (PATH, BASH_ENV, LD_PRELOAD,
-- HOME and RAYMOND_* are upper-case), none that raymond's own
-- environment holds, and none of the lowercase names below, which
-- programs do read as settings (proxies in curl, wget, git, pip and
-- most HTTP libraries; npm's and yarn's configuration; zsh's arrays
-- tied to PATH and friends).
M.VAR_DENY = {
  http_proxy = true, https_proxy = true, ftp_proxy = true, no_proxy = true, all_proxy = true,
  socks_proxy = true, rsync_proxy = true, gopher_proxy = true, wais_proxy = true,
  path = true, fpath = true, cdpath = true, manpath = true, module_path = true, mailpath = true,
}
M.VAR_DENY_PREFIXES = { "npm_config_", "pnpm_config_", "yarn_" }

local own_environ

-- nil when `name` may be a worker variable, else why not.  `environ` is
-- raymond's own environment (by default the process's).
function M.var_error(name, environ)
  if type(name) ~= "string" or not name:find("^[a-z_][a-z0-9_]*$") then
    return string.format("'%s' cannot be a worker variable: a name must be lowercase letters, digits "
      .. "and _, not starting with a digit (upper-case names such as PATH or BASH_ENV are settings "
      .. "programs read from their environment)", tostring(name))
  end
  local like = require("raymond.join").misspelt(name)
  if like then
    return string.format("'%s' cannot be a worker variable: it looks like a misspelt %s= of <fork> "
      .. "(see docs/protocol.md, \"Joins\")", name, like)
  end
  own_environ = own_environ or raymond.environ()
  if (environ or own_environ)[name] ~= nil then
    return string.format("'%s' cannot be a worker variable: raymond's own environment has %s, "
      .. "which it would replace", name, name)
  end
  local denied = M.VAR_DENY[name]
  for _, prefix in ipairs(M.VAR_DENY_PREFIXES) do
    denied = denied or name:sub(1, #prefix) == prefix
  end
  if denied then
    return string.format("'%s' cannot be a worker variable: programs read %s from their environment "
      .. "as a setting (see docs/protocol.md, \"Worker variables\")", name, name)
  end
  return nil
end

-- The worker id for a fork from `parent` to `target`: parent_<stem6><n>.
-- A join's summary agent is named the same way (raymond.join).
-- A <fork-workflow> worker's stem comes from the workflow path and
-- counts under the key parent_<stem>; an id another agent holds already
-- is skipped, since agent ids are unique in a run.  `taken` holds the
-- ids in use (live_ids), and gets the new one: one reply's <fork> and
-- <fork-workflow> tags may count under different keys to the same id.
local function live_ids(run)
  local taken = {}
  for _, a in ipairs(run.agents) do taken[a.id] = true end
  return taken
end

local function worker_id(run, parent, f, taken)
  local stem, key = f.target:gsub("%.%w+$", ""):lower():sub(1, 6), parent.id
  if f.workflow then
    stem = require("raymond.xworkflow").abbrev(f.spec)
    key = parent.id .. "_" .. stem
  end
  local n, id = math.tointeger(run.fork_counters[key] or 0), nil
  repeat
    n = n + 1
    id = string.format("%s_%s%d", parent.id, stem, n)
  until not taken[id]
  run.fork_counters[key] = n
  taken[id] = true
  return id
end
-- By a target's name, for a join's summary agent (raymond.join).
function M.worker_id(run, parent, target) return worker_id(run, parent, { target = target }, live_ids(run)) end

-- A frame keeps where the caller is, its workflow included, for the
-- <result> that returns to it.
local function push_frame(agent, tr)
  table.insert(agent.stack, { state = tr.ret, session = agent.session, cwd = agent.cwd,
                              workflow = agent.workflow, sha256 = agent.sha256, depth = agent.depth,
                              task_folder = agent.task_folder })
  agent.state, agent.input = tr.target, tr.input
end

-- task="new" on a reset: a fresh task folder (raymond.isolation), made
-- before the next state runs.
local function new_task(agent, tr)
  if tr.task == "new" then
    agent.task_count, agent.task_folder = (agent.task_count or 0) + 1, nil
  end
end

local function xwf_prepare(run, agent, tr, roots)
  return require("raymond.xworkflow").prepare(run, agent, tr, roots)
end

-- A cross-workflow call: the frame, then the callee's entry, one deeper.
local function call_workflow(agent, tr)
  push_frame(agent, tr)
  require("raymond.xworkflow").enter(agent, tr)
  agent.depth = (agent.depth or 0) + 1
end

-- Forks, plain and cross-workflow: a worker starts in the workflow its
-- tag names, or in its parent's, at the parent's depth.
local function fork_apply(run, agent, tr, cwds)
  local workers, taken = {}, live_ids(run)
  for i, f in ipairs(tr.forks) do
    local w = {
      id = worker_id(run, agent, f, taken), state = f.target, stack = {},
      cwd = cwds[i], input = f.input, vars = f.vars, data = {},
      workflow = agent.workflow, sha256 = agent.sha256, depth = agent.depth,
      task_folder = f.task == "inherit" and agent.task_folder or nil, worktree = f.wt,
      launcher = f.launcher or agent.launcher,
    }
    if f.workflow then require("raymond.xworkflow").enter(w, f) end
    workers[i] = w
  end
  agent.state, agent.input = tr.next, tr.input
  return { workers = workers }
end

M.list = {
  {
    name = "goto",
    usage = "<goto>NEXT</goto>",
    summary = "go on to NEXT (same session)",
    body = "target",
    attrs = { input = "text" },
    session = "same",
    apply = function(_, agent, tr)
      agent.state, agent.input = tr.target, tr.input
    end,
  },
  {
    name = "reset",
    usage = '<reset cd="DIR" input="X">NEXT</reset>',
    summary = "go on to NEXT with a fresh session",
    body = "target",
    attrs = { cd = "dir", input = "text", task = "text", worktree = "text" },
    session = "fresh",
    apply = function(_, agent, tr, cwds)
      agent.cwd = cwds[1] or agent.cwd
      agent.state, agent.session, agent.input = tr.target, nil, tr.input
      new_task(agent, tr)
      agent.worktree = tr.wt or agent.worktree
    end,
  },
  {
    name = "call",
    usage = '<call return="BACK">SUB</call>',
    summary = "run SUB; its <result> resumes BACK",
    body = "target",
    attrs = { ["return"] = "target", input = "text" },
    requires = { ["return"] = "where its <result> goes" },
    session = "branch",
    stack = "push",
    apply = function(_, agent, tr)
      push_frame(agent, tr)
      agent.branch = true -- the callee's first turn branches the caller's session
    end,
  },
  {
    name = "function",
    usage = '<function return="BACK">SUB</function>',
    summary = "the same, SUB starting fresh",
    body = "target",
    attrs = { ["return"] = "target", input = "text" },
    requires = { ["return"] = "where its <result> goes" },
    session = "fresh",
    stack = "push",
    apply = function(_, agent, tr)
      push_frame(agent, tr)
      agent.session = nil
    end,
  },
  {
    name = "fork",
    usage = '<fork next="NEXT" item="x">WORKER</fork>',
    summary = "start a parallel agent at WORKER",
    body = "target",
    -- join= and wait=: raymond.join gathers the workers' results;
    -- task= and worktree=: raymond.isolation; launcher=: where the
    -- worker's states run (raymond.launchers).
    attrs = { next = "target", cd = "dir", input = "text", join = "target", wait = "text",
              task = "text", worktree = "text", launcher = "launcher" },
    free = true,
    session = "fresh",
    prepare = xwf_prepare,
    apply = fork_apply,
  },
  {
    name = "result",
    usage = "<result>TEXT</result>",
    summary = "return TEXT to the caller, or end",
    body = "payload",
    attrs = {},
    session = "caller",
    stack = "pop",
    apply = function(_, agent, tr)
      local frame = table.remove(agent.stack)
      if not frame then return { ended = true, payload = tr.payload } end
      agent.state, agent.session, agent.cwd = frame.state, frame.session, frame.cwd or agent.cwd
      agent.workflow, agent.sha256, agent.depth = frame.workflow, frame.sha256, frame.depth
      agent.task_folder = frame.task_folder or agent.task_folder
      agent.input = tr.payload
    end,
  },
  {
    name = "call-workflow",
    usage = '<call-workflow return="BACK">PATH</call-workflow>',
    summary = "run workflow PATH; back at BACK",
    body = "workflow",
    attrs = { ["return"] = "target", input = "text" },
    requires = { ["return"] = "where its <result> goes" },
    forbid = { cd = "the called workflow continues the caller's conversation, which belongs to the "
      .. "caller's directory; use <function-workflow cd=...> to run it elsewhere" },
    session = "branch",
    stack = "push",
    prepare = xwf_prepare,
    apply = function(_, agent, tr)
      call_workflow(agent, tr)
      agent.branch = true -- the callee's first turn branches the caller's session
    end,
  },
  {
    name = "function-workflow",
    usage = '<function-workflow return="BACK">PATH</function-workflow>',
    summary = "the same, PATH starting fresh",
    body = "workflow",
    attrs = { ["return"] = "target", cd = "dir", input = "text" },
    requires = { ["return"] = "where its <result> goes" },
    session = "fresh",
    stack = "push",
    prepare = xwf_prepare,
    apply = function(_, agent, tr, cwds)
      call_workflow(agent, tr)
      agent.session, agent.cwd = nil, cwds[1] or agent.cwd
    end,
  },
  {
    name = "fork-workflow",
    usage = '<fork-workflow next="NEXT">PATH</fork-workflow>',
    summary = "a parallel agent in workflow PATH",
    body = "workflow",
    attrs = { next = "target", cd = "dir", input = "text", task = "text", launcher = "launcher" },
    free = true,
    session = "fresh",
    prepare = xwf_prepare,
    apply = fork_apply,
  },
  {
    name = "reset-workflow",
    usage = '<reset-workflow cd="DIR">PATH</reset-workflow>',
    summary = "go on in PATH, fresh, stack cleared",
    body = "workflow",
    attrs = { cd = "dir", input = "text", task = "text" },
    session = "fresh",
    prepare = xwf_prepare,
    apply = function(_, agent, tr, cwds)
      require("raymond.xworkflow").enter(agent, tr)
      agent.cwd = cwds[1] or agent.cwd
      agent.session, agent.input, agent.stack, agent.depth = nil, tr.input, {}, nil
      new_task(agent, tr)
    end,
  },
  {
    name = "ask",
    usage = '<ask next="NEXT" timeout="48h">Q?</ask>',
    summary = "wait for a person's answer",
    body = "payload",
    attrs = { next = "target", timeout = "duration", timeout_next = "target" },
    requires = { next = "where the answer goes" },
    session = "same",
    check = ask.check,
    -- The agent waits, session and stack kept; raymond.ask answers it.
    apply = function(_, agent, tr)
      ask.open(agent, tr, raymond.now())
      return { asked = true }
    end,
  },
}

M.by_name = {}
for _, e in ipairs(M.list) do M.by_name[e.name] = e end

-- The names in table order, e.g. for "one of <goto>, <reset>, ...".
function M.names()
  local names = {}
  for i, e in ipairs(M.list) do names[i] = e.name end
  return names
end

-- "<goto>, <reset>, ... or <result>" (`conj` joins the last two).
function M.phrase(conj)
  local names = {}
  for i, e in ipairs(M.list) do names[i] = "<" .. e.name .. ">" end
  return table.concat(names, ", ", 1, #names - 1) .. " " .. conj .. " " .. names[#names]
end

-- The attributes of `name` whose values are state names, sorted.
function M.target_attrs(name)
  local keys = {}
  for k, kind in pairs(M.by_name[name].attrs) do
    if kind == "target" then keys[#keys + 1] = k end
  end
  table.sort(keys)
  return keys
end

return M
