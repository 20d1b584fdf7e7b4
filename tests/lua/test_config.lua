-- raymond.yaml (a whole YAML file with the line of every key and element)
-- and raymond.config (config files: reading, checking, precedence).
local T = require("testing")
local raymond = require("raymond")
local config = require("raymond.config")

T.test("raymond.yaml gives the line of every key and list element, null values too", function()
  local doc, lines = raymond.yaml("# settings\nraymond:\n  budget: 5\n\n  hooks:\n    - a.lua\n    - b.lua\n" ..
    "  model:\nother: [x, y]\n", "c.yaml")
  T.same(doc, { raymond = { budget = "5", hooks = { "a.lua", "b.lua" } }, other = { "x", "y" } })
  T.same(lines[doc], { raymond = 2, other = 9 }, "top level")
  T.same(lines[doc.raymond], { budget = 3, hooks = 5, model = 8 }, "raymond:, with the null model")
  T.same(lines[doc.raymond.hooks], { 6, 7 }, "a block list")
  T.same(lines[doc.other], { 9, 9 }, "a flow list")
end)

T.test("raymond.yaml errors name the file and the line", function()
  local doc, err = raymond.yaml("raymond:\n  budget: 5\n model: x\n", "dir/c.yaml")
  T.eq(doc, nil)
  T.has(err, "dir/c.yaml:3: ")
  doc, err = raymond.yaml("a: 1\n\n- b\n", "c.yaml")
  T.has(err, "c.yaml:3: ")
  doc, err = raymond.yaml("\n- a\n", "c.yaml")
  T.eq(err, "c.yaml:2: the file must be a mapping of key: value, but this line starts a list")
  doc, err = raymond.yaml("x: *a\n", "c.yaml")
  T.eq(err, "c.yaml:1: alias *a has no anchor &a before it")
  doc, err = raymond.yaml("a: &a [*a]\n", "c.yaml")
  T.has(err, "c.yaml:1: alias *a has no anchor")
  doc, err = raymond.yaml(string.rep("- x\n", 100001):gsub("^", "l:\n"), "c.yaml")
  T.eq(err, "c.yaml is too large: more than 100000 values (aliases count once for each use)")
  -- An empty file, or one of comments only, is an empty mapping.
  T.same(raymond.yaml("", "c.yaml"), {})
  T.same(raymond.yaml("# nothing\n", "c.yaml"), {})
end)

T.test("frontmatter messages are as before: 'frontmatter line N'", function()
  local meta, err = raymond.frontmatter("---\na: 1\na: 2\n---\nbody")
  T.eq(meta, nil)
  T.eq(err, "frontmatter line 3: duplicate key 'a' (first on line 2)")
  meta, err = raymond.frontmatter("---\n- a\n---\nbody")
  T.eq(err, "frontmatter must be a mapping of field: value, but line 2 starts a list")
end)

-- A project folder holding .raymond/config.yaml with `text`.
local function project(text)
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/.raymond/sub"))
  assert(raymond.mkdir_p(dir .. "/deep/er"))
  T.put(dir .. "/.raymond/config.yaml", text)
  return dir
end

-- The project's file of cfg.
local function project_file(cfg)
  for _, f in ipairs(cfg.files) do if f.which == "project" then return f end end
end

