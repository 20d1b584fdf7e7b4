-- Tests for raymond.yamlflow and the YAML scope: a workflow in one file,
-- its states as virtual files, every error naming the file's line.

local T = require("testing")
local raymond = require("raymond")
local yamlflow = require("raymond.yamlflow")
local scope_of = require("raymond.scope")
local resolve = require("raymond.resolve")

local function parse(src) return yamlflow.parse(src, "wf.yaml") end

-- parse must fail with a message starting "wf.yaml:LINE: " and holding `want`.
local function fails(src, line, want)
  local m, err = parse(src)
  T.eq(m, nil, "model of a bad file")
  T.eq(type(err), "string", "message")
  local prefix = "wf.yaml:" .. line .. ": "
  T.eq(err:sub(1, #prefix), prefix, "the line of: " .. err)
  T.has(err, want, "message")
end

local FLOW = table.concat({
  "id: demo",                                         -- 1
  "states:",                                          -- 2
  "  START:",                                         -- 3
  "    prompt: |",                                    -- 4
  "      First line {{input}}.",                      -- 5
  "      Then <goto>CHECK</goto>.",                   -- 6
  "    model: haiku",                                 -- 7
  "    allowed_transitions:",                         -- 8
  "      - { tag: goto, target: CHECK, input: \"a: b\" }", -- 9
  "    timeout: 30",                                  -- 10
  "  CHECK:",                                         -- 11
  "    sh: |",                                        -- 12
  "      echo checking >&2",                          -- 13
  "      echo '<result>ok</result>'",                 -- 14
  "    timeout: 0",                                   -- 15
  "  PLAIN:",                                         -- 16
  "    prompt: Just this.",                           -- 17
  "",
}, "\n")

T.test("states become virtual files: NAME.md with a frontmatter of its fields, NAME.sh", function()
  local m = assert(parse(FLOW))
  T.eq(m.files["CHECK.sh"], "echo checking >&2\necho '<result>ok</result>'\n")
  T.eq(m.files["PLAIN.md"], "Just this.", "a prompt without fields has no frontmatter")
  local meta, body = raymond.frontmatter(m.files["START.md"], require("raymond.policy").types())
  T.eq(body, "First line {{input}}.\nThen <goto>CHECK</goto>.\n")
  T.eq(meta.model, "haiku")
  T.eq(meta.timeout, 30, "a number field stays a number")
  T.same(meta.allowed_transitions, { { tag = "goto", target = "CHECK", input = "a: b" } })
  T.eq(#m.states, 3)
  T.eq(m.states[1].name, "START")
  T.eq(m.states[2].timeout, 0)
  T.eq(m.states[2].kind, "script")
end)

T.test("lines of a virtual file map to the YAML file's lines", function()
  local m = assert(parse(FLOW))
  local md = m.maps["START.md"]
  -- ---, model, allowed_transitions, its entry, timeout, ---, then the
  -- two prompt lines
  T.eq(md(1), 3)
  T.eq(md(2), 7)
  T.eq(md(3), 8)
  T.eq(md(4), 9, "a list entry: its own line")
  T.eq(md(5), 10)
  T.eq(md(6), 3)
  T.eq(md(7), 5, "the prompt's first line")
  T.eq(md(8), 6)
  T.eq(m.maps["CHECK.sh"](2), 14)
  T.eq(m.maps["PLAIN.md"](1), 17, "a one-line prompt: its key's line")
end)

T.test("text that needs quoting survives the frontmatter", function()
  local src = "states:\n  START:\n    prompt: hi\n    append_system_prompt: \"say \\\"x\\\"\\n\\tand \\\\ then: {y}\"\n"
    .. "    allowed_transitions: [{tag: result, payload: 'yes'}]\n"
  local m = assert(parse(src))
  local meta = raymond.frontmatter(m.files["START.md"], require("raymond.policy").types())
  T.eq(meta.append_system_prompt, "say \"x\"\n\tand \\ then: {y}")
  T.eq(meta.allowed_transitions[1].payload, "yes", "a nested value stays text")
  local fm = raymond.frontmatter("---\nk: " .. yamlflow.quote("a\1b\xE2\x80\xA8c") .. "\n---\n")
  T.eq(fm.k, "a\1b\xE2\x80\xA8c")
end)

T.test("a prompt that starts with a --- line is not read as frontmatter", function()
  local m = assert(parse("states:\n  START:\n    prompt: |\n      ---\n      model: opus\n      ---\n      body\n"))
  local meta, body = raymond.frontmatter(m.files["START.md"])
  T.eq(next(meta), nil)
  T.eq(body, "---\nmodel: opus\n---\nbody\n")
end)

T.test("bad files: each error names the file and the line", function()
  fails("states:\n  A:\n    prompt: x\n  A:\n    sh: y\n", 4, "duplicate key 'A' (first on line 2)")
  fails("START:\n  prompt: x\n", 1, "'START' looks like a state, but states go under a top-level states:")
  fails("name: x\n", 1, "no states: key")
  fails("states:\n", 1, "states has no value")
  fails("states: {}\n", 1, "states is empty")
  fails("states: [a]\n", 1, "states must be a mapping")
  fails("states:\n  A:\n    prompt: x\nextra: 1\n", 4, "unknown top-level key 'extra'")
  fails("states:\n  A:\n    prompt: x\n    sh: y\n", 4, "has both prompt and sh")
  fails("states:\n  A:\n    timeout: 3\n", 2, "neither prompt nor sh")
  fails("states:\n  A:\n    prompt: ''\n", 3, "prompt of state A must be non-empty text")
  fails("states:\n  A:\n    sh: [a]\n", 3, "must be non-empty text, not a list")
  fails("states:\n  A:\n    sh: x\n    model: haiku\n", 4, "script state A may not have model")
  fails("states:\n  A:\n    sh: x\n    color: red\n", 4, "script state A may not have color")
  fails("states:\n  A:\n    sh: x\n    timeout: -1\n", 4, "timeout of state A must be a number of seconds")
  fails("states:\n  A:\n    sh: x\n    timeout: soon\n", 4, "got 'soon'")
  fails("states:\n  A:\n    prompt: x\n  B:\n    prompt: y\n    effort: extreme\n", 6, "effort 'extreme' is not one")
  fails("states:\n  A:\n    prompt: x\n    allowed_transitions: {tag: goto}\n", 4, "allowed_transitions must be a list")
  fails("states:\n  A:\n    prompt: x\n    force_implicit: true\n", 4, "force_implicit needs exactly one")
  fails("states:\n  a/b:\n    prompt: x\n", 2, "must not contain a path separator")
  fails("states:\n  A.md:\n    prompt: x\n", 2, "write it without the extension ('A')")
  fails("states:\n  A: x\n", 2, "must be a mapping of keys")
  fails("states:\n  A:\n    prompt: x\n   bad indent\n", 4, "")
  fails("states:\n  A:\n    prompt: x\nhooks: {lua: x, file: y}\n", 4, "hooks must be Lua text, or a list")
  fails("states:\n  A:\n    prompt: x\nhooks:\n  - {lua: x, file: y}\n", 5, "exactly one key")
  fails("states:\n  A:\n    prompt: x\nhooks:\n  - file: ../x.lua\n", 5, "inside the YAML file's folder")
end)

T.test("fields nobody reads are refused once the hooks are known, with a suggestion", function()
  local m = assert(parse("states:\n  A:\n    prompt: x\n    max_visits: 3\n    modle: haiku\n"))
  local err = yamlflow.check_fields(m, { max_visits = "number" })
  T.has(err, "wf.yaml:5: state A has an unknown key 'modle' (did you mean 'model'?)")
  T.eq(yamlflow.check_fields(m, { max_visits = "number", modle = "string" }), nil)
end)

T.test("the original's manifest keys and Windows scripts are accepted", function()
  local m = assert(parse("id: x\nname: X\ndescription: d\ninput: {mode: optional}\ndefault_budget: 1.0\n"
    .. "states:\n  START:\n    sh: echo\n    bat: echo\n  WIN:\n    ps1: Write-Host\n"))
  T.eq(m.files["START.bat"], "echo")
  T.eq(m.files["WIN.ps1"], "Write-Host")
end)

-- ------------------------------------------------------------ the scope

local function write(path, data) T.put(path, data) end

T.test("a YAML scope reads states, writes scripts to a private folder, and says where they are", function()
  local dir = T.tmpdir()
  write(dir .. "/wf.yaml", FLOW)
  local s = assert(scope_of.yaml(dir .. "/wf.yaml"))
  T.eq(s.kind, "yaml")
  T.eq(s.dir, dir, "scripts see the YAML file's folder")
  T.eq(s:has("CHECK.sh"), true)
  T.eq(s:has("CHECK.md"), false)
  T.eq(select(2, s:read("NOPE.md")), "no state 'NOPE.md' in " .. dir .. "/wf.yaml")
  local path = assert(s:script("CHECK.sh"))
  T.eq(raymond.read_file(path), s:read("CHECK.sh"))
  local xdir = path:match("^(.*)/")
  T.eq(select(4, raymond.stat(xdir)) & 511, tonumber("700", 8), "the folder is private")
  T.eq(s:label("START.md"), dir .. "/wf.yaml:3")
  T.eq(select(2, s:timeout_of("CHECK.sh")), dir .. "/wf.yaml:15")
  T.eq(s:timeout_of("PLAIN.md"), nil)
  T.eq(s:line_of("START.md", 7), 5)
  T.eq(s:line_of("START.md"), 3, "no line: the state's own")
  s:close()
  T.eq(raymond.stat(xdir), nil, "close removes the copy")
  os.execute("rm -rf '" .. dir .. "'")
end)

T.test("embedded hooks keep the YAML file's lines; file hooks are read relative to it", function()
  local dir = T.tmpdir()
  assert(raymond.mkdir_p(dir .. "/h"))
  write(dir .. "/h/one.lua", "return {}\n")
  write(dir .. "/wf.yaml", "states:\n  START:\n    sh: echo\nhooks:\n  - lua: |\n      local x = 1\n"
    .. "      return { PreState = function() error('boom') end }\n  - file: h/one.lua\n")
  local s = assert(scope_of.yaml(dir .. "/wf.yaml"))
  local files = assert(s:hooks())
  T.eq(#files, 2)
  T.eq(files[1].name, dir .. "/wf.yaml")
  local chunk = assert(load(files[1].source, "@" .. files[1].name))
  local ok, err = pcall(chunk().PreState)
  T.eq(ok, false)
  T.has(err, "wf.yaml:7: boom", "the error names the YAML line")
  T.eq(files[2].name, dir .. "/h/one.lua")
  os.remove(dir .. "/h/one.lua")
  T.has(select(2, s:hooks()), "wf.yaml:8: hook file h/one.lua cannot be read")
  os.execute("rm -rf '" .. dir .. "'")
end)

T.test("resolve: FILE.yaml starts at its entry, FILE.yaml/STATE at STATE; resume reads it again", function()
  local dir = T.tmpdir()
  write(dir .. "/wf.yaml", FLOW)
  local s, entry = resolve.workflow(dir .. "/wf.yaml")
  T.eq(entry, "START.md")
  T.eq(s.path, dir .. "/wf.yaml")
  s, entry = resolve.workflow(dir .. "/wf.yaml/CHECK")
  T.eq(entry, "CHECK.sh")
  s, entry = resolve.workflow(dir .. "/wf.yaml/CHECK.sh")
  T.eq(entry, "CHECK.sh")
  T.has(select(2, resolve.workflow(dir .. "/wf.yaml/NOPE")), "state 'NOPE' not found")
  write(dir .. "/two.yml", "states:\n  START:\n    sh: a\n  1_START:\n    sh: b\n")
  T.has(select(2, resolve.workflow(dir .. "/two.yml")), "ambiguous entry point")
  write(dir .. "/wf.yaml", FLOW:gsub("echo checking", "echo changed"))
  s = assert(resolve.reopen(dir .. "/wf.yaml"))
  T.has(s:read("CHECK.sh"), "echo changed", "an edited file is read again on resume")
  write(dir .. "/wf.yaml", "states:\n  START:\n    sh: a\n  START:\n    sh: b\n")
  T.has(select(2, resolve.reopen(dir .. "/wf.yaml")), "wf.yaml:4: duplicate key")
  os.remove(dir .. "/wf.yaml")
  T.has(select(2, resolve.reopen(dir .. "/wf.yaml")), "wf.yaml of this run is gone")
  os.execute("rm -rf '" .. dir .. "'")
end)
