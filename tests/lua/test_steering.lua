-- What model output, a hook or a hand-edited state file may steer: the
-- names of worker variables (raymond.tags.var_error), where cd= may lead
-- (raymond.transition.apply), targets that are another platform's scripts
-- (raymond.resolve) and the shape of a state file (raymond.runstate).

local T = require("testing")
local raymond = require("raymond")
local resolve = require("raymond.resolve")
local runstate = require("raymond.runstate")
local tags = require("raymond.tags")
local transition = require("raymond.transition")
local cjson = raymond.cjson

local function touch(path)
  local f = assert(io.open(path, "w"))
  f:write("echo '<result>x</result>'\n")
  f:close()
end

-- A project folder (the directory a run was started in) with the
-- workflow's states in it, a sub-folder, and a folder beside it.
local TOP = T.tmpdir()
local PROJ = TOP .. "/proj"
assert(raymond.mkdir_p(PROJ .. "/sub"))
assert(raymond.mkdir_p(TOP .. "/beside"))
for _, n in ipairs({ "A.sh", "W.sh", "N.sh", "ONLYBAT.bat", "ONLYPS.ps1", "BOTH.sh", "BOTH.bat" }) do
  touch(PROJ .. "/" .. n)
end
assert(os.execute(string.format("ln -s '%s' '%s/escape'", TOP .. "/beside", PROJ)))

local function decide(text)
  return transition.decide(assert(raymond.parse_tags(text)), PROJ)
end

local function agent()
  return { id = "main", state = "A.sh", stack = {}, cwd = PROJ, vars = {}, data = {} }
end

local function apply(text, roots)
  local tr = assert(decide(text))
  local a = agent()
  local out, err = transition.apply({ fork_counters = {}, agents = {} }, a, tr, roots or { PROJ })
  return out, err, a
end

-- ------------------------------------------------------------ worker variables

T.test("a fork's attribute may be a variable only under a harmless lowercase name", function()
  for _, name in ipairs({ "BASH_ENV", "PATH", "LD_PRELOAD", "HOME", "RAYMOND_INPUT", "Item" }) do
    local tr, err = decide(string.format('<fork next="N" %s="x">W</fork>', name))
    T.eq(tr, nil, name)
    T.has(err, string.format("<fork>W</fork>: attribute '%s' cannot be a worker variable: a name must be "
      .. "lowercase letters, digits and _", name), name)
  end
  -- Names the tag grammar lets through only from a hook's transition.
  for _, name in ipairs({ "1x", "a-b", "a.b", "", "x=y" }) do
    T.has(tags.var_error(name), "a name must be lowercase letters, digits and _", name)
  end
  local tr = assert(decide('<fork next="N" item="a.c" file_2="b" _x="y">W</fork>'))
  T.same(tr.forks[1].vars, { item = "a.c", file_2 = "b", _x = "y" }, "lowercase names pass")
end)

T.test("proxy variables and other lowercase settings are refused", function()
  for _, name in ipairs({ "http_proxy", "https_proxy", "ftp_proxy", "no_proxy", "all_proxy", "path",
                          "npm_config_registry", "yarn_cache_folder" }) do
    local tr, err = decide(string.format('<fork next="N" %s="x">W</fork>', name))
    T.eq(tr, nil, name)
    T.has(err, string.format("attribute '%s' cannot be a worker variable: programs read %s from their "
      .. "environment as a setting", name, name), name)
  end
end)

T.test("a name raymond's own environment holds is refused", function()
  T.has(tags.var_error("item", { item = "mine" }),
    "'item' cannot be a worker variable: raymond's own environment has item, which it would replace")
  T.eq(tags.var_error("item", {}), nil, "absent: allowed")
end)

