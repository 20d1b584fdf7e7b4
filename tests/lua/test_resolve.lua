-- Tests for raymond.resolve: from target names to state files.

local T = require("testing")
local tmpdir = T.tmpdir
local raymond = require("raymond")
local resolve = require("raymond.resolve")

-- ------------------------------------------------------------ fixtures

local function touch(dir, name, text)
  local f = assert(io.open(dir .. "/" .. name, "w"))
  f:write(text or "echo '<result>x</result>'\n")
  f:close()
end

-- A fresh folder holding the given files; fn(dir) runs, the folder goes.
local function with_files(names, fn)
  local dir = tmpdir()
  for _, n in ipairs(names) do touch(dir, n) end
  local ok, err = xpcall(fn, debug.traceback, dir)
  os.execute("rm -rf '" .. dir .. "'")
  if not ok then error(err, 0) end
end

-- target(dir, name) must fail; returns the message.
local function target_err(dir, name)
  local r, err = resolve.target(dir, name)
  T.eq(r, nil, "resolve.target(" .. tostring(name) .. ") result")
  T.eq(type(err), "string", "resolve.target(" .. tostring(name) .. ") message type")
  return err
end

local function entry_err(dir)
  local r, err = resolve.entry(dir)
  T.eq(r, nil, "resolve.entry result")
  T.eq(type(err), "string", "resolve.entry message type")
  return err
end

-- ------------------------------------------------------------ target

T.test("target: NAME finds NAME.md when only the .md exists", function()
  with_files({ "PLAN.md", "OTHER.sh" }, function(dir)
    T.eq(resolve.target(dir, "PLAN"), "PLAN.md", "PLAN")
  end)
end)

T.test("target: NAME finds NAME.sh when only the .sh exists", function()
  with_files({ "BUILD.sh", "OTHER.md" }, function(dir)
    T.eq(resolve.target(dir, "BUILD"), "BUILD.sh", "BUILD")
  end)
end)

T.test("target: NAME with both NAME.md and NAME.sh is ambiguous", function()
  with_files({ "STEP.md", "STEP.sh" }, function(dir)
    local err = target_err(dir, "STEP")
    T.has(err, "ambiguous", "message")
    T.has(err, "STEP.md", "message names the .md")
    T.has(err, "STEP.sh", "message names the .sh")
    -- naming one with its extension settles it
    T.eq(resolve.target(dir, "STEP.md"), "STEP.md", "STEP.md")
    T.eq(resolve.target(dir, "STEP.sh"), "STEP.sh", "STEP.sh")
  end)
end)

T.test("target: NAME with neither is not found, listing both names", function()
  with_files({ "OTHER.sh" }, function(dir)
    local err = target_err(dir, "MISSING")
    T.has(err, "not found", "message")
    T.has(err, "MISSING.md", "message lists the .md")
    T.has(err, "MISSING.sh", "message lists the .sh")
    T.has(err, dir, "message names the folder")
  end)
end)

T.test("target: NAME is case-sensitive", function()
  with_files({ "Plan.md" }, function(dir)
    T.has(target_err(dir, "PLAN"), "not found", "PLAN vs Plan.md")
  end)
end)

T.test("target: a file without an extension is not a state", function()
  -- a bare file named NAME does not count: only NAME.md / NAME.sh do
  with_files({ "NOEXT" }, function(dir)
    T.has(target_err(dir, "NOEXT"), "not found", "NOEXT")
  end)
end)

T.test("target: a directory named NAME.sh is not a state file", function()
  with_files({}, function(dir)
    assert(raymond.mkdir_p(dir .. "/SUB.sh"))
    T.has(target_err(dir, "SUB"), "not found", "SUB")
    T.has(target_err(dir, "SUB.sh"), "not found", "SUB.sh")
  end)
end)

T.test("target: explicit NAME.md must exist", function()
  with_files({ "A.sh" }, function(dir)
    local err = target_err(dir, "A.md")
    T.has(err, "not found", "message")
    T.has(err, "'A.md'", "message names the state")
  end)
  with_files({ "A.md" }, function(dir)
    T.eq(resolve.target(dir, "A.md"), "A.md", "A.md exists")
  end)
end)