T.test("config.load finds the project's file upward and checks values as the options are", function()
  local dir = project("raymond:\n  budget: 0x10\n  timeout: 1.5\n  max_parallel: 8\n  no_wait: Yes\n" ..
    "  quiet: off\n  claude: bin/claude\n  hooks: .raymond/sub\n")
  local cfg, err = config.load(dir .. "/deep/er")
  T.eq(cfg, nil, "hooks names a folder, not a file")
  T.eq(err.msg, dir .. "/.raymond/config.yaml:8: hooks: '" .. dir .. "/.raymond/sub' is not a file")
  T.put(dir .. "/.raymond/config.yaml", "raymond:\n  budget: 0x10\n  timeout: 1.5\n  max_parallel: 8\n" ..
    "  no_wait: Yes\n  quiet: off\n  claude: bin/claude\n  allow_cd: .raymond/sub\n")
  cfg = assert(config.load(dir .. "/deep/er"))
  local f = project_file(cfg)
  T.eq(f.path, dir .. "/.raymond/config.yaml")
  T.same(f.values, {
    budget = { value = 16.0, line = 2 }, timeout = { value = 1.5, line = 3 },
    max_parallel = { value = 8, line = 4 }, no_wait = { value = true, line = 5 },
    quiet = { value = false, line = 6 }, claude = { value = dir .. "/bin/claude", line = 7 },
    allow_cd = { items = { { value = dir .. "/.raymond/sub", line = 8 } }, line = 8 },
  })
  T.eq(math.type(f.values.max_parallel.value), "integer", "a whole number stays an integer")
end)

T.test("config.apply: command line over project over user over default; lists add up", function()
  local function file(which, values)
    return { which = which, shown = which .. ".yaml", values = values, warnings = {} }
  end
  local cfg = { files = {
    file("user", { budget = { value = 7.0, line = 2 }, model = { value = "haiku", line = 3 },
                   no_wait = { value = true, line = 4 }, quiet = { value = true, line = 5 },
                   hooks = { items = { { value = "/u.lua", line = 6 } } } }),
    file("project", { budget = { value = 5.0, line = 2 }, no_wait = { value = false, line = 3 },
                      hooks = { items = { { value = "/p.lua", line = 4 } } } }),
  } }
  local opts = { model = "opus", quiet = false, hooks = { "c.lua" } }
  local from = assert(config.apply(opts, cfg))
  T.eq(opts.budget, 5.0)
  T.eq(opts.model, "opus")
  T.eq(opts.no_wait, nil, "the project's false wins over the user's true")
  T.eq(opts.quiet, true)
  T.eq(opts.timeout, nil, "a default is left to the engine")
  T.same(opts.hooks, { "/u.lua", "/p.lua", "c.lua" })
  T.same(from.budget, { value = 5.0, source = "project.yaml:2" })
  T.same(from.model, { value = "opus", source = "command line" })
  T.same(from.no_wait, { value = false, source = "project.yaml:3" })
  T.same(from.timeout, { value = 600, source = "default" })
  T.same(from.hooks.items[3], { value = "c.lua", source = "command line" })
  -- `only` limits what is applied (a resume reads only quiet).
  opts = { quiet = false }
  from = assert(config.apply(opts, cfg, { quiet = true }))
  T.same(opts, { quiet = true })
  T.eq(from.budget, nil)
end)

T.test("config.load refuses a file over the size cap, unread", function()
  local dir = project("raymond:\n" .. string.rep("# padding\n", config.MAX_BYTES // 10 + 1))
  local cfg, err = config.load(dir)
  T.eq(cfg, nil)
  T.eq(err.msg, string.format("cannot read '%s/.raymond/config.yaml': it is larger than %d bytes", dir,
    config.MAX_BYTES))
end)

T.test("every setting names a command-line option, and the option's key is a launch option or display", function()
  local launch = {}
  for _, k in ipairs(require("raymond.engine").LAUNCH_OPTIONS) do launch[k] = true end
  -- The run command keeps name with the launch options itself (a resume
  -- keeps it, but takes no --name).
  launch.debug, launch.quiet, launch.name = true, true, true
  for _, k in ipairs(config.KEYS) do
    if not k.ignored then
      local o = require("raymond.cli").by_name[k.option]
      assert(o, k.key .. " names no option")
      assert(launch[o.key], k.key .. ": " .. o.key .. " is not a launch option")
      assert(k.doc and #k.doc < 90, k.key .. " has no one-line doc")
    end
  end
end)

