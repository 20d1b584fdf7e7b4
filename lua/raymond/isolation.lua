-- raymond.isolation: where an agent keeps its files apart from the others.
--
-- Task folders.  Every agent has a folder of its own under the run's
-- workspace, .raymond/tasks/<run>/<agent> ($RAYMOND_TASK_FOLDER,
-- {{task_folder}}), made before the agent's first state runs.  A
-- <reset task="new"> counts the agent's task_count up and gives it a
-- fresh folder, <agent>_task<n>; a <fork task="inherit"> gives the
-- worker its parent's folder; a <result> that returns to a caller gives
-- back the folder the caller had (the stack frame keeps it).  The path is
-- kept in the agent's record (task_folder), so a resume finds the same
-- folder, and prepare() makes it again if it is missing.
--
-- Worktrees.  worktree="NAME" on <reset> (the agent) or on a <fork> (its
-- worker) makes the agent work in a git worktree of its own,
-- .raymond/worktrees/<run>/<agent>-<NAME>, on the branch
-- raymond/<run>/<agent>-<NAME>, made from the commit the repository of
-- the agent's directory had when the tag was taken.  The steps, each safe
-- against a kill -9:
--
--   plan()     before the transition is applied: the agent's directory
--              must be in a git repository with a commit, else the
--              transition fails and nothing changes; the transition then
--              keeps { name, repo, base, from } in the agent (worktree)
--   prepare()  before a state, until the agent is in the worktree
--              (wt.ready): path and branch are added to the plan and
--              saved before git runs; a worktree found at the path is
--              reused, a branch found is checked out again; then the
--              agent's cwd becomes the worktree, and it is ready (after
--              that the agent may cd= within it, or out of it, as ever)
--   release()  before the agent's final <result> is applied: a worktree
--              with no uncommitted change (untracked files count) that no
--              other agent works in is removed, and so is its branch if
--              it holds no commit beyond the one it started from; else
--              it is kept and reported (console, debug record,
--              kept_worktrees in the state for raymond status)
--
-- A worktree's NAME comes from model output, so it is a short plain file
-- name (M.name_error); the path and branch are raymond's, never the
-- model's.

local raymond = require("raymond")
local console = require("raymond.console")
local executor = require("raymond.executor")
local workspace = require("raymond.workspace")

local M = {}

-- The one value task= takes on each tag that takes it.
M.TASK_VALUES = { reset = "new", fork = "inherit", ["reset-workflow"] = "new", ["fork-workflow"] = "inherit" }

M.NAME_MAX = 64

-- nil when `name` may name a worktree, else why not.
function M.name_error(name)
  if type(name) ~= "string" or #name == 0 or #name > M.NAME_MAX
      or not name:find("^[A-Za-z0-9][A-Za-z0-9_-]*$") then
    return string.format("'%s' is not a worktree name: use 1 to %d letters, digits, '_' or '-', "
      .. "starting with a letter or digit", tostring(name), M.NAME_MAX)
  end
  return nil
end

-- nil when the task= and worktree= attributes of tag `t` ({name, attrs})
-- are right, else a message naming the tag.
function M.attr_error(t)
  local task = t.attrs.task
  local want = M.TASK_VALUES[t.name]
  if task ~= nil and want and task ~= want then
    return string.format("<%s task=\"%s\">: task= on <%s> takes only \"%s\"", t.name, task, t.name, want)
  end
  local wt = t.attrs.worktree
  if wt ~= nil and (t.name == "reset" or t.name == "fork") then
    local bad = M.name_error(wt)
    if bad then return string.format("<%s worktree=\"%s\">: %s", t.name, wt, bad) end
  end
  return nil
end

-- --------------------------------------------------------------- folders

-- A file name for `id` (an agent id may hold any character but / and
-- control characters): anything but letters, digits, _ and - becomes -.
local function safe(id) return (id:gsub("[^%w_-]", "-")) end

function M.tasks_root(ws, run_id) return workspace.tasks_path(ws, run_id) end
function M.worktrees_root(ws, run_id) return ws.root .. "/worktrees/" .. run_id end

-- The task folder of `agent_id` after `count` task="new" resets.
function M.task_path(ws, run_id, agent_id, count)
  local leaf = safe(agent_id)
  if count and count > 0 then leaf = leaf .. "_task" .. count end
  return M.tasks_root(ws, run_id) .. "/" .. leaf
end

-- ------------------------------------------------------------------- git

-- Worktrees of one run are added and removed one at a time: two git
-- commands changing the same repository's worktree list at once may
-- trip over each other's lock files.
local function locked(run, fn)
  while run.git_busy do
    if not raymond.sleep(0.05) then return nil, "the run is stopping" end
  end
  run.git_busy = true
  local ok, a, b = pcall(fn)
  run.git_busy = false
  if not ok then error(a, 0) end
  return a, b
end