T.test("target: explicit NAME.sh must exist", function()
  with_files({ "A.md" }, function(dir)
    local err = target_err(dir, "A.sh")
    T.has(err, "not found", "message")
    T.has(err, "'A.sh'", "message names the state")
  end)
  with_files({ "A.sh" }, function(dir)
    T.eq(resolve.target(dir, "A.sh"), "A.sh", "A.sh exists")
  end)
end)

T.test("target: NAME.bat and NAME.ps1 are Windows scripts", function()
  -- an error even when the file is present: this platform cannot run it
  with_files({ "WIN.bat", "WIN.ps1" }, function(dir)
    for _, name in ipairs({ "WIN.bat", "WIN.ps1", "NOPE.bat", "NOPE.ps1" }) do
      local err = target_err(dir, name)
      T.has(err, "Windows script", name)
      T.has(err, "'" .. name .. "'", name .. " named")
      T.has(err, ".sh", name .. " suggests .sh")
    end
  end)
end)

T.test("target: path separators are rejected", function()
  with_files({ "A.sh" }, function(dir)
    assert(raymond.mkdir_p(dir .. "/sub"))
    touch(dir .. "/sub", "B.sh")
    for _, name in ipairs({ "sub/B", "sub/B.sh", "./A.sh", "../A", "/etc/passwd",
                            "sub\\B", "a\\b.sh", dir .. "/A.sh" }) do
      local err = target_err(dir, name)
      T.has(err, "path separator", name)
      T.has(err, "'" .. name .. "'", name .. " named")
    end
  end)
end)

T.test("target: '.' and '..' are not state names", function()
  with_files({ "A.sh" }, function(dir)
    for _, name in ipairs({ ".", ".." }) do
      local err = target_err(dir, name)
      T.has(err, "not a state file name", name)
    end
  end)
end)

T.test("target: empty or missing target", function()
  with_files({ "A.sh", ".md", ".sh" }, function(dir)
    T.has(target_err(dir, ""), "empty target", "empty string")
    T.has(target_err(dir, nil), "empty target", "nil")
  end)
end)

-- ------------------------------------------------------------ entry

T.test("entry: 1_START.sh alone", function()
  with_files({ "1_START.sh", "B.sh" }, function(dir)
    T.eq(resolve.entry(dir), "1_START.sh", "entry")
  end)
end)

T.test("entry: 1_START.md alone", function()
  with_files({ "1_START.md", "B.sh" }, function(dir)
    T.eq(resolve.entry(dir), "1_START.md", "entry")
  end)
end)

T.test("entry: START.sh alone", function()
  with_files({ "START.sh", "B.md" }, function(dir)
    T.eq(resolve.entry(dir), "START.sh", "entry")
  end)
end)

T.test("entry: START.md alone", function()
  with_files({ "START.md" }, function(dir)
    T.eq(resolve.entry(dir), "START.md", "entry")
  end)
end)

T.test("entry: both 1_START and START is an ambiguous entry point", function()
  with_files({ "1_START.sh", "START.md" }, function(dir)
    local err = entry_err(dir)
    T.has(err, "ambiguous entry point", "message")
    T.has(err, "1_START.sh", "names 1_START.sh")
    T.has(err, "START.md", "names START.md")
  end)
  with_files({ "1_START.md", "START.sh" }, function(dir)
    T.has(entry_err(dir), "ambiguous entry point", "md/sh mix")
  end)
end)

T.test("entry: 1_START.md and 1_START.sh are ambiguous", function()
  with_files({ "1_START.md", "1_START.sh" }, function(dir)
    local err = entry_err(dir)
    T.has(err, "ambiguous", "message")
    T.has(err, "1_START.md", "names the .md")
    T.has(err, "1_START.sh", "names the .sh")
  end)
  with_files({ "START.md", "START.sh" }, function(dir)
    local err = entry_err(dir)
    T.has(err, "ambiguous", "START.md + START.sh")
  end)
end)

T.test("entry: no entry point", function()
  with_files({ "B.sh", "start.sh", "2_START.sh", "START", "START.txt" }, function(dir)
    local err = entry_err(dir)
    T.has(err, "no entry point", "message")
    T.has(err, dir, "names the folder")
    T.has(err, "1_START.md", "lists the candidates")
    T.has(err, "START.sh", "lists the candidates")
  end)
end)

-- ------------------------------------------------------------ workflow

