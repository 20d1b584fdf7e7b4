-- raymond.frontmatter: YAML between `---` lines, read as the strings the
-- author wrote except where the field types say number or boolean (see
-- src/frontmatter.h), with errors that name the line of the file.
local T = require("testing")
local raymond = require("raymond")
local same = T.same

local function fm(text, types)
  local meta, body = raymond.frontmatter(text, types)
  if meta == nil then error("unexpected error: " .. tostring(body), 2) end
  return meta, body
end

-- The error for `text`; fails the test if there is none.
local function fm_err(text)
  local meta, err = raymond.frontmatter(text)
  if meta ~= nil then error("expected an error, got a " .. type(meta), 2) end
  return err
end

T.test("a file without frontmatter is all body", function()
  local text = "# Title\n\nSome prompt.\n---\nnot: frontmatter\n---\n"
  local meta, body = fm(text)
  same(meta, {}, "meta")
  T.eq(body, text, "body")
  meta, body = fm("")
  same(meta, {}, "empty file meta")
  T.eq(body, "", "empty file body")
  -- The first line must be exactly the fence.
  meta, body = fm("----\na: 1\n---\nx")
  same(meta, {}, "four dashes")
  T.eq(body, "----\na: 1\n---\nx", "four dashes body")
  meta, body = fm(" ---\na: 1\n---\nx")
  same(meta, {}, "indented fence")
end)

T.test("empty frontmatter gives an empty table", function()
  local meta, body = fm("---\n---\nbody\n")
  same(meta, {}, "nothing between")
  T.eq(body, "body\n")
  meta, body = fm("---\n# only a comment\n\n---\nbody")
  same(meta, {}, "comments and blanks")
  T.eq(body, "body")
  meta = fm("---\n~\n---\n")
  same(meta, {}, "a null document")
end)

T.test("the body starts right after the closing line", function()
  local meta, body = fm("---\nmodel: sonnet\n---\n\nHello\n---\nmore\n")
  same(meta, { model = "sonnet" })
  T.eq(body, "\nHello\n---\nmore\n", "blank first line and later fences kept")
  meta, body = fm("---\nmodel: sonnet\n---")
  same(meta, { model = "sonnet" }, "closing fence without newline")
  T.eq(body, "", "body at end of file")
  meta, body = fm("---  \t\nmodel: x\n--- \t\nbody")
  same(meta, { model = "x" }, "fences with trailing blanks")
  T.eq(body, "body")
  meta, body = fm("\239\187\191---\nmodel: x\n---\nbody")
  same(meta, { model = "x" }, "after a byte order mark")
  T.eq(body, "body")
end)

T.test("a CRLF file parses and its body keeps its CRLFs", function()
  local text = "---\r\nmodel: sonnet\r\ntimeout: 30\r\nlist:\r\n  - a\r\n  - b\r\n---\r\nLine 1\r\nLine 2\r\n"
  local meta, body = fm(text, { timeout = "number" })
  same(meta, { model = "sonnet", timeout = 30, list = { "a", "b" } })
  T.eq(math.type(meta.timeout), "integer", "timeout type")
  T.eq(body, "Line 1\r\nLine 2\r\n", "body")
  local err = fm_err("---\r\na: 1\r\nb: [\r\n---\r\n")
  T.has(err, "frontmatter line 4:", "error line in a CRLF file")
end)

