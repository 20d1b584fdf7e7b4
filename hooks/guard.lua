-- Tool rules from frontmatter, without writing Lua:
--
--   ---
--   deny_commands: ["git push*", "rm -rf *"]  # these Bash commands are refused
--   allow_commands: ["make *", "git status"]  # only these Bash commands run
--   protect_paths: [".env", "secrets/**"]     # Edit, Write, MultiEdit and
--                                             # NotebookEdit refused here
--   ---
--
-- A refused tool call does not run; the model reads why and the turn goes
-- on.  docs/hooks.md has the pattern language.  These rules catch
-- mistakes: they read a command line as the shell would split it, but
-- `eval`, `sh -c "..."`, an alias or a script written and then run can get
-- round a deny list, so they are no sandbox.  An allow list is the
-- stronger form: `sh -c`, `sudo make` or `PATH=/tmp make` is refused unless
-- a pattern names it.

local trim = raymond.trim

local FIELDS = { "deny_commands", "allow_commands", "protect_paths" }
local PATH_TOOLS = { Edit = "file_path", Write = "file_path", MultiEdit = "file_path",
                     NotebookEdit = "notebook_path" }

-- Command substitutions nested deeper than this are refused rather than read.
local MAX_DEPTH = 32
local TOO_DEEP = {}

-- A file path longer than Linux's PATH_MAX names no file a tool can write.
local MAX_PATH = 4096

-- ------------------------------------------------------------- patterns

