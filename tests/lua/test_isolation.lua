-- Tests for raymond.isolation: task= and worktree= as tags take them,
-- what the transitions do to task folders, the state file's checks of
-- the new fields, and lint's checks of them.

local T = require("testing")
local raymond = require("raymond")
local analyse = require("raymond.analyse")
local diagram = require("raymond.diagram")
local isolation = require("raymond.isolation")
local lint = require("raymond.lint")
local runstate = require("raymond.runstate")
local template = require("raymond.template")
local transition = require("raymond.transition")

local DIR = T.tmpdir()
for _, n in ipairs({ "A.sh", "B.sh", "R.sh" }) do T.put(DIR .. "/" .. n, "echo '<result>x</result>'\n") end

local function decide(text)
  return transition.decide(assert(raymond.parse_tags(text)), DIR)
end

local function agent()
  return { id = "main", state = "A.sh", stack = {}, cwd = DIR, vars = {}, data = {},
           task_folder = "/p/.raymond/tasks/run1/main" }
end

local function apply(a, text, rec)
  rec = rec or { fork_counters = {}, agents = { a } }
  local tr = assert(decide(text))
  return assert(transition.apply(rec, a, tr, { DIR })), tr
end

T.test("task= takes new on <reset> and inherit on <fork>, nothing else, naming the tag", function()
  T.eq(decide('<reset task="new">B</reset>').task, "new", "reset")
  T.eq(decide('<fork next="B" task="inherit">A</fork>').forks[1].task, "inherit", "fork")
  local _, err = decide('<reset task="inherit">B</reset>')
  T.eq(err, '<reset task="inherit">: task= on <reset> takes only "new"', "reset's message")
  _, err = decide('<fork next="B" task="new">A</fork>')
  T.eq(err, '<fork task="new">: task= on <fork> takes only "inherit"', "fork's message")
  _, err = decide('<goto task="new">B</goto>')
  T.has(err, "unknown attribute 'task' on <goto>", "goto")
  -- task on a fork is the attribute, never a worker variable.
  T.same(decide('<fork next="B" task="inherit">A</fork>').forks[1].vars, {}, "no variable")
end)

T.test("a worktree name is a short plain file name", function()
  for _, good in ipairs({ "a", "feature-x", "Fix_2", string.rep("x", 64) }) do
    T.eq(isolation.name_error(good), nil, good)
  end
  for _, bad in ipairs({ "", "../x", "a/b", ".hidden", "-opt", "a b", "x\n", "a.lock", "é",
                         string.rep("x", 65) }) do
    T.has(isolation.name_error(bad), "is not a worktree name", bad)
  end
  local _, err = decide('<fork next="B" worktree="../up">A</fork>')
  T.has(err, "<fork worktree=\"../up\">: '../up' is not a worktree name", "fork")
  _, err = decide('<reset worktree="/etc">B</reset>')
  T.has(err, "<reset worktree=\"/etc\">", "reset")
  _, err = decide('<goto worktree="x">B</goto>')
  T.has(err, "unknown attribute 'worktree' on <goto>", "goto")
  T.eq(decide('<fork next="B" worktree="w1">A</fork>').forks[1].worktree, "w1", "taken")
end)

T.test("reset task=new counts up and drops the folder, for the next state to make anew", function()
  local a = agent()
  apply(a, '<reset task="new">B</reset>')
  T.eq(a.task_count, 1, "count")
  T.eq(a.task_folder, nil, "folder chosen again")
  T.eq(isolation.task_path({ root = "/p/.raymond" }, "run1", a.id, a.task_count),
    "/p/.raymond/tasks/run1/main_task1", "path")
  a.task_folder = "/p/.raymond/tasks/run1/main_task1"
  apply(a, "<reset>A</reset>")
  T.eq(a.task_folder, "/p/.raymond/tasks/run1/main_task1", "a plain reset keeps it")
  T.eq(isolation.task_path({ root = "/r" }, "id", "main", nil), "/r/tasks/id/main", "no count")
end)

T.test("fork task=inherit shares the parent's folder; without it a worker gets its own", function()
  local a = agent()
  local out = apply(a, '<fork next="B" task="inherit">A</fork><fork>A</fork>')
  T.eq(out.workers[1].task_folder, a.task_folder, "inherited")
  T.eq(out.workers[2].task_folder, nil, "its own, chosen before its first state")
end)