T.test("flow and block allowed_transitions give the same tables", function()
  local flow = fm("---\nallowed_transitions: [{tag: goto, target: A.md}, {tag: result}]\n---\n")
  local block = fm([[
---
allowed_transitions:
  - tag: goto
    target: A.md
  - tag: result
---
]])
  local want = { allowed_transitions = { { tag = "goto", target = "A.md" }, { tag = "result" } } }
  same(flow, want, "flow")
  same(block, want, "block")
  T.eq(#block.allowed_transitions, 2, "a dense list")
end)

-- The field types of the plain-scalar tests: every field that is typed.
local TYPES = {
  force_implicit = "boolean", quoted = "boolean", single = "boolean", yes_ = "boolean", off_ = "boolean",
  timeout = "number", negative = "number", plus = "number", budget = "number", exp = "number",
  quoted_num = "number", version = "number", hex = "number", inf = "number", huge = "number",
  word = "number", flag = "boolean", nothing = "number", empty = "boolean", null_word = "number",
  tagged = "number",
}

T.test("plain scalars of number and boolean fields are typed, quoted ones stay strings", function()
  local meta = fm([[
---
force_implicit: true
quoted: "true"
single: 'false'
yes_: Yes
off_: OFF
timeout: 30
negative: -7
plus: +5
budget: 0.5
exp: 1e3
quoted_num: "30"
version: 1.2.3
hex: 0x1F
inf: .inf
huge: 99999999999999999999
word: soon
flag: 1
nothing: ~
empty:
null_word: NULL
quoted_null: "null"
text: hello world
literal: |
  line 1
  line 2
tagged: !!str 42
---
]], TYPES)
  T.eq(meta.force_implicit, true, "true")
  T.eq(meta.quoted, "true", "double-quoted")
  T.eq(meta.single, "false", "single-quoted")
  T.eq(meta.yes_, true, "Yes")
  T.eq(meta.off_, false, "OFF")
  T.eq(meta.timeout, 30)
  T.eq(math.type(meta.timeout), "integer", "timeout type")
  T.eq(meta.negative, -7)
  T.eq(math.type(meta.plus), "integer", "+5 type")
  T.eq(meta.plus, 5)
  T.eq(meta.budget, 0.5)
  T.eq(math.type(meta.budget), "float", "budget type")
  T.eq(meta.exp, 1000.0)
  T.eq(math.type(meta.exp), "float", "exponent type")
  T.eq(meta.quoted_num, "30", "quoted number")
  T.eq(meta.version, "1.2.3", "not a number")
  T.eq(meta.hex, "0x1F", "only decimal numbers")
  T.eq(meta.inf, ".inf", "no infinities")
  T.eq(math.type(meta.huge), "float", "too big for an integer")
  T.eq(meta.word, "soon", "a number field's word stays a string, for the caller to refuse")
  T.eq(meta.flag, "1", "a boolean field's number stays a string")
  T.eq(meta.nothing, nil, "~ leaves the key out")
  T.eq(meta.empty, nil, "an empty value leaves the key out")
  T.eq(meta.null_word, nil, "NULL")
  T.eq(meta.quoted_null, "null", "quoted null")
  T.eq(meta.text, "hello world")
  T.eq(meta.literal, "line 1\nline 2\n", "literal block")
  T.eq(meta.tagged, "42", "!!str keeps a string")
  local keys = 0
  for _ in pairs(meta) do keys = keys + 1 end
  T.eq(keys, 21, "24 fields, 3 of them null")
end)

T.test("every other value is the string the author wrote", function()
  local meta = fm([[
---
allowed_transitions:
  - {tag: goto, target: 007}
  - {tag: result, payload: yes}
  - {tag: result, payload: off}
  - {tag: goto, target: 1.0}
model: 3
on_max_visits: no
max_visits: 3
list: [on, 1e3, true]
---
]], { allowed_transitions = "list", model = "string", on_max_visits = "string", max_visits = "number" })
  same(meta.allowed_transitions, {
    { tag = "goto", target = "007" }, { tag = "result", payload = "yes" },
    { tag = "result", payload = "off" }, { tag = "goto", target = "1.0" },
  })
  T.eq(meta.model, "3", "a string field")
  T.eq(meta.on_max_visits, "no", "a hook's string field")
  T.eq(meta.max_visits, 3, "a hook's number field")
  same(meta.list, { "on", "1e3", "true" }, "an undeclared field")
  same(fm("---\ntimeout: 30\nflag: yes\n---\n"), { timeout = "30", flag = "yes" }, "no types: all strings")
  meta = fm("---\nn: &n 30\ntimeout: *n\n---\n", { timeout = "number" })
  same(meta, { n = "30", timeout = 30 }, "an alias takes the type of the field it stands in")
end)

T.test("null elements keep a list dense", function()
  local meta = fm("---\nlist: [a, ~, '', null, 3]\n---\n")
  same(meta.list, { "a", "", "", "", "3" })
  T.eq(#meta.list, 5, "length")
end)

T.test("nested mappings and keys that look typed", function()
  local meta = fm([[
---
outer:
  inner:
    deep: {x: 1, y: [true, "no"]}
  sibling: value
1: one
true: yes
---
]])
  same(meta, {
    outer = { inner = { deep = { x = "1", y = { "true", "no" } } }, sibling = "value" },
    ["1"] = "one",
    ["true"] = "yes",
  })
end)

T.test("aliases copy their anchored value", function()
  local meta = fm([[
---
base: &b {tag: goto, target: A.md}
list: [*b, *b]
name: &n hello
again: *n
gone: &z ~
still_gone: *z
in_list: [*z]
---
]])
  same(meta.list, { { tag = "goto", target = "A.md" }, { tag = "goto", target = "A.md" } })
  T.eq(meta.again, "hello")
  T.eq(meta.still_gone, nil, "alias to null")
  same(meta.in_list, { "" }, "alias to null in a list")
  -- Copies, not shared tables.
  T.eq(meta.list[1] ~= meta.list[2] and meta.list[1] ~= meta.base, true, "distinct tables")
  local err = fm_err("---\na: *nowhere\n---\n")
  T.has(err, "frontmatter line 2: alias *nowhere has no anchor", "unknown alias")
  err = fm_err("---\na: &s [1, *s]\n---\n")
  T.has(err, "alias *s has no anchor", "a node cannot contain itself")
end)

T.test("unknown fields come through untouched", function()
  local meta = fm("---\nmodel: opus\nx-custom: {a: [1, 2]}\n'<<': merge\nWeird Key: v\n---\n")
  same(meta, { model = "opus", ["x-custom"] = { a = { "1", "2" } }, ["<<"] = "merge", ["Weird Key"] = "v" })
end)

T.test("syntax errors name the line of the file", function()
  -- File line 5 is indented less than the list item above it.
  local err = fm_err("---\nname: x\nlist:\n  - a\n - b\n---\n")
  T.has(err, "frontmatter line 5: did not find expected key", "bad indentation")
  -- File line 4 is indented under a field that already has a value.
  err = fm_err("---\nmodel: sonnet\nfoo: 1\n  bar: 2\n---\n")
  T.eq(err, "frontmatter line 4: mapping values are not allowed in this context", "exact message")
  err = fm_err("---\na: 1\nb: [1, 2\nc: 3\n---\n")
  T.has(err, "frontmatter line 4: did not find expected ',' or ']'", "unclosed flow list")
  T.has(err, "while parsing a flow sequence at line 3", "context")
  err = fm_err("---\na: 1\n\tb: 2\n---\n")
  T.has(err, "frontmatter line 3:", "tab indentation")
  err = fm_err("---\na: 1\nb: \255\n---\n")
  T.has(err, "frontmatter line 3: invalid leading UTF-8 octet", "invalid UTF-8")
end)

T.test("unclosed frontmatter is an error", function()
  local err = fm_err("---\nmodel: sonnet\n\nThe prompt.\n")
  T.has(err, "frontmatter is not closed", "message")
  err = fm_err("---")
  T.has(err, "frontmatter is not closed", "a lone fence")
  err = fm_err("---\nmodel: x\n----\n")
  T.has(err, "frontmatter is not closed", "four dashes do not close")
end)

T.test("the top level must be a mapping", function()
  local err = fm_err("---\n- a\n- b\n---\n")
  T.has(err, "frontmatter must be a mapping of field: value", "list")
  T.has(err, "line 2 starts a list", "list line")
  err = fm_err("---\n\njust text\n---\n")
  T.has(err, "frontmatter must be a mapping of field: value", "scalar")
  T.has(err, "line 3", "scalar line")
  err = fm_err("---\n\"true\"\n---\n")
  T.has(err, "frontmatter must be a mapping of field: value", "quoted scalar")
end)

T.test("duplicate keys are errors naming the key and both lines", function()
  local err = fm_err("---\nmodel: a\ntimeout: 3\nmodel: b\n---\n")
  T.eq(err, "frontmatter line 4: duplicate key 'model' (first on line 2)")
  err = fm_err("---\nmodel: ~\nmodel: b\n---\n")
  T.has(err, "frontmatter line 3: duplicate key 'model'", "after a null value")
  err = fm_err("---\nlist: [{tag: goto, tag: reset}]\n---\n")
  T.has(err, "frontmatter line 2: duplicate key 'tag'", "in a flow mapping")
  -- The same key in different mappings is fine.
  local meta = fm("---\na: {x: 1}\nb: {x: 2}\n---\n")
  same(meta, { a = { x = "1" }, b = { x = "2" } })
end)

T.test("other structural errors", function()
  local err = fm_err("---\n? [a, b]\n: 1\n---\n")
  T.has(err, "frontmatter line 2: a key must be a single value", "complex key")
  err = fm_err("---\na: 1\n...\n--- b: 2\n---\n")
  T.has(err, "frontmatter line 4: the frontmatter must be a single YAML document", "two documents")
end)

T.test("nesting is limited to 64 levels", function()
  -- The top-level mapping is one level, so 63 lists fit inside it.
  local meta = fm("---\na: " .. string.rep("[", 63) .. "1" .. string.rep("]", 63) .. "\n---\n")
  local v, depth = meta.a, 1
  while type(v) == "table" do v, depth = v[1], depth + 1 end
  T.eq(depth, 64, "levels read")
  T.eq(v, "1", "innermost value")
  local err = fm_err("---\na: " .. string.rep("[", 64) .. "1" .. string.rep("]", 64) .. "\n---\n")
  T.has(err, "frontmatter line 2: nesting is deeper than 64 levels", "65 levels")
  -- Aliases can nest deeper than the text does.
  local inner = string.rep("[", 40) .. string.rep("]", 40)
  err = fm_err("---\na: &x " .. inner .. "\nb: " .. string.rep("[", 30) .. "*x" .. string.rep("]", 30) .. "\n---\n")
  T.has(err, "nesting is deeper than 64 levels", "through an alias")
  -- Deep input does not exhaust anything either.
  err = fm_err("---\na: " .. string.rep("[", 100000) .. "\n---\n")
  T.has(err, "nesting is deeper than 64 levels", "very deep")
end)

T.test("a billion laughs is rejected quickly", function()
  local lines = { "---", "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]" }
  for i = 2, 9 do
    local prev = string.char(96 + i - 1)
    local name = string.char(96 + i)
    local refs = {}
    for j = 1, 9 do refs[j] = "*" .. prev end
    lines[#lines + 1] = name .. ": &" .. name .. " [" .. table.concat(refs, ", ") .. "]"
  end
  lines[#lines + 1] = "---"
  local t0 = os.clock()
  local err = fm_err(table.concat(lines, "\n") .. "\n")
  T.has(err, "frontmatter is too large", "message")
  -- Expanded, it would take minutes; refused, well under a second (of
  -- processor time, with room for a sanitized build).
  T.eq(os.clock() - t0 < 10, true, "refused before expanding")
  -- A few aliases well under the limit are fine.
  local meta = fm("---\na: &a [1, 2, 3]\nb: &b [*a, *a, *a]\nc: [*b, *b]\n---\n")
  T.eq(meta.c[2][3][3], "3", "expanded")
end)

T.test("misuse raises", function()
  local ok, err = pcall(raymond.frontmatter)
  T.eq(ok, false, "no argument")
  T.has(err, "string expected", "message")
end)

T.test("errors name the file's lines even when the YAML holds lone CRs", function()
  -- libyaml takes a CR without LF as a line break too; the file's lines
  -- are counted by LF, so the error is on line 2 or the closing line 3.
  local meta, err = raymond.frontmatter("---\nmodel: a\rb: c\rx: [1\n---\nbody\n")
  T.eq(meta, nil, "parsed")
  T.has(err, "frontmatter line 3:", "line")
  T.has(err, "at line 2)", "context line")
end)

-- Each key's line is looked up once, so reading is linear in the size of
-- the document.  A rescan from the top for each key made it quadratic:
-- some 8 s for 32768 keys and 17 s for the 49152 here, against well under
-- a second now (about 0.05 s; 0.7 s with the sanitizers).  The time is
-- processor time, which other processes on a busy machine do not stretch,
-- and the ceiling is wide so a slow machine still passes, and the
-- quadratic reader still fails.
T.test("49152 keys read in linear time, and a late error names its line", function()
  local lines = { "---" }
  for i = 1, 49152 do lines[#lines + 1] = string.format("key%05d: value %d", i, i) end
  local t0 = os.clock()
  local meta, body = fm(table.concat(lines, "\n") .. "\n---\nbody\n")
  local took = os.clock() - t0
  T.eq(meta.key00001, "value 1")
  T.eq(meta.key49152, "value 49152")
  T.eq(body, "body\n")
  print(string.format("# 49152 keys: %.3f s", took))
  assert(took < 5, string.format("49152 keys took %.2f s", took))

  lines[#lines + 1] = "key00001: again"
  local err = fm_err(table.concat(lines, "\n") .. "\n---\n")
  T.eq(err, "frontmatter line 49154: duplicate key 'key00001' (first on line 2)")
end)