T.test("no other tag turns attributes into variables: they are unknown attributes", function()
  for _, text in ipairs({ '<reset PATH="/x">A</reset>', '<goto BASH_ENV="x">A</goto>',
                          '<call return="N" HOME="/">A</call>', '<function return="N" item="x">A</function>' }) do
    local tr, err = decide(text)
    T.eq(tr, nil, text)
    T.has(err, "unknown attribute", text)
  end
  -- A hook's transition is decided from the same table of attributes.
  local tr, err = transition.decide({ { name = "reset", body = "A", attrs = { LD_PRELOAD = "x.so" } } }, PROJ)
  T.eq(tr, nil, "a hook's reset")
  T.eq(err, "unknown attribute 'LD_PRELOAD' on <reset>; allowed: cd, input, task, worktree", "message")
end)

T.test("every fork of several is checked", function()
  local tr, err = decide('<fork next="N" a="1">W</fork><fork LD_PRELOAD="x.so">W</fork>')
  T.eq(tr, nil, "refused")
  T.has(err, "attribute 'LD_PRELOAD' cannot be a worker variable", "message")
end)

-- ------------------------------------------------------------ cd

T.test("cd may lead anywhere inside the run's directory", function()
  local out, err, a = apply('<reset cd="sub">A</reset>')
  T.eq(err, nil, "no error")
  T.eq(a.cwd, PROJ .. "/sub", "moved")
  out, err, a = apply('<reset cd="sub/..">A</reset>')
  T.eq(a.cwd, PROJ, "back to the top")
  T.eq(out ~= nil, true, "applied")
end)

T.test("cd out of the run's directory is refused, naming where it leads and how to allow it", function()
  for _, cd in ipairs({ "/", "..", "../beside", TOP .. "/beside", "escape" }) do
    local out, err, a = apply(string.format('<reset cd="%s">A</reset>', cd))
    T.eq(out, nil, cd)
    local real = cd == "/" and "/" or (cd == ".." and TOP or TOP .. "/beside")
    T.eq(err, string.format('cd="%s" resolves to %s, outside the directory the run was started in (%s); to '
      .. "let states work there, give --allow-cd %s to raymond run or raymond resume", cd, real, PROJ, real), cd)
    T.eq(a.cwd, PROJ, cd .. ": the agent stays")
    T.eq(a.state, "A.sh", cd .. ": unchanged")
  end
end)

T.test("a fork's cd is held to the same roots, and another root may be allowed", function()
  local out, err = apply('<fork next="N" cd="sub">W</fork><fork cd="escape">W</fork>')
  T.eq(out, nil, "refused")
  T.has(err, 'cd="escape" resolves to ' .. TOP .. "/beside, outside", "message")
  out, err = apply('<fork next="N" cd="escape">W</fork>', { PROJ, TOP .. "/beside" })
  T.eq(err, nil, "allowed root")
  T.eq(out.workers[1].cwd, TOP .. "/beside", "worker there")
end)

-- ------------------------------------------------------------ another platform's scripts

T.test("a target that exists only as .bat or .ps1 is named and refused", function()
  local name, err = resolve.target(PROJ, "ONLYBAT")
  T.eq(name, nil, "bat")
  T.eq(err, "state 'ONLYBAT' exists only as ONLYBAT.bat, a Windows script, which is not supported on this "
    .. "platform; write it as ONLYBAT.sh")
  name, err = resolve.target(PROJ, "ONLYPS")
  T.eq(name, nil, "ps1")
  T.has(err, "state 'ONLYPS' exists only as ONLYPS.ps1, a Windows script", "ps1 message")
  T.eq(resolve.target(PROJ, "BOTH"), "BOTH.sh", "the .sh wins")
  local _, terr = decide("<goto>ONLYBAT</goto>")
  T.has(terr, "<goto>ONLYBAT</goto>: state 'ONLYBAT' exists only as ONLYBAT.bat", "through a tag")
end)

-- ------------------------------------------------------------ state files

local function good_state()
  return {
    format = 1, id = "r1", workflow = PROJ, entry = "A.sh", status = "failed", steps = 3,
    launch = { timeout = 600 }, fork_counters = { main = 1 }, data = {},
    agents = {
      { id = "main", state = "A.sh", cwd = PROJ, stack = { { state = "N.sh", cwd = PROJ } },
        vars = {}, data = {} },
      { id = "main_w1", state = "W.sh", cwd = PROJ, stack = {}, vars = { item = "x" }, data = {} },
    },
  }
