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

return M
