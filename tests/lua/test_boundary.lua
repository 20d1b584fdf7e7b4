-- The C/Lua boundary under memory pressure: each function of the raymond
-- module is called with its first allocation refused, then its second, and
-- so on, until a call runs to the end without reaching the refusal.  Every
-- call must either give the right result or fail with a memory error, and
-- nothing may crash.  Under the sanitizer build, LeakSanitizer turns
-- anything a raise left unfreed into a failure.
--
-- fail_alloc(n) refuses the n-th allocation from now and returns how many
-- were left to go (0: the refusal happened).  luarun (tests/unit/luarun.c)
-- and build/tests/test_boundary (tests/unit/test_boundary.c) both provide
-- it; the second also refuses Lua's retry after its emergency collection,
-- so that a refusal surfaces as an error, and sets REFUSALS_RAISE.
local T = require("testing")
local raymond = require("raymond")

local DIR = assert(raymond.mkdtemp("ray-test-boundary-"))

local function put(path, data)
  local f = assert(io.open(path, "wb"))
  assert(f:write(data))
  assert(f:close())
end

local function is_memory_error(err)
  return type(err) == "string" and err:find("not enough memory", 1, true) ~= nil
end

-- One call with the n-th allocation refused: ok, a, b, and whether the
-- refusal happened.  The outer pcall catches a refusal that lands between
-- the inner call's end and fail_alloc(0).
local function attempt(fn, arg, n)
  local function go()
    fail_alloc(n)
    local ok, a, b = pcall(fn, arg)
    local left = fail_alloc(0)
    return ok, a, b, left
  end
  local outer, ok, a, b, left = pcall(go)
  if not outer then
    fail_alloc(0)
    return false, ok, nil, true
  end
  return ok, a, b, left == 0
end

--[[
  case = {
    run = function(arg) ... end,      the call under test; returns a, b
    setup = function() ... end,        optional: makes `arg`, unrefused
    check = function(a, b, want_a, want_b) ... end,
                                       optional: the default compares with
                                       what a first, unrefused call gave
    cleanup = function(arg) ... end,   optional: after every call
  }
]]
local function refuse_each(name, case)
  T.test(name .. ": every allocation refused in turn", function()
    local arg = case.setup and case.setup() or nil
    local want_a, want_b = case.run(arg)
    if case.cleanup then case.cleanup(arg) end
    local check = case.check or function(a, b)
      T.same(a, want_a, "first result")
      T.same(b, want_b, "second result")
    end
    local raised = 0
    for n = 1, 100000 do
      arg = case.setup and case.setup() or nil
      local ok, a, b, refused = attempt(case.run, arg, n)
      if ok then
        check(a, b, want_a, want_b)
      elseif is_memory_error(a) then
        raised = raised + 1
      else
        error(string.format("allocation %d refused: not a memory error: %s", n, tostring(a)))
      end
      if case.cleanup then case.cleanup(arg) end
      if not refused then
        T.eq(ok, true, "the call that was not refused")
        print(string.format("# %s: %d allocations, %d raised", name, n - 1, raised))
        if REFUSALS_RAISE and n > 1 then
          assert(raised > 0, "no refusal raised an error")
        end
        return
      end
    end
    error("the call never ran to the end")
  end)
end

-- Inputs.
put(DIR .. "/data.txt", string.rep("some text\n", 100))
for _, name in ipairs({ "b.md", "a.md", "c.sh", "START.md" }) do put(DIR .. "/" .. name, name) end

local FRONTMATTER = [[
---
model: sonnet
effort: high
max_turns: 12
cost_limit: 2.5
allowed_transitions:
  - { tag: goto, target: REVIEW.md }
  - { tag: call, target: SUB.md, return: NEXT.md }
  - tag: result
defaults: &d
  retries: 3
  timeout: 600
review: *d
description: |
  A state with a realistic header: lists, mappings,
  an anchor and its alias, numbers and a block scalar.
tags: [one, two, "three", 4, yes, ~]
---
# The prompt

Do the work, then answer with <goto>REVIEW.md</goto>.
]]