T.test("workflow: a folder gives a scope of its absolute path, and its entry", function()
  with_files({ "START.sh", "B.sh" }, function(dir)
    local d, e = resolve.workflow(dir)
    T.eq(d.path, dir, "folder")
    T.eq(e, "START.sh", "entry")
    -- a trailing slash and a detour through '..' change nothing
    d, e = resolve.workflow(dir .. "/")
    T.eq(d.path, dir, "folder with trailing slash")
    T.eq(e, "START.sh", "entry with trailing slash")
    assert(raymond.mkdir_p(dir .. "/sub"))
    d, e = resolve.workflow(dir .. "/sub/..")
    T.eq(d.path, dir, "folder via sub/..")
    T.eq(e, "START.sh", "entry via sub/..")
  end)
end)

T.test("workflow: a relative folder becomes absolute", function()
  with_files({ "1_START.md" }, function(dir)
    local cwd = assert(raymond.getcwd())
    local ups = select(2, cwd:gsub("/[^/]+", ""))
    local rel = string.rep("../", ups) .. dir:sub(2)
    local d, e = resolve.workflow(rel)
    T.eq(d.path, dir, "folder from " .. rel)
    T.eq(e, "1_START.md", "entry")
  end)
end)

T.test("workflow: a .sh file gives its folder and its name", function()
  with_files({ "START.sh", "STEP.sh" }, function(dir)
    local d, e = resolve.workflow(dir .. "/STEP.sh")
    T.eq(d.path, dir, "folder")
    T.eq(e, "STEP.sh", "state")
  end)
end)

T.test("workflow: a .md file gives its folder and its name", function()
  -- no entry point is needed when the state is named
  with_files({ "PLAN.md" }, function(dir)
    local d, e = resolve.workflow(dir .. "/PLAN.md")
    T.eq(d.path, dir, "folder")
    T.eq(e, "PLAN.md", "state")
  end)
end)

T.test("workflow: a missing path", function()
  with_files({ "START.sh" }, function(dir)
    local d, err = resolve.workflow(dir .. "/nope")
    T.eq(d, nil, "result")
    T.has(err, "does not exist", "message")
    T.has(err, dir .. "/nope", "names the path")
    d, err = resolve.workflow(dir .. "/nope.sh")
    T.eq(d, nil, "result for nope.sh")
    T.has(err, "does not exist", "message for nope.sh")
  end)
end)

T.test("workflow: a file that is not a state", function()
  with_files({ "START.sh", "notes.txt", "README", "RUN.bat" }, function(dir)
    for _, name in ipairs({ "notes.txt", "README", "RUN.bat" }) do
      local d, err = resolve.workflow(dir .. "/" .. name)
      T.eq(d, nil, name .. " result")
      T.has(err, "neither a folder, a .zip archive nor a state file", name)
      T.has(err, name, name .. " named")
    end
  end)
end)

T.test("workflow: a folder without an entry point", function()
  with_files({ "B.sh" }, function(dir)
    local d, err = resolve.workflow(dir)
    T.eq(d, nil, "result")
    T.has(err, "no entry point", "message")
  end)
end)

T.test("workflow: a folder with an ambiguous entry point", function()
  with_files({ "START.sh", "START.md" }, function(dir)
    local d, err = resolve.workflow(dir)
    T.eq(d, nil, "result")
    T.has(err, "ambiguous", "message")
  end)
end)

-- ------------------------------------------------------------ kind

T.test("kind: .md is markdown, .sh is script, anything else nil", function()
  T.eq(resolve.kind("PLAN.md"), "markdown", "PLAN.md")
  T.eq(resolve.kind("BUILD.sh"), "script", "BUILD.sh")
  T.eq(resolve.kind("a.b.sh"), "script", "a.b.sh")
  T.eq(resolve.kind("x.sh.md"), "markdown", "x.sh.md")
  T.eq(resolve.kind("RUN.bat"), nil, "RUN.bat")
  T.eq(resolve.kind("RUN.ps1"), nil, "RUN.ps1")
  T.eq(resolve.kind("notes.txt"), nil, "notes.txt")
  T.eq(resolve.kind("PLAN"), nil, "PLAN")
  T.eq(resolve.kind("md"), nil, "md")
  T.eq(resolve.kind("PLAN.md.bak"), nil, "PLAN.md.bak")
end)