end

-- decode(text) must refuse with `want` after "is not a valid raymond state: ".
local function refused(text, want, what)
  local rec, err = runstate.decode(text, "S.json")
  T.eq(rec, nil, what)
  T.eq(err, "state file S.json is not a valid raymond state: " .. want, what)
end

local function edited(fn)
  local s = good_state()
  fn(s)
  return cjson.encode(s)
end

T.test("a good state loads", function()
  T.eq(runstate.decode(cjson.encode(good_state()), "S.json") ~= nil, true, "loads")
end)

T.test("a state file with a path in a state name is refused", function()
  refused(edited(function(s) s.agents[1].state = "../evil.sh" end),
    "agents[1].state '../evil.sh' is not a state of the workflow: it contains a path separator", "agent")
  refused(edited(function(s) s.agents[1].stack[1].state = "/tmp/x.sh" end),
    "agents[1].stack[1].state '/tmp/x.sh' is not a state of the workflow: it contains a path separator", "frame")
  refused(edited(function(s) s.agents[2].state = "W.bat" end),
    "agents[2].state 'W.bat' is not a state of the workflow: it is not a .md or .sh state file", "kind")
  refused(edited(function(s) s.agents[2].state = ".." end),
    "agents[2].state '..' is not a state of the workflow: it is not a file name", "dot dot")
end)

T.test("a state file with a gap in a list is refused", function()
  refused(edited(function(s) s.agents[1].stack = { ["1"] = { state = "N.sh" }, ["3"] = { state = "N.sh" } } end),
    "agents[1].stack should be a list without gaps, found the key '1'", "sparse stack")
  local text = cjson.encode(good_state()):gsub('"stack":%[{', '"stack":[null,{', 1)
  refused(text, "agents[1].stack[1] should be a table, found null", "null frame")
  refused(edited(function(s) s.agents = { main = s.agents[1] } end),
    "agents should be a list without gaps, found the key 'main'", "agents as an object")
end)

T.test("a state file with an unknown or duplicate agent is refused", function()
  refused(edited(function(s) s.agents[2].id = "main" end),
    "agents[2].id 'main' is also the id of agents[1]; an agent id is unique", "duplicate")
  refused(edited(function(s) s.agents[2].id = "../x" end),
    "agents[2].id '../x' is not an agent id raymond makes", "a path")
  refused(edited(function(s) s.agents[2].id = "" end),
    "agents[2].id '' is not an agent id raymond makes", "empty")
  refused(edited(function(s) s.agents[2].cwd = "sub" end),
    "agents[2].cwd 'sub' is not an absolute path", "relative cwd")
end)

T.test("worker variables of a hand-edited state pass the same check", function()
  refused(edited(function(s) s.agents[2].vars = { BASH_ENV = "/tmp/x" } end),
    "agents[2].vars: 'BASH_ENV' cannot be a worker variable: a name must be lowercase letters, digits and _, "
    .. "not starting with a digit (upper-case names such as PATH or BASH_ENV are settings programs read from "
    .. "their environment)", "upper-case")
  refused(edited(function(s) s.agents[2].vars = { http_proxy = "x" } end),
    "agents[2].vars: 'http_proxy' cannot be a worker variable: programs read http_proxy from their environment "
    .. "as a setting (see docs/protocol.md, \"Worker variables\")", "proxy")
  refused(edited(function(s) s.agents[2].vars = { item = 5 } end),
    "agents[2].vars.item should be a string, found number", "value")
end)

T.test("launch options of a hand-edited state are checked", function()
  refused(edited(function(s) s.launch.allow_cd = { "rel" } end),
    "launch.allow_cd[1] 'rel' is not an absolute path", "allow_cd")
  refused(edited(function(s) s.launch.max_agents = 2.5 end),
    "launch.max_agents should be a whole number", "max_agents")
end)
