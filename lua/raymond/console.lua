-- raymond.console: what a person watching the run reads.
--
-- Progress and errors go to stderr, so stdout carries only the workflow's
-- own output: <print> text as it arrives, and the final <result> of the
-- main agent.  --quiet silences progress; errors and warnings always show.
--
-- Much of what is shown comes from a model or a child (its text, the
-- names it chose, the output an error quotes), so everything written to
-- stderr has its control characters shown rather than obeyed
-- (raymond.printable, src/termsafe.h).  The result on stdout is shown so
-- on a terminal, and kept byte for byte when stdout is a pipe or a file:
-- there it is data for a program (`$(raymond wf)`), which must get the
-- payload exactly.

local raymond = require("raymond")

local M = { quiet = false }

-- Write to stderr, untrusted text made safe to show.
local function say(text)
  raymond.stderr(raymond.printable(text))
end
M.say = say

local function rel(path, cwd)
  if cwd and path:sub(1, #cwd + 1) == cwd .. "/" then return path:sub(#cwd + 2) end
  return path
end
M.rel = rel

function M.progress(fmt, ...)
  if M.quiet then return end
  say(string.format(fmt, ...) .. "\n")
end

function M.warn(fmt, ...)
  say("raymond: warning: " .. string.format(fmt, ...) .. "\n")
end

-- An error: one line saying what and where, then indented detail lines,
-- then a hint saying how to fix it.
function M.error(msg, detail, hint)
  local out = { "raymond: error: " .. msg }
  if detail and detail ~= "" then
    for line in detail:gmatch("[^\n]+") do out[#out + 1] = "  | " .. line end
  end
  if hint then out[#out + 1] = "hint: " .. hint end
  say(table.concat(out, "\n") .. "\n")
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

-- <print> text of a reply as raymond.parse_tags returns it: already made
-- safe to show and ended by a newline per print, as a script's is.
function M.print(text)
  if text ~= "" then raymond.stdout(text) end
end

function M.result(payload)
  if payload == nil or payload == "" then return end
  if raymond.isatty("stdout") then payload = raymond.printable(payload) end
  raymond.stdout(payload:sub(-1) == "\n" and payload or payload .. "\n")
end

return M
