-- Tests for raymond.analyse: the static model of a workflow.

local T = require("testing")
local raymond = require("raymond")
local analyse = require("raymond.analyse")

-- A fresh folder holding `files` (name -> text); fn(dir) runs, the folder goes.
local function with_workflow(files, fn)
  local dir = T.tmpdir()
  for name, text in pairs(files) do
    if name:find("/", 1, true) then raymond.mkdir_p(dir .. "/" .. name:match("^(.*)/")) end
    T.put(dir .. "/" .. name, text)
  end
  local ok, err = xpcall(fn, debug.traceback, dir)
  os.execute("rm -rf '" .. dir .. "'")
  if not ok then error(err, 0) end
end

-- The edges of state `name` as "tag target ret next via label line" lines.
local function edges(wf, name)
  local out = {}
  for _, e in ipairs(wf.by_name[name].edges) do
    out[#out + 1] = table.concat({ e.tag, e.target or "-", e.ret or "-", e.next or "-", e.via,
      e.label or "-", tostring(e.line) }, " ")
  end
  table.sort(out)
  return out
end

T.test("a folder: path, kind, entry, states sorted by name with their kinds", function()
  with_workflow({
    ["START.md"] = "Go on.\n<goto>B</goto>\n",
    ["B.sh"] = "#!/bin/bash\necho '<result>done</result>'\n",
    ["notes.txt"] = "not a state",
  }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    T.eq(wf.path, dir, "path")
    T.eq(wf.kind, "dir", "kind")
    T.eq(wf.entry, "START.md", "entry")
    T.eq(#wf.states, 2, "states")
    T.eq(wf.states[1].name, "B.sh", "first state")
    T.eq(wf.states[1].kind, "script", "kind of B.sh")
    T.eq(wf.states[2].kind, "markdown", "kind of START.md")
    T.eq(wf.by_name["START.md"], wf.states[2], "by_name")
    T.same(edges(wf, "START.md"), { "goto B.sh - - tag - 2" })
    T.same(edges(wf, "B.sh"), { "result - - - tag done 2" })
  end)
end)

T.test("a relative path is read from cwd; a state file's folder is the workflow, the file its entry", function()
  with_workflow({ ["START.sh"] = "echo '<goto>B</goto>'\n", ["B.sh"] = "echo '<result>x</result>'\n" },
    function(dir)
      local parent, base = dir:match("^(.*)/([^/]+)$")
      local wf = assert(analyse.load(base .. "/B.sh", parent))
      T.eq(wf.path, dir, "path")
      T.eq(wf.entry, "B.sh", "entry")
    end)
end)

T.test("frontmatter: allowed_transitions, hook routes and their lines", function()
  with_workflow({
    ["1_START.md"] = table.concat({
      "---",
      "allowed_transitions:",
      "  - { tag: call, target: SUB, return: BACK.md }",
      "  - { tag: fork, target: W, next: BACK }",
      "  - { tag: result, payload: DONE }",
      "max_visits: 3",
      "on_max_visits: BACK",
      "evaluate:",
      "  prompt: yes or no? {{output}}",
      "  routes:",
      "    YES: SUB",
      "    NO: W.md",
      "  default: BACK",
      "---",
      "Work, then <call return=\"BACK\">SUB</call>.",
    }, "\n") .. "\n",
    ["SUB.md"] = "<result>r</result>\n",
    ["W.md"] = "<result>w</result>\n",
    ["BACK.md"] = "<result>b</result>\n",
  }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    local st = wf.by_name["1_START.md"]
    T.eq(st.frontmatter.max_visits, 3, "frontmatter parsed with the hooks' types")
    T.eq(st.fm_line("evaluate"), 8, "fm_line")
    T.same(edges(wf, "1_START.md"), {
      "call SUB.md BACK.md - tag - 15",
      "call SUB.md BACK.md - tag - 3",
      "fork W.md - BACK.md tag - 4",
      "goto BACK.md - - hook default 13",
      "goto BACK.md - - hook max_visits 3 7",
      "goto SUB.md - - hook YES 11",
      "goto W.md - - hook NO 12",
      "result - - - tag DONE 5",
    })
  end)
end)

T.test("a script's tags are read as echo prints them; computed names are dynamic", function()
  with_workflow({
    ["START.sh"] = table.concat({
      "#!/bin/bash",
      "# Prose mentioning a <fork> tag and a <goto> tag is not a tag.",
      "for w in a b; do echo \"<fork next=\\\"C\\\" word=\\\"$w\\\">W</fork>\"; done",
      "echo \"<goto>$NEXT</goto>\"",
    }, "\n") .. "\n",
    ["W.sh"] = "echo '<result>w</result>'\n",
    ["C.sh"] = "echo '<result>c</result>'\n",
  }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    local st = wf.by_name["START.sh"]
    T.eq(st.dynamic, true, "dynamic")
    T.eq(#st.tags, 2, "tags")
    T.eq(st.tags[1].attrs.word, "$w", "attribute read past \\\"")
    T.same(edges(wf, "START.sh"), { "fork W.sh - C.sh tag - 3", "goto - - - tag - 4" })
  end)
end)

T.test("a name that does not resolve keeps its text and resolve's message", function()
  with_workflow({ ["START.md"] = "<goto>NOPE</goto>\n<goto>X</goto>\n", ["X.md"] = "", ["X.sh"] = "" },
    function(dir)
      local wf = assert(analyse.load(dir, "/"))
      local e = wf.by_name["START.md"].edges
      T.eq(e[1].raw, "NOPE", "raw")
      T.has(e[1].error, "state 'NOPE' not found", "error")
      T.has(e[2].error, "ambiguous", "ambiguous")
    end)
end)

T.test("no entry, or two, is noted and the model still loads", function()
  with_workflow({ ["A.md"] = "x" }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    T.eq(wf.entry, nil, "entry")
    T.eq(wf.entry_error.check, "no-entry-point", "check")
  end)
  with_workflow({ ["START.md"] = "x", ["1_START.sh"] = "x" }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    T.eq(wf.entry_error.check, "ambiguous-entry-point", "check")
  end)
end)

T.test("a frontmatter that does not parse is noted; the body's tags still count", function()
  with_workflow({ ["START.md"] = "---\nmodel: [unclosed\n---\nthen <goto>B</goto>\n", ["B.md"] = "" },
    function(dir)
      local wf = assert(analyse.load(dir, "/"))
      local st = wf.by_name["START.md"]
      T.eq(st.frontmatter, nil, "frontmatter")
      T.eq(type(st.fm_error), "string", "fm_error")
      T.same(edges(wf, "START.md"), { "goto B.md - - tag - 4" })
    end)
end)

T.test("hook files load; one that does not is noted with its file", function()
  with_workflow({ ["START.sh"] = "", ["hooks.lua"] = "return { Bogus = function() end }" }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    T.eq(wf.hooks.error, nil, "error")
    T.has(wf.hooks.warnings[1].msg, "unknown event 'Bogus'", "warning")
  end)
  with_workflow({ ["START.md"] = "---\nmax_visits: 2\n---\n", ["hooks/a.lua"] = "return {" }, function(dir)
    local wf = assert(analyse.load(dir, "/"))
    T.eq(wf.hooks.error.file, dir .. "/hooks/a.lua", "file")
    T.has(wf.hooks.error.msg, "does not load", "message")
    T.eq(wf.by_name["START.md"].frontmatter.max_visits, 2, "the default hooks' fields are still typed")
  end)
end)

T.test("what is not a workflow is refused with a clear message", function()
  with_workflow({ ["notes.txt"] = "x", ["empty/.keep"] = "" }, function(dir)
    local wf, err = analyse.load(dir .. "/empty", "/")
    T.eq(wf, nil, "empty folder")
    T.has(err.msg, "is not a workflow: it holds no state file (.md or .sh)", "empty folder")
    wf, err = analyse.load(dir .. "/notes.txt", "/")
    T.eq(wf, nil, "text file")
    T.has(err.msg, "is not a workflow: it is neither a folder", "text file")
    wf, err = analyse.load("missing", dir)
    T.eq(wf, nil, "missing")
    T.has(err.msg, "workflow 'missing' does not exist", "missing")
  end)
end)