-- Run git with `args` in `dir`: its stdout, or nil and a message.  It
-- has the states' --timeout: checking out a large tree may be silent a
-- long while.
local function git(run, dir, args)
  local argv = { "git", "-C", dir }
  table.move(args, 1, #args, 4, argv)
  local res = executor.run(run, { argv = argv, capture = true, timeout = run.rec.launch.timeout })
  if res.spawn_error then return nil, "cannot run git: " .. res.spawn_error end
  if res.exit ~= 0 then
    local msg = (res.stderr or ""):match("^%s*(.-)%s*$")
    return nil, msg ~= "" and msg or ("git " .. args[1] .. " failed")
  end
  return res.stdout or ""
end

-- ------------------------------------------------------------------ plan

-- Before `tr` is applied to `agent`: each unit (the reset, or each fork)
-- asking for a worktree gets the plan of it (unit.wt), or the whole
-- transition fails.  `cwds` are the directories the units will have
-- (raymond.transition.cwds).  Returns true, or nil and a message.
function M.plan(run, agent, tr, cwds)
  for i, unit in ipairs(tr.forks or { tr }) do
    local name = unit.worktree
    if name then
      local bad = M.name_error(name)
      if bad then return nil, string.format("<%s worktree=\"%s\">: %s", tr.tag, name, bad) end
      local own = not tr.forks and agent.worktree
      if own and own.name ~= name then
        return nil, string.format("<reset worktree=\"%s\">: agent %s already works in worktree \"%s\", "
          .. "and an agent has one worktree at a time", name, agent.id, own.name)
      end
      if own then
        unit.wt = own
      else
        local out, err = git(run, cwds[i], { "rev-parse", "--path-format=absolute", "--git-common-dir", "HEAD" })
        local common, base = (out or ""):match("^([^\n]+)\n(%x+)\n?$")
        if not common then
          return nil, string.format("<%s worktree=\"%s\">: %s is not in a git repository with a commit, so "
            .. "there is nothing to make a worktree of (git: %s)", tr.tag, name, cwds[i],
            err or "no commit yet")
        end
        -- The repository's main folder (its .git's parent; a bare
        -- repository is its own), which outlives any worktree the
        -- agent's directory may be in.
        unit.wt = { name = name, repo = common:match("^(.*)/%.git$") or common, base = base, from = cwds[i] }
      end
    end
  end
  return true
end

-- ---------------------------------------------------------------- prepare

-- The path and branch of the worktree `wt` of `agent`, set in the plan
-- if it has none yet.  nil and a message when a state file edited by
-- hand gives others: git must not be pointed elsewhere.
local function place(run, agent, wt)
  local leaf = safe(agent.id) .. "-" .. wt.name
  local path = M.worktrees_root(run.ws, run.rec.id) .. "/" .. leaf
  local branch = "raymond/" .. run.rec.id .. "/" .. leaf
  if not wt.path then
    wt.path, wt.branch = path, branch
    -- Saved before git runs (the host saves before any child starts),
    -- so a resume knows which worktree may already exist.
    raymond.mark_dirty()
  elseif wt.path ~= path or wt.branch ~= branch then
    return nil, string.format("the state file gives it the path %s and branch %s, not the %s and %s raymond "
      .. "makes", wt.path, tostring(wt.branch), path, branch)
  end
  return true
end

-- Give the plan `wt` of `agent` its worktree: the one at the path if
-- there is one (a resume), else a new one.  Returns true or nil, message.
local function add_worktree(run, agent, wt)
  local parent = M.worktrees_root(run.ws, run.rec.id)
  return locked(run, function()
    local kind = raymond.stat(wt.path, true)
    if kind then
      -- Only the real folder git made there, never a link planted there.
      local top = kind == "dir" and git(run, wt.path, { "rev-parse", "--show-toplevel" })
      if not top or top:match("^[^\n]*") ~= raymond.realpath(wt.path) then
        return nil, string.format("%s exists but is not the worktree raymond made there; move it away, "
          .. "then: raymond --resume %s", wt.path, run.rec.id)
      end
      return true
    end
    local ok, err = raymond.mkdir_p(parent)
    if not ok then return nil, err end
    local args = { "worktree", "add", "-b", wt.branch, wt.path, wt.base }
    if git(run, wt.repo, { "rev-parse", "--verify", "--quiet", "refs/heads/" .. wt.branch }) then
      args = { "worktree", "add", wt.path, wt.branch }
    end
    ok, err = git(run, wt.repo, args)
    if not ok and not raymond.stopping() then
      -- A worktree removed by hand stays registered until pruned, and
      -- git refuses to add one at its path or on its branch till then.
      git(run, wt.repo, { "worktree", "prune" })
      ok, err = git(run, wt.repo, args)
    end
    if not ok then return nil, "cannot add the worktree: " .. err end
    console.progress("[%s] works in worktree %s (branch %s)", agent.id, console.rel(wt.path, run.cwd), wt.branch)
    return true
  end)
end

