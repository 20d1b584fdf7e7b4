-- Differential test of src/lua_strlib.c, run by tests/unit/test_strlib.c:
-- `string` holds raymond's find, match, gmatch, gsub and rep, `lua_string`
-- Lua's own.  Every call is made on both, in protected mode, and the
-- results (or the error messages) must be the same.  Prints PASS/FAIL
-- lines; a BENCH line compares the speed of both on the engine's kind of
-- patterns.

local ours, theirs = string, lua_string
local failures = 0

local function show(v)
  if type(v) == "string" then return string.format("%q", v) end
  return tostring(v)
end

local function pack(ok, ...)
  local t = { ok = ok, n = select("#", ...), ... }
  if not ok then
    -- The function's name in an argument error is found differently for
    -- functions that are not in the string table; the rest must agree.
    t[1] = tostring(t[1]):gsub("to '[^']*'", "to '?'")
  end
  return t
end

local function render(t)
  local out = {}
  for i = 1, t.n do out[i] = show(t[i]) end
  return (t.ok and "ok " or "error ") .. table.concat(out, ", ")
end

local checked = 0
local function same(what, a, b)
  checked = checked + 1
  local ra, rb = render(a), render(b)
  if ra ~= rb then
    failures = failures + 1
    if failures <= 20 then
      print(string.format("FAIL %s:\n    raymond: %s\n    lua:     %s", what, ra, rb))
    end
  end
end