-- The literal pieces of a glob between its unescaped `*`s (`\*` is a
-- star, `\\` a backslash): { "git push", "" } for "git push*".
local function chunks(text)
  local list, cur, i = {}, {}, 1
  while i <= #text do
    local c = text:sub(i, i)
    if c == "\\" and i < #text then
      cur[#cur + 1] = text:sub(i + 1, i + 1)
      i = i + 2
    else
      if c == "*" then
        list[#list + 1] = table.concat(cur)
        cur = {}
      else
        cur[#cur + 1] = c
      end
      i = i + 1
    end
  end
  list[#list + 1] = table.concat(cur)
  return list
end

-- Whether `s` matches the glob split into `ch`, where a star stands for any
-- run of characters.  The pieces between stars have fixed lengths, so
-- taking each at its leftmost place is enough.
local function glob(ch, s)
  local first, last = ch[1], ch[#ch]
  if #ch == 1 then return s == first end
  if #s < #first + #last or s:sub(1, #first) ~= first or s:sub(#s - #last + 1) ~= last then
    return false
  end
  local pos, stop = #first + 1, #s - #last
  for k = 2, #ch - 1 do
    if ch[k] ~= "" then
      local a, b = s:find(ch[k], pos, true)
      if not a or b > stop then return false end
      pos = b + 1
    end
  end
  return true
end

-- ------------------------------------------------------ reading commands

-- The characters that end a run of plain word text.
local SPECIAL = "[%s\\'\"$`;&|()<>#]"

local read, dquoted, arithmetic

-- The text of a backquoted command starting at `i` (after the opening
-- backquote), with its backslashes undone, and the index after it.
local function backquoted(s, i)
  local j = i
  while true do
    local k = s:find("[\\`]", j)
    if not k then return s:sub(i), #s + 1 end
    if s:sub(k, k) == "`" then return (s:sub(i, k - 1):gsub("\\([\\`$])", "%1")), k + 1 end
    j = k + 2
  end
end

-- The index after the parenthesis closing the one before `i`, counting
-- parentheses only (an arithmetic $(( ... )) holds no commands).
local function balanced(s, i)
  local depth = 1
  while true do
    local k = s:find("[()]", i)
    if not k then return #s + 1 end
    depth = depth + (s:sub(k, k) == "(" and 1 or -1)
    if depth == 0 then return k + 1 end
    i = k + 1
  end
end

-- The commands inside `text`'s $(...) and backquotes, where nothing else
-- counts (the body of a here-document whose delimiter is not quoted).
local function expansions(text, out, depth)
  local i = 1
  while true do
    local j = text:find("[$`\\]", i)
    if not j then return end
    local c = text:sub(j, j)
    if c == "\\" then
      i = j + 2
    elseif c == "`" then
      local inner, k = backquoted(text, j + 1)
      read(inner, 1, nil, out, depth + 1)
      i = k
    elseif text:sub(j + 1, j + 2) == "((" then
      i = arithmetic(text, j + 1, out, depth)
    elseif text:sub(j + 1, j + 1) == "(" then
      i = read(text, j + 2, ")", out, depth + 1)
    else
      i = j + 1
    end
  end
end

-- An arithmetic expansion whose `((` opens at `i`: the index after it.
-- It may hold command substitutions, whose commands go to `out`.
function arithmetic(s, i, out, depth)
  local e = balanced(s, i + 1)
  expansions(s:sub(i + 2, e - 1), out, depth)
  return e
end

local dollar

local function ignore() end

-- A parameter expansion whose text starts at `i` (after "${"): the index
-- after its closing brace.  A word in it (${x:-word}) may hold command
-- substitutions, whose commands go to `out`; a single quote quotes unless
-- the expansion is inside double quotes (`dq`).
local function braced(s, i, out, depth, dq)
  while true do
    local k = s:find("[\\'\"`$}]", i)
    if not k then return #s + 1 end
    local c = s:sub(k, k)
    if c == "}" then
      return k + 1
    elseif c == "\\" then
      i = k + 2
    elseif c == "'" then
      i = dq and k + 1 or (s:find("'", k + 1, true) or #s) + 1
    elseif c == '"' then
      i = dquoted(s, k, ignore, out, depth)
    elseif c == "`" then
      local inner, e = backquoted(s, k + 1)
      read(inner, 1, nil, out, depth + 1)
      i = e
    else
      i = dollar(s, k, out, depth, dq)
    end
  end
end

-- A $-expansion at `i` (s:sub(i, i) == "$"), inside double quotes when
-- `dq`: the index after it.  The commands of the substitutions in it go
-- to `out`.
function dollar(s, i, out, depth, dq)
  if depth > MAX_DEPTH then error(TOO_DEEP) end
  local c2 = s:sub(i + 1, i + 1)
  if c2 == "(" then
    if s:sub(i + 2, i + 2) == "(" then return arithmetic(s, i + 1, out, depth) end
    return read(s, i + 2, ")", out, depth + 1)
  elseif c2 == "{" then
    return braced(s, i + 2, out, depth + 1, dq)
  end
  return i + 1
end

-- A double-quoted string opening at `i`: the index after it; its text
-- goes to piece(), its substitutions' commands to `out`.
function dquoted(s, i, piece, out, depth)
  local k = i + 1
  while true do
    local j = s:find('[\\"$`]', k)
    if not j then
      piece(s:sub(k), i)
      return #s + 1
    end
    if j > k then piece(s:sub(k, j - 1), i) end
    local c = s:sub(j, j)
    if c == '"' then
      piece("", i)
      return j + 1
    elseif c == "\\" then
      local d = s:sub(j + 1, j + 1)
      if d ~= "\n" then piece(d:find('[\\"$`]') and d or "\\" .. d, i) end
      k = j + 2
    elseif c == "`" then
      local inner, e = backquoted(s, j + 1)
      read(inner, 1, nil, out, depth + 1)
      piece(s:sub(j, e - 1), i)
      k = e
    else
      local e = dollar(s, j, out, depth, true)
      piece(s:sub(j, e - 1), i)
      k = e
    end
  end
end

local ESCAPES = { a = "\a", b = "\b", e = "\27", E = "\27", f = "\f", n = "\n", r = "\r", t = "\t",
                  v = "\v", ["\\"] = "\\", ["'"] = "'", ['"'] = '"', ["?"] = "?" }

-- The text of a $'...' string, its backslash escapes undone as bash does:
-- $'\x67it' is git.
local function ansi_c(text)
  local out, i = {}, 1
  while true do
    local j = text:find("\\", i, true)
    out[#out + 1] = text:sub(i, (j or 0) - 1)
    if not j then return table.concat(out) end
    local c = text:sub(j + 1, j + 1)
    local oct = text:match("^[0-7][0-7]?[0-7]?", j + 1)
    local hex = (c == "x" and text:match("^%x%x?", j + 2)) or (c == "u" and text:match("^%x%x?%x?%x?", j + 2))
      or (c == "U" and text:match("^" .. ("%x?"):rep(8), j + 2))
    if oct then
      out[#out + 1], i = string.char(tonumber(oct, 8) % 256), j + 1 + #oct
    elseif hex and hex ~= "" then
      local n = tonumber(hex, 16)
      out[#out + 1], i = c == "x" and string.char(n) or utf8.char(math.min(n, 0x10FFFF)), j + 2 + #hex
    elseif c == "c" and j + 2 <= #text then
      out[#out + 1], i = string.char(text:byte(j + 2) % 32), j + 3
    else
      out[#out + 1], i = ESCAPES[c] or "\\" .. c, j + 2
    end
  end
end

-- A here-document operator at `i` (after "<<"): its delimiter, whether
-- tabs are stripped and whether it was quoted, and the index after it.
local function heredoc(s, i)
  local strip = s:sub(i, i) == "-"
  if strip then i = i + 1 end
  i = s:find("[^ \t]", i) or #s + 1
  local e = s:find("[%s;&|()<>]", i) or #s + 1
  local word = s:sub(i, e - 1)
  local delim = word:gsub("[\\'\"]", "")
  return { delim = delim, strip = strip, quoted = delim ~= word }, e
end

-- Skip the bodies of the pending here-documents from `i` (the start of a
-- line); an unquoted one may run commands through $(...) or backquotes.
local function bodies(s, i, pending, out, depth)
  for _, h in ipairs(pending) do
    local lines = {}
    while i <= #s do
      local e = s:find("\n", i, true) or #s + 1
      local line = s:sub(i, e - 1)
      i = e + 1
      if (h.strip and line:gsub("^\t+", "") or line) == h.delim then break end
      lines[#lines + 1] = line
    end
    if not h.quoted then expansions(table.concat(lines, "\n"), out, depth) end
  end
  return i
end

-- Read the command line `s` from `i` to its end, or to the unmatched `)`
-- when `closer` is ")" (inside a $(...)).  Each simple command, as a list
-- of words { raw = as written, val = with quotes and escapes undone },
-- is appended to `out`, and those inside its substitutions to `inner`
-- (default `out`); the index after the end is returned.
function read(s, i, closer, out, depth, inner)
  if depth > MAX_DEPTH then error(TOO_DEEP) end
  inner = inner or out
  local n = #s
  local words, word, start = {}, nil, nil
  local parens, pending = 0, {}

  local function piece(v, at)
    if not word then word, start = {}, at end
    word[#word + 1] = v
  end
  local function end_word(at)
    if word then
      words[#words + 1] = { raw = s:sub(start, at - 1), val = table.concat(word) }
      word = nil
    end
  end
  local function end_command(at)
    end_word(at)
    if #words > 0 then out[#out + 1] = words end
    words = {}
  end

  while i <= n do
    local j = s:find(SPECIAL, i)
    if not j then
      piece(s:sub(i), i)
      i = n + 1
      break
    end
    if j > i then piece(s:sub(i, j - 1), i) end
    i = j
    local c, c2 = s:sub(i, i), s:sub(i + 1, i + 1)
    if c == "\n" then
      end_command(i)
      i = bodies(s, i + 1, pending, inner, depth)
      pending = {}
    elseif c:find("%s") then
      end_word(i)
      i = i + 1
    elseif c == "\\" then
      if c2 ~= "\n" then piece(c2, i) end
      i = i + 2
    elseif c == "'" then
      local k = s:find("'", i + 1, true) or n + 1
      piece(s:sub(i + 1, k - 1), i)
      i = k + 1
    elseif c == '"' then
      i = dquoted(s, i, piece, inner, depth)
    elseif c == "`" then
      local text, k = backquoted(s, i + 1)
      read(text, 1, nil, inner, depth + 1)
      piece(s:sub(i, k - 1), i)
      i = k
    elseif c == "$" then
      local k
      if c2 == "'" then
        -- $'...': a backslash may escape the closing quote.
        k = i + 2
        repeat
          local q = s:find("[\\']", k)
          k = q and (s:sub(q, q) == "\\" and q + 2 or q + 1) or n + 1
        until not q or s:sub(q, q) == "'"
        piece(ansi_c(s:sub(i + 2, k - 2)), i)
      elseif c2 == '"' then
        -- $"..." is a double-quoted string (translated by the locale).
        piece("", i)
        k = dquoted(s, i + 1, piece, inner, depth)
      else
        k = dollar(s, i, inner, depth)
        piece(s:sub(i, k - 1), i)
      end
      i = k
    elseif c == "#" and not word then
      i = s:find("\n", i, true) or n + 1
    elseif c == "#" then
      piece("#", i)
      i = i + 1
    elseif (c == "<" or c == ">") and c2 == "(" and not word then
      local k = read(s, i + 2, ")", inner, depth + 1)
      piece(s:sub(i, k - 1), i)
      i = k
    elseif c == "<" and c2 == "<" and s:sub(i + 2, i + 2) ~= "<" then
      local h, k = heredoc(s, i + 2)
      pending[#pending + 1] = h
      piece(s:sub(i, k - 1), i)
      i = k
    elseif c == "<" or c == ">" then
      -- A redirection stays in the command's text; in >& and <& the &
      -- belongs to it.
      piece(c, i)
      i = i + 1
      if s:sub(i, i) == "&" then
        piece("&", i)
        i = i + 1
      end
    elseif c == "&" and c2 == ">" then
      piece("&>", i)
      i = i + 2
    elseif c == "(" then
      end_command(i)
      parens = parens + 1
      i = i + 1
    elseif c == ")" then
      end_command(i)
      if parens == 0 and closer == ")" then return i + 1 end
      parens = math.max(parens - 1, 0)
      i = i + 1
    else -- ; & |
      end_command(i)
      i = i + 1
    end
  end
  end_command(i)
  return n + 1
end

-- The simple commands of a command line, those inside its substitutions
-- too unless `inner` takes them, or nil when it nests substitutions too
-- deep to read.
local function commands(line, inner)
  local out = {}
  local ok, err = pcall(read, line, 1, nil, out, 0, inner)
  if ok then return out end
  if err == TOO_DEEP then return nil end
  error(err, 0)
end

-- ----------------------------------------------------- forms of a command

-- Words that open or close a compound command: what follows them runs.
local RESERVED = { ["!"] = true, ["{"] = true, ["}"] = true, ["if"] = true, ["then"] = true,
                   ["else"] = true, ["elif"] = true, ["fi"] = true, ["do"] = true, ["done"] = true,
                   ["while"] = true, ["until"] = true, ["esac"] = true }
-- Words that open a line which runs nothing itself.
local HEADERS = { ["for"] = true, ["select"] = true, ["case"] = true }

local ASSIGNMENT = "^[%a_][%w_]*%+?="

-- Commands that run the command after their options: the short options
-- that take the next word as their value, the long ones likewise, and
-- whether an operand comes before the command (timeout's duration).
local WRAPPERS = {
  sudo = { short = "CDghpRrTtUu", long = { user = true, group = true, chdir = true, host = true,
           prompt = true, role = true, type = true, ["other-user"] = true, ["close-from"] = true,
           ["command-timeout"] = true } },
  doas = { short = "Cu", long = {} },
  env = { short = "uCS", long = { unset = true, chdir = true, ["split-string"] = true }, assignments = true,
          split = true },
  command = { short = "", long = {} },
  builtin = { short = "", long = {} },
  exec = { short = "a", long = {} },
  nohup = { short = "", long = {} },
  time = { short = "fo", long = { format = true, output = true } },
  nice = { short = "n", long = { adjustment = true } },
  timeout = { short = "sk", long = { signal = true, ["kill-after"] = true }, operand = true },
}

local function basename(w) return w:match("([^/]*)$") end

-- The command line that `env -S LINE` (--split-string) runs, when words[k]
-- is that option.
local function split_string(words, k)
  local v = words[k].val
  if v == "-S" or v == "--split-string" then return words[k + 1] and words[k + 1].val end
  return v:match("^%-S(.+)") or v:match("^%-%-split%-string=(.*)")
end

-- The index of the command a wrapper at words[k] runs; the command lines
-- given to its options (env -S) are appended to `lines`.
local function after_wrapper(words, k, lines)
  local w = WRAPPERS[basename(words[k].val)]
  k = k + 1
  while words[k] do
    local v = words[k].val
    lines[#lines + 1] = w.split and split_string(words, k) or nil
    if v == "--" then
      k = k + 1
      break
    elseif v:sub(1, 2) == "--" then
      k = k + ((not v:find("=", 1, true) and w.long[v:sub(3)]) and 2 or 1)
    elseif v:sub(1, 1) == "-" and #v > 1 then
      k = k + ((#v == 2 and w.short:find(v:sub(2), 1, true)) and 2 or 1)
    elseif w.assignments and v:find(ASSIGNMENT) then
      k = k + 1
    else
      break
    end
  end
  if w.operand and words[k] then k = k + 1 end
  return k
end

local function joined(words, k, key, first)
  local parts = { first or words[k][key] }
  for m = k + 1, #words do parts[#parts + 1] = words[m][key] end
  return table.concat(parts, " ")
end

local forms

-- Append to `texts` the forms of each command of the command lines
-- `lines` (those a wrapper's option runs).
local function line_forms(lines, texts)
  for _, line in ipairs(lines) do
    for _, words in ipairs(commands(line) or {}) do
      for _, t in ipairs(forms(words, true) or {}) do texts[#texts + 1] = t end
    end
  end
end

-- The texts a simple command is matched as, and the text a message shows;
-- nil when it runs nothing (`fi`, a `for` line).  Each form is the words
-- from some point on, as written and with the quotes undone, joined by
-- single spaces: from the first word that is no keyword and, when
-- `unwrap` (for a deny list, where more forms refuse more), after each
-- leading assignment (FOO=1), after each wrapper (sudo, env, ...), with
-- the program named without its folder, and the commands a wrapper's
-- option runs (env -S).  An allow list matches the command as written:
-- PATH=... or sudo before an allowed command changes what runs.
function forms(words, unwrap)
  local k = 1
  while words[k] do
    if RESERVED[words[k].val] then
      k = k + 1
    elseif words[k].val == "coproc" then
      -- coproc runs the rest in the background, as does coproc NAME { ...; }.
      k = k + ((words[k + 2] and words[k + 2].val == "{") and 2 or 1)
    else
      break
    end
  end
  if not words[k] or HEADERS[words[k].val] then return nil end
  local shown = joined(words, k, "raw")
  local texts, lines = {}, {}
  while words[k] do
    texts[#texts + 1] = joined(words, k, "raw")
    texts[#texts + 1] = joined(words, k, "val")
    if not unwrap then break end
    local v = words[k].val
    if v:find("/", 1, true) then
      texts[#texts + 1] = joined(words, k, "val", basename(v))
    end
    if v:find(ASSIGNMENT) then
      k = k + 1
    elseif WRAPPERS[basename(v)] then
      k = after_wrapper(words, k, lines)
    else
      break
    end
  end
  line_forms(lines, texts)
  return texts, shown
end

local function any_match(rules, texts)
  for _, r in ipairs(rules) do
    for _, t in ipairs(texts) do
      if glob(r.chunks, t) then return r end
    end
  end
  return nil
end

-- ------------------------------------------------------------------ paths

-- The segments of an absolute path, with `.` and `..` resolved as text
-- (symbolic links are not followed).
local function segments(path)
  local segs = {}
  for seg in path:gmatch("[^/]+") do
    if seg == ".." then
      segs[#segs] = nil
    elseif seg ~= "." then
      segs[#segs + 1] = seg
    end
  end
  return segs
end

-- A path pattern: its segments (`**` alone, or a glob within one segment),
-- whether it is absolute, and how many leading `..` climb out of the
-- directory a relative one is read in.  nil and why when it can never
-- match: a `..` after a wildcard names no one place.
local function path_rule(p)
  local home = os.getenv("HOME")
  if home and (p == "~" or p:sub(1, 2) == "~/") then p = home .. p:sub(2) end
  local rule = { absolute = p:sub(1, 1) == "/", up = 0, segs = {} }
  for seg in p:gmatch("[^/]+") do
    local segs = rule.segs
    if seg == ".." then
      if #segs == 0 then
        if not rule.absolute then rule.up = rule.up + 1 end
      elseif segs[#segs].wild then
        return nil, "a .. after a wildcard names no one folder"
      else
        segs[#segs] = nil
      end
    elseif seg == "**" then
      segs[#segs + 1] = { any = true, wild = true }
    elseif seg ~= "." then
      local ch = chunks(seg)
      segs[#segs + 1] = { chunks = ch, wild = #ch > 1 }
    end
  end
  return rule
end

-- Whether the pattern segments `ps` match the path segments `path`, or a
-- leading part of them (a folder that holds the path).  From the last
-- pattern segment to the first, ok[b] says whether the segments from
-- there on match path[b] and after.
local function path_match(ps, path)
  local n, ok = #path, {}
  for b = 1, n + 1 do ok[b] = true end
  for a = #ps, 1, -1 do
    local seg, cur = ps[a], {}
    if seg.any then
      cur[n + 1] = ok[n + 1]
      for b = n, 1, -1 do cur[b] = ok[b] or cur[b + 1] end
    else
      cur[n + 1] = false
      for b = 1, n do cur[b] = ok[b + 1] and glob(seg.chunks, path[b]) end
    end
    ok = cur
  end
  return ok[1]
end

-- The rule's segments with a relative pattern placed in the folder whose
-- segments are `base`.
local function placed(rule, base)
  if rule.absolute then return rule.segs end
  local segs = {}
  for k = 1, #base - rule.up do segs[#segs + 1] = { chunks = { base[k] } } end
  for _, seg in ipairs(rule.segs) do segs[#segs + 1] = seg end
  return segs
end

-- ------------------------------------------------------------------ rules

local function describe(v)
  if type(v) ~= "table" then return type(v) end
  return (next(v) == nil or v[1] ~= nil) and "a list" or "a mapping"
end

-- One pattern of `field`, compiled, or raises saying what is wrong.
local function compile(field, p)
  if type(p) ~= "string" then
    error(string.format("%s holds %s, not a pattern (write each pattern as a string, "
      .. "quoted if it holds a colon or starts with * or [)", field, describe(p)), 0)
  end
  local text = trim(p)
  if text == "" then
    error(string.format("%s holds an empty pattern, which matches nothing", field), 0)
  end
  local r = { text = text }
  if field == "protect_paths" then
    local why
    r.path, why = path_rule(text)
    if not r.path then
      error(string.format('%s pattern "%s" can never match: %s', field, text, why), 0)
    end
  else
    text = text:gsub("%s+", " ")
    local parts = commands(text, {})
    if not parts or #parts ~= 1 then
      error(string.format('%s pattern "%s" can never match: a command line is split at ;, &, |, '
        .. "&&, || and line ends, and each command is matched alone; give each its own pattern",
        field, r.text), 0)
    end
    r.chunks = chunks(text)
  end
  return r
end

-- The compiled patterns of one field's list, or raises saying what is wrong.
local function field_rules(field, list)
  if type(list) ~= "table" or describe(list) == "a mapping" then
    error(string.format("%s must be a list of patterns, got %s", field, describe(list)), 0)
  end
  local compiled = {}
  for i, p in ipairs(list) do compiled[i] = compile(field, p) end
  return compiled
end

-- The state's rules { deny_commands = {...}, ... } (a field not given is
-- nil), or nil when it sets none; raises naming the state and the field
-- when one is not a list of patterns.
local function rules(ev)
  local fm = ev.frontmatter
  if type(fm) ~= "table" then return nil end
  local found
  for _, field in ipairs(FIELDS) do
    if fm[field] ~= nil then
      local ok, v = pcall(field_rules, field, fm[field])
      if not ok then error(string.format("%s: %s", tostring(ev.state), v), 0) end
      found = found or {}
      found[field] = v
    end
  end
  return found
end

-- ------------------------------------------------------------- decisions

local function deny(reason)
  return { permissionDecision = "deny", permissionDecisionReason = reason }
end

-- At most `max` bytes of `s`, cut at a character's start.
local function clip(s, max)
  if #s <= max then return s end
  local k = max + 1
  while k > 1 and s:byte(k) >= 0x80 and s:byte(k) < 0xC0 do k = k - 1 end
  return s:sub(1, k - 1) .. "..."
end

local function quoted(list)
  local t = {}
  for i, r in ipairs(list) do t[i] = '"' .. r.text .. '"' end
  return table.concat(t, ", ")
end

local function check_command(r, state, line)
  if type(line) ~= "string" then
    return deny(string.format("the Bash call has no command, so the rules of %s cannot pass it", state))
  end
  local list = commands(line)
  if not list then
    return deny(string.format("the command nests command substitutions more than %d deep, "
      .. "too deep for the rules of %s to read", MAX_DEPTH, state))
  end
  for _, words in ipairs(list) do
    local texts, shown = forms(words, true)
    local hit = texts and any_match(r.deny_commands or {}, texts)
    if hit then
      return deny(string.format('deny_commands rule "%s" of %s forbids: %s', hit.text, state, clip(shown, 300)))
    end
  end
  local allow = r.allow_commands
  if not allow then return nil end
  for _, words in ipairs(list) do
    local texts, shown = forms(words, false)
    if texts and not any_match(allow, texts) then
      if #allow == 0 then
        return deny(string.format("allow_commands of %s is empty, so no command may run: %s", state,
          clip(shown, 300)))
      end
      return deny(string.format("allow_commands of %s do not include: %s; allowed: %s", state,
        clip(shown, 300), quoted(allow)))
    end
  end
  return nil
end

local function absolute(dir)
  return type(dir) == "string" and dir:sub(1, 1) == "/" and dir or nil
end

-- Check the write of `tool` to `path`, a relative one being where the model
-- is (`cwd`), against patterns placed in the agent's folder `home`.
local function check_path(r, state, tool, path, cwd, home)
  if type(path) ~= "string" or path == "" then
    return deny(string.format("the %s call names no file, so protect_paths of %s cannot pass it", tool, state))
  end
  if #path > MAX_PATH then
    return deny(string.format("the %s call's path is longer than %d bytes; protect_paths of %s refuses it",
      tool, MAX_PATH, state))
  end
  if not cwd then
    return deny(string.format("the %s event has no cwd to place protect_paths of %s in, so it is refused",
      tool, state))
  end
  local full = segments(path:sub(1, 1) == "/" and path or cwd .. "/" .. path)
  local base = segments(home)
  for _, rule in ipairs(r.protect_paths) do
    if path_match(placed(rule.path, base), full) then
      local shown = "/" .. table.concat(full, "/")
      local top = "/" .. table.concat(base, "/")
      if shown:sub(1, #top + 1) == top .. "/" then shown = shown:sub(#top + 2) end
      return deny(string.format('protect_paths rule "%s" of %s forbids %s to: %s', rule.text, state, tool,
        clip(shown, 300)))
    end
  end
  return nil
end

return {
  frontmatter = { deny_commands = "list", allow_commands = "list", protect_paths = "list" },

  -- The tools this state's rules look at; nil when it sets none, so a
  -- state without them pays nothing.
  tools = function(ev)
    local r = rules(ev)
    if not r then return nil end
    local t = {}
    if (r.deny_commands and #r.deny_commands > 0) or r.allow_commands then t[#t + 1] = "Bash" end
    if r.protect_paths and #r.protect_paths > 0 then t[#t + 1] = "Edit|Write|MultiEdit|NotebookEdit" end
    return t[1] and t or nil
  end,

  PreToolUse = function(ev)
    local r = rules(ev)
    if not r then return nil end
    local input = type(ev.tool_input) == "table" and ev.tool_input or {}
    local state = tostring(ev.state)
    if ev.tool_name == "Bash" and (r.deny_commands or r.allow_commands) then
      return check_command(r, state, input.command)
    end
    local key = PATH_TOOLS[ev.tool_name]
    if key and r.protect_paths and #r.protect_paths > 0 then
      -- Claude Code's cwd follows the model's `cd`; the patterns stay
      -- where the agent's state runs.
      local home = absolute(type(ev.agent) == "table" and ev.agent.cwd or nil)
      local cwd = absolute(ev.cwd) or home
      return check_path(r, state, ev.tool_name, input[key], cwd, home or cwd)
    end
    return nil
  end,
}