T.test("a <result> gives the caller back its task folder", function()
  local a = agent()
  apply(a, '<function return="R">B</function>')
  apply(a, '<reset task="new">A</reset>')
  a.task_folder = "/p/.raymond/tasks/run1/main_task1"
  apply(a, "<result>done</result>")
  T.eq(a.state, "R.sh", "returned")
  T.eq(a.task_folder, "/p/.raymond/tasks/run1/main", "the caller's folder")
end)

T.test("prompts see {{task_folder}}", function()
  local v = template.vars({ id = "run1" }, agent())
  T.eq(template.render("in {{task_folder}}", v), "in /p/.raymond/tasks/run1/main", "rendered")
end)

-- A state file with one agent whose fields `fn` changes.
local function state_with(fn)
  local a = { id = "main", state = "A.sh", cwd = "/p", stack = { { state = "R.sh", task_folder = "/p/t" } },
              task_folder = "/p/.raymond/tasks/r/main", task_count = 2,
              worktree = { name = "w", repo = "/p", from = "/p", base = "abc123",
                           path = "/p/.raymond/worktrees/r/main-w", branch = "raymond/r/main-w" } }
  local rec = { format = 1, id = "r", workflow = "/wf", status = "running", launch = {}, steps = 0,
                agents = { a }, kept_worktrees = { { agent = "x", path = "/p/k", branch = "b", why = "1 change" } } }
  if fn then fn(a, rec) end
  return raymond.json_encode(rec)
end

T.test("the state file keeps task folders and worktrees, and refuses bad ones", function()
  local rec = assert(runstate.decode(state_with(), "s.json"))
  T.eq(rec.agents[1].task_count, 2, "count")
  T.eq(rec.agents[1].worktree.branch, "raymond/r/main-w", "branch")
  T.eq(rec.kept_worktrees[1].why, "1 change", "kept")
  local cases = {
    { function(a) a.task_folder = "rel" end, "agents[1].task_folder 'rel' is not an absolute path" },
    { function(a) a.stack[1].task_folder = 3 end, "agents[1].stack[1].task_folder should be a string" },
    { function(a) a.task_count = 1.5 end, "agents[1].task_count should be a whole number" },
    { function(a) a.worktree.name = "../x" end, "agents[1].worktree.name: '../x' is not a worktree name" },
    { function(a) a.worktree.repo = "p" end, "agents[1].worktree.repo 'p' is not an absolute path" },
    { function(a) a.worktree.base = "HEAD; rm" end, "agents[1].worktree.base is not a commit id" },
    { function(_, r) r.kept_worktrees[1].path = false end, "kept_worktrees[1].path should be a string" },
  }
  for _, c in ipairs(cases) do
    local run, err = runstate.decode(state_with(c[1]), "s.json")
    T.eq(run, nil, c[2])
    T.has(err, c[2], c[2])
  end
end)

T.test("lint reports task= where it does not belong, bad task values and bad worktree names", function()
  local dir = DIR .. "/lint"
  assert(raymond.mkdir_p(dir))
  T.put(dir .. "/START.md", '<goto task="new">B</goto>\n<reset task="old">B</reset>\n'
    .. '<fork next="B" task="inherit" worktree="ok-1">B</fork>\n<reset worktree="a/b" task="new">B</reset>\n')
  T.put(dir .. "/B.md", "<result>x</result>\n")
  local found = {}
  for _, d in ipairs(lint.run(assert(analyse.load(dir, "/")))) do
    if d.severity == "error" then found[#found + 1] = string.format("%s:%d", d.check, d.line) end
  end
  table.sort(found)
  T.same(found, { "invalid-task-value:2", "invalid-worktree-name:4", "unsupported-task-attribute:1" }, "findings")
end)

T.test("the diagram labels an edge into a worktree with its name", function()
  local dir = DIR .. "/diagram"
  assert(raymond.mkdir_p(dir))
  T.put(dir .. "/START.sh", 'echo \'<fork next="B" worktree="feat">W</fork>\'\n')
  T.put(dir .. "/W.sh", 'echo \'<reset worktree="again">B</reset>\'\n')
  T.put(dir .. "/B.sh", "echo '<result>x</result>'\n")
  local text = diagram.mermaid(diagram.graph(assert(analyse.load(dir, "/"))))
  T.has(text, '|"fork in worktree feat"|', "the worker's edge")
  T.has(text, '|"next"|', "the parent's edge")
  T.has(text, '|"reset in worktree again"|', "a reset's edge")
end)

os.execute("rm -rf '" .. DIR .. "'")