-- gmatch results as one list of lists.
local function gmatch_all(lib, s, p, init)
  local all = {}
  for a, b, c in lib.gmatch(s, p, init) do
    all[#all + 1] = show(a) .. "," .. show(b) .. "," .. show(c)
    if #all > 100 then break end
  end
  return table.concat(all, ";")
end

local function repl_fn(a, b)
  if a == "b" then return false end
  if type(a) == "number" then return a * 2 end
  if a == "c" then return {} end
  return "<" .. tostring(a) .. "|" .. tostring(b) .. ">"
end
local repl_table = { a = "A", b = false, ab = 1, c = {}, [1] = "one" }

local function compare(s, p, init, extra)
  local tag = string.format("s=%s p=%s init=%s", show(s), show(p), tostring(init))
  same("find " .. tag, pack(pcall(ours.find, s, p, init)), pack(pcall(theirs.find, s, p, init)))
  same("find plain " .. tag, pack(pcall(ours.find, s, p, init, true)),
    pack(pcall(theirs.find, s, p, init, true)))
  same("match " .. tag, pack(pcall(ours.match, s, p, init)), pack(pcall(theirs.match, s, p, init)))
  same("gmatch " .. tag, pack(pcall(gmatch_all, ours, s, p, init)),
    pack(pcall(gmatch_all, theirs, s, p, init)))
  for _, r in ipairs(extra) do
    local n = init and init % 4 or nil
    same("gsub " .. tag .. " r=" .. show(r) .. " n=" .. tostring(n),
      pack(pcall(ours.gsub, s, p, r, n)), pack(pcall(theirs.gsub, s, p, r, n)))
  end
end

-- ---- generated patterns -------------------------------------------------

local seed = tonumber(os.getenv("STRLIB_SEED") or "") or 20261122
math.randomseed(seed)
local R = math.random

local function pick(t) return t[R(#t)] end

local literals = { "a", "b", "c", "a", "b", " ", "1", "x", "-", "^", "$", "]", "\0" }
local classes = { "%a", "%A", "%c", "%d", "%D", "%g", "%l", "%L", "%p", "%P", "%s", "%S",
  "%u", "%U", "%w", "%W", "%x", "%X", "%.", "%%", "%(", "%)", "%[", "%]", "%-", "%z", "%Z" }
local sets = { "[abc]", "[^ab]", "[a-c]", "[%d_]", "[]]", "[^]]", "[a-]", "[-a]", "[%a%d]",
  "[^%s]", "[%]]", "[b-a]", "[.]", "[^%w%-]", "[%^a]", "[a%-c]" }

local function atom(depth)
  local k = R(100)
  if k <= 30 then return pick(literals) end
  if k <= 45 then return "." end
  if k <= 60 then return pick(classes) end
  if k <= 72 then return pick(sets) end
  if k <= 76 then return "%b" .. pick({ "()", "ab", "aa", "[]" }) end
  if k <= 80 then return "%f" .. pick(sets) end
  if k <= 84 then return "%" .. R(0, 3) end
  if k <= 88 then return "()" end
  if depth < 3 then
    local inner = {}
    for i = 1, R(0, 3) do inner[i] = atom(depth + 1) end
    return "(" .. table.concat(inner) .. ")"
  end
  return pick(literals)
end

local quantifiers = { "", "", "", "*", "+", "-", "?" }

local function pattern()
  local parts = {}
  if R(4) == 1 then parts[1] = "^" end
  for _ = 1, R(0, 5) do
    local a = atom(0)
    if a:sub(1, 1) ~= "(" and a:sub(1, 2) ~= "%b" and a:sub(1, 2) ~= "%f"
      and not a:match("^%%%d$") then
      a = a .. pick(quantifiers)
    end
    parts[#parts + 1] = a
  end
  if R(4) == 1 then parts[#parts + 1] = "$" end
  return table.concat(parts)
end

-- Raw patterns from the special characters alone: mostly malformed.
local raw_chars = { "%", "[", "]", "(", ")", "^", "$", "*", "+", "-", "?", ".", "a", "b", "f" }
local function raw_pattern()
  local t = {}
  for i = 1, R(0, 6) do t[i] = pick(raw_chars) end
  return table.concat(t)
end

local subject_chars = { "a", "b", "c", "a", "b", "(", ")", "[", "]", " ", "1", "2", "x", "A",
  "Z", "%", "-", ".", "\0", "\n", "\255", "_", "^", "$" }
local function subject()
  local t = {}
  for i = 1, R(0, 12) do t[i] = pick(subject_chars) end
  return table.concat(t)
end

local replacements = { "x", "%0", "%1", "%2", "[%1|%0]", "%%", "%", "%a", "", "%3", 7, repl_fn,
  repl_table }
local inits = { nil, 1, 2, -1, -3, 0, 5, 20, -20 }

for _ = 1, 6000 do
  local p = R(5) == 1 and raw_pattern() or pattern()
  local s = subject()
  local extra = { pick(replacements), pick(replacements) }
  compare(s, p, inits[R(#inits)], extra)
end

-- ---- hand-picked edge cases ---------------------------------------------

local hand = {
  { "hello world", "o w" }, { "hello", "l+" }, { "hello", "^h" }, { "hello", "o$" },
  { "hello", "" }, { "", "" }, { "", "a*" }, { "abc", "$" }, { "abc", "^$" },
  { "a$b", "a$b" }, { "a^b", "a^b" }, { "x^", "^^" },
  { "THE (quick) fox", "%((%a+)%)" }, { "f(a(b)c)d", "%b()" }, { "f(a(b", "%b()" },
  { "THE (quick) fox", "%f[%a]%a+" }, { "hello", "%f[%l]" }, { "hello", "%f[%z]" },
  { "hello", "%f[^%l]" }, { "aXb", "%f[%u]." },
  { "hello", "()ll()" }, { "hello", "(l)(l)" }, { "abcabc", "(abc)%1" },
  { "abab", "(a)(b)%2" }, { "aa", "(a)%1" }, { "aa", "()%1" },
  { "x", "%" }, { "x", "[a" }, { "x", "[a%" }, { "x", "[]" }, { "x", "[^]" }, { "x", "(" },
  { "x", ")" }, { "x", "%b" }, { "x", "%ba" }, { "x", "%f" }, { "x", "%fa" }, { "x", "%1" },
  { "x", "(x)%2" }, { "x", "%0" }, { "x", "(()" }, { "x", "x)" },
  { "key = value", "^(%w+)%s*=%s*(%w+)$" }, { "  trim  ", "^%s*(.-)%s*$" },
  { "a.b.c", "%." }, { "a.b.c", "." }, { "a+b", "a+b" }, { "a+b", "a%+b" },
  { "\0a\0", "%z" }, { "\0a\0", "\0" }, { "\0a\0", "[\0]" }, { "\0a\0", "[^\0]" },
  { "\0a\0", "%Z+" }, { "é", "%a" }, { "\255", "[\200-\255]" },
  { "[x]", "[[]" }, { "[x]", "[]]" }, { "[x]", "[%]]" }, { "a-b", "[a-]" },
  { "aaa", "a-b" }, { "aaab", "a-b" }, { "aaab", "a*b" }, { "aaab", "a?b" }, { "b", "a?b" },
  { "ab", "a?a?a?ab" },
  { string.rep("a", 300), string.rep("a?", 300) },
  { string.rep("a", 100), string.rep("(a)", 33) },
  { string.rep("a", 100), string.rep("(a)", 32) },
  { string.rep("(", 300) .. string.rep(")", 300), "%b()" },
  { "one two  three", "%S+" }, { "k1=v1, k2=v2", "(%w+)=(%w+)" },
  { "line1\nline2\n", "[^\n]*" }, { "abc", ".-" }, { "abc", "()" },
}
for _, c in ipairs(hand) do
  for _, init in ipairs({ 1, 2, -2 }) do
    compare(c[1], c[2], init, replacements)
  end
  compare(c[1], c[2], nil, replacements)
end

-- Argument errors and odd arguments.
local odd = {
  { "find", { nil, "a" } }, { "find", { "a", nil } }, { "find", { "a", "a", "x" } },
  { "find", { 12345, 3 } }, { "match", { 1.5, "%." } }, { "gsub", { "abc", "b" } },
  { "gsub", { "abc", "b", true } }, { "gsub", { "abc", "b", "x", "y" } },
  { "gsub", { "abc", "", "-" } }, { "gsub", { "abc", "b*", "-" } }, { "gsub", { "abc", "^", "-" } },
  { "gsub", { "abc", "%w", "%" } }, { "gsub", { "abc", "%w", "%9" } },
  { "gsub", { "abc", "(%w)", "%2" } }, { "gsub", { "abc", "()", "%1" } },
  { "gsub", { "hello world", "(%w+)", "%1 %1", 1 } }, { "gsub", { "abc", "%w", "x", 0 } },
  { "gsub", { "abc", "%w", "x", -1 } }, { "gsub", { "abc", "%w", "x", 2.0 } },
  { "gsub", { "abc", "%w", "x", 2.5 } },
  { "rep", { "ab", 3 } }, { "rep", { "ab", 3, "," } }, { "rep", { "ab", 0 } },
  { "rep", { "ab", -1, "," } }, { "rep", { "", 5 } }, { "rep", { "", 5, "" } },
  { "rep", { "x", 1, "," } }, { "rep", { "x" } }, { "rep", { "x", 2.5 } },
  { "rep", { "x", math.maxinteger } },
  { "gmatch", { "abc" } },
}
for _, c in ipairs(odd) do
  local name, a = c[1], c[2]
  local function call(lib)
    if name == "gmatch" then return pcall(function() return lib.gmatch(a[1], a[2])() end) end
    return pcall(lib[name], a[1], a[2], a[3], a[4])
  end
  local ra, rb = pack(call(ours)), pack(call(theirs))
  if name == "rep" and not ra.ok then
    -- Ours says more about the cap; the start is Lua's message.
    ra[1] = ra[1]:gsub(" %(string%.rep makes at most %d+ MiB%)", "")
  end
  same(name .. " " .. show(a[1]) .. " " .. show(a[2]) .. " " .. show(a[3]) .. " " .. show(a[4]), ra, rb)
end

-- Method calls go through the string metatable to the same table.
same("method call", pack(pcall(function() return ("a,b"):find(",", 1, true) end)),
  pack(true, 2, 2))
assert(("x"):find("x") and string.find == ours.find)

-- A gmatch iterator keeps working after its strings are collected.
do
  local it = ours.gmatch(string.rep("ab", 10), "(a)(b)")
  collectgarbage()
  local n = 0
  for _ in it do n = n + 1 end
  same("gmatch survives a collection", pack(true, n), pack(true, 10))
end

-- string.rep: the cap.
do
  local ok, err = pcall(ours.rep, "x", 64 * 1024 * 1024 + 1)
  same("rep over the cap", pack(ok, (tostring(err):gsub("^.-resulting", "resulting"))),
    pack(false, "resulting string too large (string.rep makes at most 64 MiB)"))
  same("rep at the cap", pack(true, #ours.rep("x", 64 * 1024 * 1024)), pack(true, 64 * 1024 * 1024))
  -- Lua's own loops n times even when there is nothing to copy.
  same("rep of nothing, many times", pack(pcall(ours.rep, "", math.maxinteger)), pack(true, ""))
  same("rep with separator over the cap", pack(pcall(ours.rep, "ab", 32 * 1024 * 1024, ",")),
    pack(false, "resulting string too large (string.rep makes at most 64 MiB)"))
end

if failures == 0 then
  print(string.format("PASS strlib matches Lua's on %d calls (seed %d)", checked, seed))
else
  print(string.format("FAIL strlib: %d of %d calls differ (seed %d)", failures, checked, seed))
end

-- ---- speed --------------------------------------------------------------

-- Patterns of the kind the engine uses, on lines of the kind it reads.
local lines = {}
for i = 1, 200 do
  lines[i] = string.format('{"type":"assistant","session_id":"s%d","text":"line %d of the output, '
    .. 'with some words and <goto>NEXT_%d</goto> at the end"}', i, i, i)
end
local function workload(lib)
  local n = 0
  for _, l in ipairs(lines) do
    if lib.find(l, "<goto>", 1, true) then n = n + 1 end
    if lib.match(l, '"session_id":"([^"]*)"') then n = n + 1 end
    if lib.match(l, "^%s*(.-)%s*$") then n = n + 1 end
    n = n + select(2, lib.gsub(l, "%s+", " "))
    for w in lib.gmatch(l, "%a+") do n = n + #w end
    if lib.find(l, "%f[%w]goto%f[%W]") then n = n + 1 end
    if lib.match(l, "^(%w+)%.lua$") then n = n + 1 end
  end
  return n
end
local function time(lib)
  local best = math.huge
  for _ = 1, 5 do
    local t0 = os.clock()
    for _ = 1, 20 do workload(lib) end
    best = math.min(best, os.clock() - t0)
  end
  return best
end
same("workload gives the same", pack(true, workload(ours)), pack(true, workload(theirs)))
local to, tt = time(ours), time(theirs)
print(string.format("BENCH strlib %.2f ms, Lua's %.2f ms, ratio %.2f", to * 1e3, tt * 1e3, to / tt))
if failures > 0 then error(failures .. " differences") end