local NESTED = {
  run = { id = "20240101-120000-abcd", steps = 42, status = "running", t = 1700000000.25 },
  agents = {
    { id = "main", state = "START.md", stack = { { state = "A.md", vars = { x = "1" } } } },
    { id = "main_w1", state = "W.md", stack = {}, tags = { "fork", "goto" } },
  },
  data = { nested = { deeper = { deepest = { 1, 2, 3, { k = "v\n\"q\"" } } } }, [7] = "seven" },
  empty = {},
}

-- An archive: a stored zip of two files, written by hand.
local function zip_bytes(entries)
  local crc_table = {}
  for i = 0, 255 do
    local c = i
    for _ = 1, 8 do c = (c & 1 == 1) and (0xEDB88320 ~ (c >> 1)) or (c >> 1) end
    crc_table[i] = c
  end
  local function crc32(s)
    local c = 0xFFFFFFFF
    for i = 1, #s do c = crc_table[(c ~ s:byte(i)) & 0xFF] ~ (c >> 8) end
    return c ~ 0xFFFFFFFF
  end
  local locals, central, offset = {}, {}, 0
  for _, e in ipairs(entries) do
    local name, data = e[1], e[2]
    local crc = crc32(data)
    local lfh = string.pack("<I4I2I2I2I2I2I4I4I4I2I2",
      0x04034b50, 20, 0, 0, 0, 0x21, crc, #data, #data, #name, 0) .. name .. data
    central[#central + 1] = string.pack("<I4I2I2I2I2I2I2I4I4I4I2I2I2I2I2I4I4",
      0x02014b50, 20, 20, 0, 0, 0, 0x21, crc, #data, #data, #name, 0, 0, 0, 0, 0, offset) .. name
    locals[#locals + 1] = lfh
    offset = offset + #lfh
  end
  local cd = table.concat(central)
  return table.concat(locals) .. cd .. string.pack("<I4I2I2I2I2I4I4I2",
    0x06054b50, 0, 0, #entries, #entries, #cd, offset, 0)
end
local ZIP = DIR .. "/flow.zip"
put(ZIP, zip_bytes({ { "flow/START.md", FRONTMATTER }, { "flow/run.sh", "#!/bin/sh\necho hi\n" } }))

local JOURNAL = DIR .. "/state.journal"
do
  local j = assert(raymond.journal_open(JOURNAL, 4096))
  assert(j:append('{"revision":1}'))
  assert(j:append('{"revision":2,"agents":[]}'))
  j:close()
end

local function fresh_dir()
  local d = DIR .. "/fresh"
  if raymond.stat(d) then assert(raymond.rmtree(d)) end
  assert(raymond.mkdir_p(d))
  return d
end

refuse_each("read_file", { run = function() return raymond.read_file(DIR .. "/data.txt") end })
refuse_each("listdir", { run = function() return raymond.listdir(DIR) end })
refuse_each("realpath", { run = function() return raymond.realpath(DIR .. "/./data.txt") end })
refuse_each("stat", { run = function() return raymond.stat(DIR), raymond.stat(DIR .. "/data.txt") end })
refuse_each("parse_tags", {
  run = function()
    return raymond.parse_tags('text <goto x="1">B.md</goto> more <result>all done</result>')
  end,
})
refuse_each("json_encode", { run = function() return raymond.json_encode(NESTED) end })
refuse_each("json_encode error", {
  run = function() return raymond.json_encode({ a = { b = { print } } }) end,
})
refuse_each("frontmatter", {
  run = function() return raymond.frontmatter(FRONTMATTER, { max_turns = "number", cost_limit = "number" }) end,
})
refuse_each("frontmatter error", {
  run = function() return raymond.frontmatter((FRONTMATTER:gsub("effort: high", "model: again", 1))) end,
})
refuse_each("yaml", {
  run = function()
    return raymond.yaml("raymond:\n  budget: 5\n  hooks: [a.lua, b.lua]\n  x: *nothing\n" ..
      "other: &a {k: [1, 2]}\nagain: *a\n", "config.yaml")
  end,
})
refuse_each("yaml ok", {
  run = function()
    return raymond.yaml("raymond:\n  budget: 5\n  hooks: [a.lua, b.lua]\nother: &a {k: [1, 2]}\nagain: *a\n",
      "config.yaml")
  end,
  -- The lines table is keyed by the tables of this call's result.
  check = function(doc, lines, want_doc)
    T.same(doc, want_doc, "the document")
    T.eq(lines[doc.raymond].budget, 2, "the line of raymond.budget")
    T.eq(lines[doc.raymond.hooks][2], 3, "the line of hooks[2]")
    T.eq(lines[doc.again].k, 4, "an alias's copy has the lines of its anchor")
  end,
})
refuse_each("sha256_file", { run = function() return raymond.sha256_file(ZIP) end })
refuse_each("journal_read", { run = function() return raymond.journal_read(JOURNAL) end })
refuse_each("journal_open and append", {
  run = function()
    local j <close> = assert(raymond.journal_open(DIR .. "/other.journal", 4096))
    return j:append("record")
  end,
})
refuse_each("write_atomic and append_file", {
  run = function()
    assert(raymond.write_atomic(DIR .. "/atomic.txt", "whole"))
    assert(raymond.append_file(DIR .. "/atomic.txt", " and more"))
    return raymond.read_file(DIR .. "/atomic.txt")
  end,
  cleanup = function() os.remove(DIR .. "/atomic.txt.lock") end,
})
refuse_each("zip_open and read", {
  run = function()
    local z <close> = assert(raymond.zip_open(ZIP))
    local files = {}
    for k, v in pairs(z.files) do files[k] = v end
    return assert(z:read("START.md")), { sha256 = z.sha256, files = files }
  end,
})
refuse_each("zip extract", {
  setup = fresh_dir,
  run = function(dir)
    local z <close> = assert(raymond.zip_open(ZIP))
    assert(z:extract(dir))
    return raymond.listdir(dir)
  end,
})
refuse_each("mkdir_p and rmtree", {
  run = function()
    assert(raymond.mkdir_p(DIR .. "/tree/a/b/c"))
    put(DIR .. "/tree/a/b/c/file", "x")
    assert(raymond.rmtree(DIR .. "/tree"))
    return raymond.stat(DIR .. "/tree")
  end,
  cleanup = function() if raymond.stat(DIR .. "/tree") then raymond.rmtree(DIR .. "/tree") end end,
})
refuse_each("mkdtemp", {
  run = function() return raymond.mkdtemp("ray-test-boundary-t-") end,
  check = function(a) T.eq(raymond.stat(a), "dir"); assert(raymond.rmtree(a)) end,
})
refuse_each("uuid and hash", {
  run = function() return raymond.uuid(), raymond.hash("some text") end,
  check = function(a, b, _, want_b) T.eq(#a, 36); T.eq(b, want_b) end,
})
refuse_each("environ and getcwd", { run = function() return raymond.environ(), raymond.getcwd() end })
refuse_each("embedded", { run = function() return raymond.embedded("hooks/") end })
refuse_each("printable", {
  run = function() return raymond.printable(("\27[2J caf\195\169 \226\130"):rep(500)) end,
})
-- Only in luarun: tests/unit/test_boundary.c has no loop, so no bridge.
if raymond.bridge_listen then refuse_each("bridge_listen, close and exe_path", {
  run = function()
    local srv = assert(raymond.bridge_listen(DIR .. "/bridge.sock", print))
    srv:close()
    return raymond.stat(DIR .. "/bridge.sock"), raymond.exe_path()
  end,
  cleanup = function() os.remove(DIR .. "/bridge.sock") end,
}) end

assert(raymond.rmtree(DIR))
