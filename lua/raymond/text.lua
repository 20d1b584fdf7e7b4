-- raymond.text: small string helpers the engine shares.

local M = {}

-- `s` without leading and trailing white space.  Linear in #s: the usual
-- gsub("%s+$", "") retries the run of spaces at every position of a
-- string full of them, which is quadratic.
function M.trim(s)
  s = tostring(s)
  local i = s:find("%S")
  if not i then return "" end
  local j = #s
  while s:find("^%s", j) do j = j - 1 end
  return s:sub(i, j)
end

-- The keys of mapping `t` in the order of their lines, where `lines` is
-- the line table raymond.yaml returns beside a document (lines[t][key]).
function M.keys_by_line(t, lines)
  local keys = {}
  for key in pairs(lines[t] or {}) do keys[#keys + 1] = key end
  table.sort(keys, function(a, b) return lines[t][a] < lines[t][b] end)
  return keys
end

-- `s` as one word for a POSIX shell: single-quoted, each ' written '\''.
function M.sh_quote(s)
  return "'" .. tostring(s):gsub("'", "'\\''") .. "'"
end

-- An amount of dollars as raymond shows it everywhere: "$0.5000"; nil
-- is nothing spent.
function M.usd(x) return string.format("$%.4f", x or 0) end

-- The number of single-letter edits (insert, delete, change) from a to b.
function M.distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      local change = prev[j - 1] + (a:byte(i) == b:byte(j) and 0 or 1)
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, change)
    end
    prev = cur
  end
  return prev[#b]
end

-- Whether `s` is printable text of at most `max` characters: UTF-8
-- without control characters (C0, DEL, C1), which would reach a terminal
-- as commands.  nil and why not otherwise.
function M.printable_text(s, max)
  local n = utf8.len(s)
  if not n then return nil, "must be UTF-8 text" end
  if n == 0 then return nil, "is empty" end
  if n > max then return nil, string.format("is %d characters long; at most %d are allowed", n, max) end
  local i = 0
  for _, c in utf8.codes(s) do
    i = i + 1
    if c < 32 or (c >= 127 and c < 160) then
      return nil, string.format("holds a control character (U+%04X, character %d); only printable text is allowed",
        c, i)
    end
  end
  return true
end

return M