-- Before each state of `agent`: its task folder exists, and its worktree
-- if it has one, with its cwd there.  Returns true, or nil and a message.
function M.prepare(run, agent)
  if not agent.task_folder then
    agent.task_folder = M.task_path(run.ws, run.rec.id, agent.id, agent.task_count)
    raymond.mark_dirty()
  end
  local root = M.tasks_root(run.ws, run.rec.id)
  local tf = agent.task_folder
  if tf:sub(1, #root + 1) ~= root .. "/" or tf:find("/%.%.?/") or tf:find("/%.%.?$") then
    return nil, string.format("the state file gives the task folder %s, which is not in %s, where raymond "
      .. "makes them", agent.task_folder, root)
  end
  if raymond.stat(agent.task_folder) ~= "dir" then
    local ok, err = raymond.mkdir_p(agent.task_folder)
    if not ok then return nil, "cannot make the task folder: " .. err end
  end
  local wt = agent.worktree
  if not wt then return true end
  local ok, err = place(run, agent, wt)
  if ok and not wt.ready then ok, err = add_worktree(run, agent, wt) end
  if not ok then return nil, string.format("worktree \"%s\": %s", wt.name, err) end
  if not wt.ready then
    agent.cwd, wt.ready = wt.path, true
    raymond.mark_dirty()
  end
  return true
end

-- Whether `dir` is `root` or below it.
local function under(root, dir)
  return dir == root or dir:sub(1, #root + 1) == root .. "/"
end

-- On resume, before the agents' directories are checked: an agent whose
-- worktree is gone (removed by hand while the run was not running) goes
-- back to where it came from, and prepare() adds the worktree again from
-- its branch, rather than the resume refusing a missing directory.
function M.reopen(rec)
  for _, a in ipairs(rec.agents) do
    local wt = a.worktree
    if wt and wt.ready and wt.path and raymond.stat(wt.path, true) == nil then
      if under(wt.path, a.cwd) then a.cwd = wt.from end
      wt.ready = nil
    end
  end
end

-- ---------------------------------------------------------------- release

local function keep(run, agent, wt, why)
  local line = string.format("[%s] kept worktree %s (branch %s): %s", agent.id,
    console.rel(wt.path, run.cwd), wt.branch, why)
  console.say(line .. "\n")
  if run.record then run.record:note("worktree", line) end
  run.rec.kept_worktrees = run.rec.kept_worktrees or {}
  table.insert(run.rec.kept_worktrees, { agent = agent.id, path = wt.path, branch = wt.branch, why = why })
  raymond.mark_dirty()
  return true
end

-- `agent` leaves the run without its final <result>: a join gathered its
-- failure, or no longer waits for it.  Its worktree, if it has one, is
-- kept and reported, `why` saying what happened: git is not asked here
-- whether it holds work, so the report goes into the same save as the
-- agent's leaving, and a kill -9 cannot lose it.
function M.left(run, agent, why)
  local wt = agent.worktree
  if wt and wt.path and raymond.stat(wt.path) == "dir" then keep(run, agent, wt, why) end
end

-- Before the final <result> of `agent` is applied: remove its worktree,
-- or keep and report it.  Never fails the transition: a worktree that
-- cannot be removed is kept.  Returns false only when a stop killed git
-- before anything was decided: then the caller applies nothing, and a
-- resume comes here again.
function M.release(run, agent)
  local wt = agent.worktree
  if not (wt and wt.path) or raymond.stat(wt.path) ~= "dir" then return true end
  local users = {}
  for _, a in ipairs(run.rec.agents) do
    if a ~= agent and under(wt.path, a.cwd) then users[#users + 1] = a.id end
  end
  local changes, serr = git(run, wt.path, { "status", "--porcelain", "--untracked-files=all" })
  -- A stop kills git: nothing is decided, and the resume ends the agent again.
  if not changes and raymond.stopping() then return false end
  if not changes then return keep(run, agent, wt, "git status failed: " .. serr) end
  if changes ~= "" then
    local n = select(2, changes:gsub("\n", ""))
    return keep(run, agent, wt, string.format("%d uncommitted change%s", n, n == 1 and "" or "s"))
  end
  if #users > 0 then return keep(run, agent, wt, "agents still work in it: " .. table.concat(users, ", ")) end
  local head = (git(run, wt.path, { "rev-parse", "HEAD" }) or ""):match("%x+")
  -- Out of the worktree first, saved before git removes it: a resume
  -- after a kill here finds the agent where it came from, and prepare()
  -- puts it back into the worktree (or a new one from its branch).
  local cwd = agent.cwd
  agent.cwd, wt.ready = wt.from, nil
  raymond.mark_dirty()
  local ok, err = locked(run, function() return git(run, wt.path, { "worktree", "remove", wt.path }) end)
  if not ok and raymond.stopping() then return false end
  if not ok then
    agent.cwd, wt.ready = cwd, true
    return keep(run, agent, wt, "git worktree remove failed: " .. tostring(err))
  end
  local line
  if head == wt.base then
    git(run, wt.repo, { "branch", "-D", wt.branch })
    line = string.format("[%s] removed worktree %s and its branch", agent.id, console.rel(wt.path, run.cwd))
  else
    line = string.format("[%s] removed worktree %s; its commits stay on branch %s", agent.id,
      console.rel(wt.path, run.cwd), wt.branch)
  end
  console.progress("%s", line)
  if run.record then run.record:note("worktree", line) end
  return true
end

return M
