-- raymond.console: what a person watching the run reads.
--
-- Progress and errors go to stderr, so stdout carries only the workflow's
-- own output: <print> text as it arrives, and the final <result> of the
-- main agent.  --quiet silences progress; errors and warnings always show.

local raymond = require("raymond")

local M = { quiet = false }

local function rel(path, cwd)
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end
M.rel = rel

function M.progress(fmt, ...)
  if M.quiet then return end
  raymond.stderr(string.format(fmt, ...) .. "\n")
end

function M.warn(fmt, ...)
  raymond.stderr("raymond: warning: " .. string.format(fmt, ...) .. "\n")
end

-- An error: one line saying what and where, then indented detail lines,
-- then a hint saying how to fix it.
function M.error(msg, detail, hint)
  local out = { "raymond: error: " .. msg }
  if detail and detail ~= "" then
    for line in detail:gmatch("[^\n]+") do out[#out + 1] = "  | " .. line end
  end
  if hint then out[#out + 1] = "hint: " .. hint end
  raymond.stderr(table.concat(out, "\n") .. "\n")
end

-- The last `n` non-empty lines of `text`.
function M.tail(text, n)
  local lines = {}
  for line in (text or ""):gmatch("[^\n]+") do
    lines[#lines + 1] = line
    if #lines > n then table.remove(lines, 1) end
  end
  return table.concat(lines, "\n")
end

-- <print> text of a reply, already ended by a newline per print.
function M.print(text)
  if text ~= "" then raymond.stdout(text) end
end

function M.result(payload)
  if payload == nil or payload == "" then return end
  raymond.stdout(payload:sub(-1) == "\n" and payload or payload .. "\n")
end

return M
